"""Errors instead of deaths: a computation larger than the device's memory raises and the
process lives on; complex tensors compute (against eager on the CPU)."""

import pytest
import torch

import torch_xla.core.xla_model as xm

DEV = xm.xla_device()


def test_a_computation_larger_than_memory_raises_and_the_process_lives_on():
  huge = torch.zeros(10**11, device=DEV) + 1  # 400 GB of float32
  with pytest.raises(RuntimeError, match=r'Out of memory: the computation needs 400000000000 bytes on the \w+ '
                     r'device \(its results and temporaries\), \d+ of its \d+ bytes are free'):
    xm.mark_step()
  del huge
  xm.mark_step()  # nothing of it is pending any more
  assert (torch.ones(3, device=DEV) * 2).cpu().tolist() == [2.0] * 3


def complex_values(seed, shape=(4, 3)):
  g = torch.Generator().manual_seed(seed)
  return torch.complex(torch.randn(shape, generator=g), torch.randn(shape, generator=g))


COMPLEX_CASES = {
    'complex': lambda a, b: torch.complex(a.real, b.imag),
    'polar': lambda a, b: torch.polar(a.abs(), b.real),
    'add': lambda a, b: a + b,
    'mul': lambda a, b: a * b,
    'mul_scalar': lambda a, b: a * 2.5,
    'mul_imaginary': lambda a, b: a * 1j,
    'add_complex_scalar': lambda a, b: a + (1 - 2j),
    'full': lambda a, b: torch.full((2, 3), 1 + 2j, dtype=a.dtype, device=a.device),
    'div': lambda a, b: a / b,
    'abs': lambda a, b: a.abs(),
    'real_imag': lambda a, b: a.real * 2 + b.imag,
    'angle': lambda a, b: torch.angle(a),
    'conj_mul': lambda a, b: a.conj() * b,
    'exp': lambda a, b: torch.exp(a),
    'matmul': lambda a, b: a @ b.transpose(0, 1),
    'sum': lambda a, b: a.sum(0),
    'fft': lambda a, b: torch.fft.fft(a),
    'rfft': lambda a, b: torch.fft.rfft(a.real),
    'hfft': lambda a, b: torch.fft.hfft(a),
    'ihfft': lambda a, b: torch.fft.ihfft(a.real),
}


@pytest.mark.parametrize('name', sorted(COMPLEX_CASES))
@pytest.mark.parametrize('dtype', [torch.complex64, torch.complex128])
def test_complex_ops_match_eager(name, dtype):
  fn = COMPLEX_CASES[name]
  a, b = complex_values(1).to(dtype), complex_values(2).to(dtype)
  expected = fn(a, b)
  got = fn(a.to(DEV), b.to(DEV))
  assert got.device == DEV and got.dtype == expected.dtype and got.shape == expected.shape
  tol = 1e-5 if dtype == torch.complex64 else 1e-10
  torch.testing.assert_close(got.cpu(), expected, rtol=tol, atol=tol)
