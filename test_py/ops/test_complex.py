"""Complex numbers on the device against eager CPU: construction (complex, polar,
view_as_complex), parts (view_as_real, real, imag, angle), conjugation, sgn, gradients,
element-wise ops, products, sums and FFTs of complex64 and complex128 tensors; bad input
raises."""

import pytest
import torch

from testing.op_testing import DEV, assert_same, check, check_grad, ids, make


def complex_input(shape, seed=0, dtype=torch.complex64):
  part = torch.float32 if dtype == torch.complex64 else torch.float64
  return torch.complex(make(shape, part, seed=seed), make(shape, part, seed=seed + 100))


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64], ids=ids)
def test_complex_and_polar(dtype):
  a, b = make((3, 4), dtype, seed=1), make((4,), dtype, seed=2)
  check(torch.complex, a, b, ops=['complex'])
  check(torch.polar, a.abs(), b, ops=['polar'], rtol=1e-5, atol=1e-5)


def test_complex_gradients():
  check_grad(lambda a, b: torch.complex(a, b).abs(), make((3, 4), torch.float32, 'nonzero', seed=1),
             make((3, 4), torch.float32, seed=2), rtol=1e-5, atol=1e-5)
  check_grad(lambda a, b: torch.view_as_real(torch.polar(a, b)), make((3, 4), torch.float32, 'pos', seed=1),
             make((3, 4), torch.float32, seed=2), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.float64, torch.int64, torch.bool,
                                   torch.complex64], ids=ids)
def test_angle(dtype):
  x = complex_input((3, 4)) if dtype.is_complex else make((3, 4), dtype)
  if dtype.is_floating_point:
    x[0, 0], x[0, 1], x[0, 2] = float('nan'), 0.0, -0.0
  check(torch.angle, x, ops=['angle'], rtol=1e-6, atol=1e-6)


def test_parts_and_views():
  z = complex_input((3, 4), seed=4)
  check(lambda t: torch.view_as_real(t) * 1, z, ops=['view_as_real_copy'])
  check(lambda t: t.real * 2 + t.imag, z, ops=['view_as_real_copy'])
  check(lambda t: torch.view_as_complex(t) * 1, make((3, 4, 2), torch.float32), ops=['view_as_complex_copy'])
  check(lambda t: torch.view_as_complex(t) * 1, make((5, 2), torch.float64), ops=['view_as_complex_copy'])


def test_conjugation():
  z = complex_input((3, 4), seed=5)
  check(lambda t: t.conj() * 1, z, ops=['_conj_copy'])
  check(lambda t: t.conj().resolve_conj(), z, ops=['_conj_copy'])
  check(torch.conj_physical, z, ops=['_conj_physical'])
  check(lambda t: t.conj().imag * 1, z, ops=['_conj_copy'])
  check(lambda t: torch._neg_view(t) * 1, z, ops=['_neg_view_copy'])
  x = make((3, 4), torch.float32)
  check(torch.conj_physical, x)  # real: the identity
  check(lambda t: t.conj() + 1, x)


def test_sgn_of_complex():
  z = complex_input((3, 4), seed=6)
  z[0, 0] = 0
  check(torch.sgn, z, ops=['sgn'], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('fn,match', [
    (lambda: torch.complex(torch.ones(2, device=DEV), torch.ones(2, device=DEV, dtype=torch.float64)),
     'complex: expected object of scalar type Float'),
    (lambda: torch.complex(torch.ones(2, device=DEV, dtype=torch.int32), torch.ones(2, device=DEV, dtype=torch.int32)),
     'complex: expected both inputs to be Half, Float or Double'),
    (lambda: torch.view_as_complex(torch.ones(2, 3, device=DEV)), 'last dimension of size 2'),
    (lambda: torch.view_as_real(torch.ones(2, 3, device=DEV)), 'only supported for complex tensors'),
    (lambda: torch.ops.aten._fft_r2c(torch.ones(2, 3, device=DEV, dtype=torch.bfloat16), [1], 0, True),
     '_fft_r2c: expected a float or double input tensor'),
    (lambda: torch.ops.aten._fft_c2c(torch.ones(2, 3, device=DEV), [1], 0, True), '_fft_c2c: expected a complex'),
    (lambda: torch.ops.aten._fft_c2c(complex_input((2, 3)).to(DEV), [1], 3, True), 'invalid normalization mode 3'),
])
def test_bad_input_raises(fn, match):
  with pytest.raises(RuntimeError, match=match):
    fn().cpu()
  assert_same(torch.ones(2, device=DEV) * 2, torch.ones(2) * 2)


# ---- other ops on complex64 and complex128 -----------------------------------

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


# ---- counter cases ------------------------------------------------------------

def _z():
  return complex_input((2, 4)).to(DEV)


COUNTER_CASES = {
    'view_as_real_copy': (lambda: torch.view_as_real(_z()) * 1, 'view_as_real_copy'),
    'view_as_complex_copy': (lambda: torch.view_as_complex(torch.ones(3, 2, device=DEV)) * 1, 'view_as_complex_copy'),
    '_conj_copy': (lambda: _z().conj() * 1, '_conj_copy'),
    '_conj_physical': (lambda: torch.conj_physical(_z()), '_conj_physical'),
    '_neg_view_copy': (lambda: torch._neg_view(_z()) * 1, '_neg_view_copy'),
    'complex': (lambda: torch.complex(torch.ones(2, device=DEV), torch.ones(2, device=DEV)), 'complex'),
    'polar': (lambda: torch.polar(torch.ones(2, device=DEV), torch.ones(2, device=DEV)), 'polar'),
    'angle': (lambda: torch.angle(_z()), 'angle'),
}
