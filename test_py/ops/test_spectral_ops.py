"""The FFTs on the device against eager CPU: torch.fft's transforms (through _fft_c2c,
_fft_r2c, _fft_c2r) over one to four dimensions, each normalization, trimmed and
zero-padded signals, float32 and float64, integer input; stft; gradients.

FFT tolerance: rtol 1e-4 and atol 1e-4 times the largest magnitude of the eager result
(XLA's FFT sums in another order than PocketFFT; the error grows with the magnitude of
the whole transform, not of each entry)."""

import pytest
import torch

from testing.op_testing import DEV, assert_same, check_grad, lowered, make


def complex_input(shape, seed=0, dtype=torch.complex64):
  part = torch.float32 if dtype == torch.complex64 else torch.float64
  return torch.complex(make(shape, part, seed=seed), make(shape, part, seed=seed + 100))


def check_fft(fn, x, ops, rtol=1e-4):
  expected = fn(x)
  with lowered(*ops):
    actual = fn(x.to(DEV))
  atol = rtol * max(float(expected.abs().max()), 1.0)
  assert_same(actual, expected, rtol=rtol, atol=atol)


NORMS = [None, 'forward', 'ortho']

# name -> (function of the input and norm, input kind, lowered ops)
TRANSFORMS = {
    'fft': (lambda x, n: torch.fft.fft(x, norm=n), 'complex', ['_fft_c2c']),
    'fft_real': (lambda x, n: torch.fft.fft(x, norm=n), 'real', ['_fft_r2c']),
    'ifft': (lambda x, n: torch.fft.ifft(x, norm=n), 'complex', ['_fft_c2c']),
    'fft_padded': (lambda x, n: torch.fft.fft(x, n=9, dim=0, norm=n), 'complex', ['_fft_c2c']),
    'fft_trimmed': (lambda x, n: torch.fft.fft(x, n=3, norm=n), 'complex', ['_fft_c2c']),
    'fft2': (lambda x, n: torch.fft.fft2(x, norm=n), 'complex', ['_fft_c2c']),
    'ifft2': (lambda x, n: torch.fft.ifft2(x, s=(5, 4), norm=n), 'complex', ['_fft_c2c']),
    'fftn_all': (lambda x, n: torch.fft.fftn(x, norm=n), 'complex', ['_fft_c2c']),
    'ifftn_dims': (lambda x, n: torch.fft.ifftn(x, dim=(2, 0), norm=n), 'complex', ['_fft_c2c']),
    'rfft': (lambda x, n: torch.fft.rfft(x, norm=n), 'real', ['_fft_r2c']),
    'rfft_odd': (lambda x, n: torch.fft.rfft(x, n=7, dim=1, norm=n), 'real', ['_fft_r2c']),
    'rfft2': (lambda x, n: torch.fft.rfft2(x, norm=n), 'real', ['_fft_r2c']),
    'rfftn_all': (lambda x, n: torch.fft.rfftn(x, norm=n), 'real', ['_fft_r2c']),
    'irfft': (lambda x, n: torch.fft.irfft(x, norm=n), 'complex', ['_fft_c2r']),
    'irfft_odd': (lambda x, n: torch.fft.irfft(x, n=7, norm=n), 'complex', ['_fft_c2r']),
    'irfft2': (lambda x, n: torch.fft.irfft2(x, norm=n), 'complex', ['_fft_c2r']),
    'irfftn_all': (lambda x, n: torch.fft.irfftn(x, norm=n), 'complex', ['_fft_c2r']),
    'hfft': (lambda x, n: torch.fft.hfft(x, norm=n), 'complex', ['_fft_c2r', '_conj_copy']),
    'hfft2': (lambda x, n: torch.fft.hfft2(x, norm=n), 'complex', ['_fft_c2r']),
    'ihfft': (lambda x, n: torch.fft.ihfft(x, norm=n), 'real', ['_fft_r2c']),
    'ihfftn': (lambda x, n: torch.fft.ihfftn(x, norm=n), 'real', ['_fft_r2c']),
}


@pytest.mark.parametrize('norm', NORMS, ids=str)
@pytest.mark.parametrize('name', sorted(TRANSFORMS))
def test_transform(name, norm):
  fn, kind, ops = TRANSFORMS[name]
  x = complex_input((3, 6, 4), seed=1) if kind == 'complex' else make((3, 6, 4), torch.float32, seed=1)
  check_fft(lambda t: fn(t, norm), x, ops)


@pytest.mark.parametrize('name', ['fftn_all', 'rfftn_all', 'irfftn_all', 'ifftn_dims'])
def test_four_dimensions_take_two_passes(name):
  # stablehlo.fft transforms at most three dimensions at a time
  fn, kind, ops = TRANSFORMS[name]
  shape = (2, 3, 4, 5)
  x = complex_input(shape, seed=2) if kind == 'complex' else make(shape, torch.float32, seed=2)
  check_fft(lambda t: fn(t, 'ortho'), x, ops)


@pytest.mark.parametrize('name', ['fft', 'fft_real', 'rfft2', 'irfft', 'hfft'])
def test_transform_float64(name):
  fn, kind, ops = TRANSFORMS[name]
  x = complex_input((4, 6), seed=3, dtype=torch.complex128) if kind == 'complex' else make((4, 6), torch.float64)
  check_fft(lambda t: fn(t, None), x, ops, rtol=1e-10)


def test_fft_of_integers_computes_in_float():
  check_fft(torch.fft.fft, make((5, 4), torch.int64), ['_fft_r2c'])


@pytest.mark.parametrize('name', ['fft', 'rfft', 'irfft', 'fft_complex', 'rfft2_abs', 'hfft', 'stft_abs', 'filter'])
def test_gradients(name):
  f = complex_input((4, 4), seed=3)
  fns = {
      # a convolution through the frequency domain
      'filter': lambda a: torch.fft.irfft(torch.fft.rfft(a) * f.to(a.device), n=6),
      'fft': lambda a: torch.fft.fft(a),
      'rfft': lambda a: torch.fft.rfft(a, norm='ortho'),
      'irfft': lambda a: torch.fft.irfft(torch.fft.fft(a), n=6),
      'fft_complex': lambda a: torch.fft.ifft(torch.complex(a, a.flip(0)), norm='forward'),
      'rfft2_abs': lambda a: torch.fft.rfft2(a).abs(),
      'hfft': lambda a: torch.fft.hfft(torch.complex(a, a * 0.5)),
      'stft_abs': lambda a: torch.stft(a.reshape(-1), 8, hop_length=2, window=torch.hann_window(8, device=a.device),
                                       return_complex=True).abs(),
  }
  check_grad(fns[name], make((4, 6), torch.float32), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('center,onesided,window', [(True, True, True), (False, True, False), (True, False, True)])
def test_stft(center, onesided, window):
  x = make((2, 40), torch.float32)

  def fn(t):
    w = torch.hann_window(10, device=t.device) if window else None
    return torch.stft(t, 10, hop_length=3, window=w, center=center, onesided=onesided, return_complex=True)

  check_fft(fn, x, ['_fft_r2c', 'as_strided_copy'])


# ---- counter cases ------------------------------------------------------------

def _z():
  return complex_input((2, 4)).to(DEV)


COUNTER_CASES = {
    '_fft_c2c': (lambda: torch.fft.fft(_z()), '_fft_c2c'),
    '_fft_r2c': (lambda: torch.fft.rfft(torch.ones(2, 4, device=DEV)), '_fft_r2c'),
    '_fft_c2r': (lambda: torch.fft.irfft(_z()), '_fft_c2r'),
}
