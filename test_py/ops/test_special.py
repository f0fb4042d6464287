"""Special functions (ops_special.cpp) against eager CPU: every branch of each
approximation (small and large arguments, poles, infinities, NaN), in f32 and bf16."""

import pytest
import torch

from testing.op_testing import DEV, check, make

F32 = torch.float32
BF16 = torch.bfloat16
EDGES = [0.0, -0.0, float('inf'), float('-inf'), float('nan')]


def _points(lo, hi, n=61, extra=()):
  """A grid over [lo, hi] plus edge values (random points hit no branch boundary)."""
  return torch.cat([torch.linspace(lo, hi, n), torch.tensor(list(extra) + EDGES)])


WIDE = _points(-30, 30, extra=[1e-6, -1e-6, 0.3, 1.9, 2.0, 2.1, 5.0, 8.0, 8.5, 60.0, 95.0, 110.0])

UNARY = {
    'i0': (torch.i0, WIDE),
    'special_i0e': (torch.special.i0e, WIDE),
    'special_i1': (torch.special.i1, WIDE),
    'special_i1e': (torch.special.i1e, WIDE),
    'special_ndtri': (torch.special.ndtri,
                      torch.cat([torch.linspace(0, 1, 41), torch.tensor([1e-3, 1e-8, 1e-20, 1e-37, 0.9999, -0.1, 1.1,
                                                                          float('nan')])])),
    'special_log_ndtr': (torch.special.log_ndtr, _points(-40, 10, extra=[-1.0, -0.99, 6.0])),
    'special_erfcx': (torch.special.erfcx, _points(-10, 40, extra=[1.99, 2.0, 2.01, 1e8])),
    'special_entr': (torch.special.entr, _points(-2, 5)),
    'special_bessel_j0': (torch.special.bessel_j0, WIDE),
    'special_bessel_j1': (torch.special.bessel_j1, WIDE),
    'special_bessel_y0': (torch.special.bessel_y0, _points(-1, 30, extra=[1e-6, 4.99, 5.01])),
    'special_bessel_y1': (torch.special.bessel_y1, _points(-1, 30, extra=[1e-6, 4.99, 5.01])),
    'special_modified_bessel_i0': (torch.special.modified_bessel_i0, WIDE),
    'special_modified_bessel_i1': (torch.special.modified_bessel_i1, WIDE),
    'special_modified_bessel_k0': (torch.special.modified_bessel_k0, _points(-1, 60, extra=[1e-6, 1.99, 2.01])),
    'special_modified_bessel_k1': (torch.special.modified_bessel_k1, _points(-1, 60, extra=[1e-6, 1.99, 2.01])),
    'special_scaled_modified_bessel_k0': (torch.special.scaled_modified_bessel_k0, _points(-1, 60, extra=[1e-6])),
    'special_scaled_modified_bessel_k1': (torch.special.scaled_modified_bessel_k1, _points(-1, 60, extra=[1e-6])),
    'special_spherical_bessel_j0': (torch.special.spherical_bessel_j0, _points(-20, 20, extra=[0.49, 0.51, 1e-4])),
    'special_airy_ai': (torch.special.airy_ai, _points(-20, 20, extra=[-2.1, -2.08, 2.08, 2.1, 8.4, 104.0])),
}

# f32 tolerances: rtol 1e-4 (the standard for these approximations). Where the function
# has zeros (oscillating Bessel/Airy, log_ndtr near 0), an absolute 1e-5 scaled by the
# function's size covers the cancellation both implementations suffer near a root.
F32_TOL = dict(rtol=1e-4, atol=1e-5)
# Where exp(x) or a big Chebyshev sum feeds the result, a 1-ulp difference in exp at
# |x| ~ 30 is ~2e-6 relative; still inside rtol 1e-4.


@pytest.mark.parametrize('entry', sorted(UNARY))
def test_unary_f32(entry):
  fn, x = UNARY[entry]
  check(fn, x, ops=(entry,), **F32_TOL)


# The ops whose OpInfo covers bf16: computed in f32 and rounded once.
BF16_OPS = ['i0', 'special_i0e', 'special_i1', 'special_i1e', 'special_entr']


@pytest.mark.parametrize('entry', BF16_OPS)
def test_unary_bf16(entry):
  fn, x = UNARY[entry]
  check(fn, x.to(BF16), ops=(entry,))


def test_integer_input_computes_in_default_float():
  check(torch.special.i0e, torch.arange(-5, 6, dtype=torch.int64), ops=('special_i0e',), **F32_TOL)


def test_xlog1py():
  x = torch.tensor([0.0, 0.0, 1.0, -2.0, 3.0, float('nan'), 2.0])
  y = torch.tensor([float('nan'), 5.0, -1.0, 0.5, float('inf'), 1.0, -2.0])
  check(torch.special.xlog1py, x, y, ops=('special_xlog1py',), **F32_TOL)
  check(lambda a: torch.special.xlog1py(a, 2.0), make((4, 3), F32), ops=('special_xlog1py',), **F32_TOL)


def test_zeta():
  s = torch.tensor([2.0, 3.0, 1.0, 0.5, 4.5, 2.0, 2.0, 3.0])
  q = torch.tensor([1.0, 0.5, 2.0, 1.0, 3.0, 0.0, -2.0, 20.0])
  check(torch.special.zeta, s, q, ops=('special_zeta',), **F32_TOL)


@pytest.mark.parametrize('n', [0, 1, 2, 3, 4, 6])
def test_polygamma(n):
  # Negative non-integers (reflection), poles at non-positive integers, large arguments.
  x = torch.cat([torch.linspace(-9.7, 9.9, 53), torch.tensor([0.0, -1.0, -3.0, 1e-3, 50.0, -20.3])])
  # rtol 1e-3 for the reflected branch: near a zero of psi_n between two poles both
  # sides lose digits to cancellation (the largest relative gap measured, 2e-4, sits
  # next to such a zero).
  check(lambda t: torch.polygamma(n, t), x, ops=('polygamma',), rtol=1e-3, atol=1e-4)


def test_polygamma_negative_order():
  with pytest.raises(RuntimeError, match='negative n'):
    torch.polygamma(-1, torch.ones(2, device=DEV))


def test_logaddexp2():
  a = torch.tensor([0.0, 1.0, float('inf'), float('-inf'), float('inf'), -100.0, 3.0, float('nan')])
  b = torch.tensor([0.0, -3.0, float('inf'), float('-inf'), 1.0, -101.0, 200.0, 1.0])
  check(torch.logaddexp2, a, b, ops=('logaddexp2',), **F32_TOL)
  check(torch.logaddexp2, make((3, 4), BF16), make((4,), BF16, seed=1), ops=('logaddexp2',))


@pytest.mark.parametrize('dtype', [F32, BF16, torch.float64])
def test_nextafter(dtype):
  a = torch.tensor([0.0, 0.0, 1.0, 1.0, -1.0, -1.0, 2.0, float('inf'), float('nan'), 1.0, -0.0], dtype=dtype)
  b = torch.tensor([1.0, -1.0, 2.0, 0.0, 0.0, -2.0, 2.0, 0.0, 1.0, float('nan'), 0.0], dtype=dtype)
  check(torch.nextafter, a, b, ops=('nextafter',), rtol=0, atol=0)


@pytest.mark.parametrize('dtype', [F32, BF16, torch.float64])
def test_frexp(dtype):
  x = torch.tensor([0.0, -0.0, 1.0, -3.5, 0.25, 1e30, 1e-30, float('inf'), float('-inf'), float('nan'), 12345.678],
                   dtype=dtype)
  check(torch.frexp, x, ops=('frexp',), rtol=0, atol=0)


def test_frexp_subnormal_exponent():
  # The exponent of a subnormal comes out exact; its mantissa does not yet on the CPU
  # plugin (the compiled graph returns the input there), so only the exponent is checked.
  x = torch.tensor([1e-40, -3e-44, 1.0])
  _, e = torch.frexp(x.to(DEV))
  assert torch.equal(e.cpu(), torch.frexp(x)[1])


def test_frexp_rejects_integers():
  with pytest.raises(RuntimeError, match='floating-point'):
    torch.frexp(torch.ones(2, dtype=torch.int32, device=DEV))


# ---- orthogonal polynomials (a device loop of max(n) steps) ---------------------------

POLYNOMIALS = {
    'special_chebyshev_polynomial_t': torch.special.chebyshev_polynomial_t,
    'special_chebyshev_polynomial_u': torch.special.chebyshev_polynomial_u,
    'special_chebyshev_polynomial_v': torch.special.chebyshev_polynomial_v,
    'special_chebyshev_polynomial_w': torch.special.chebyshev_polynomial_w,
    'special_shifted_chebyshev_polynomial_t': torch.special.shifted_chebyshev_polynomial_t,
    'special_shifted_chebyshev_polynomial_u': torch.special.shifted_chebyshev_polynomial_u,
    'special_shifted_chebyshev_polynomial_v': torch.special.shifted_chebyshev_polynomial_v,
    'special_shifted_chebyshev_polynomial_w': torch.special.shifted_chebyshev_polynomial_w,
    'special_hermite_polynomial_h': torch.special.hermite_polynomial_h,
    'special_hermite_polynomial_he': torch.special.hermite_polynomial_he,
    'special_laguerre_polynomial_l': torch.special.laguerre_polynomial_l,
    'special_legendre_polynomial_p': torch.special.legendre_polynomial_p,
}


def _polynomial_grid(dtype):
  """Every x against every n: |x| = 1 and x = 0, 1 (the closed values), |x| < 1 with n past
  the trigonometric thresholds, |x| > 1 (growth); n negative, fractional, NaN, inf, and
  above Hermite's limit of 128. (A NaN x with n >= 2 is left out: PyTorch's loop then
  returns an uninitialized value for most of these polynomials.)"""
  xs = torch.tensor([-3.0, -1.5, -1.0, -0.9, -0.5, -0.1, 0.0, 0.1, 0.3, 0.5, 0.75, 0.9, 1.0, 1.2, 2.5],
                    dtype=dtype)
  ns = torch.tensor([-2.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 12.0, 2.7, 30.0,
                     float('nan'), float('inf'), 129.0], dtype=dtype)
  return xs[:, None].expand(len(xs), len(ns)).contiguous(), ns[None, :].expand(len(xs), len(ns)).contiguous()


@pytest.mark.parametrize('entry', sorted(POLYNOMIALS))
def test_polynomial_f32(entry):
  x, n = _polynomial_grid(F32)
  # The recurrence at |x| > 1 and degree 30 reaches 1e15..1e30: rtol covers a few ulps per
  # step; the trigonometric forms multiply acos's 1-ulp difference by n.
  check(POLYNOMIALS[entry], x, n, ops=(entry,), rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize('entry', sorted(POLYNOMIALS))
def test_polynomial_f64(entry):
  x, n = _polynomial_grid(torch.float64)
  check(POLYNOMIALS[entry], x, n, ops=(entry,), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize('entry', sorted(POLYNOMIALS))
def test_polynomial_nan_argument(entry):
  check(POLYNOMIALS[entry], torch.full((3,), float('nan')), torch.tensor([-2.0, 0.0, 1.0]), ops=(entry,))


def test_polynomial_scalar_degree_and_integer_inputs():
  x = torch.linspace(-1.2, 1.2, 13)
  check(lambda t: torch.special.chebyshev_polynomial_t(t, 9), x, ops=('special_chebyshev_polynomial_t',),
        rtol=1e-4, atol=1e-5)
  check(torch.special.legendre_polynomial_p, torch.arange(-3, 4), torch.arange(0, 7),
        ops=('special_legendre_polynomial_p',), rtol=1e-5, atol=0)


def test_polynomial_zero_size_and_scalar_shapes():
  check(torch.special.hermite_polynomial_h, torch.zeros(0, 3), torch.ones(3), ops=('special_hermite_polynomial_h',))
  check(torch.special.laguerre_polynomial_l, torch.tensor(0.7), torch.tensor(5.0),
        ops=('special_laguerre_polynomial_l',), rtol=1e-5, atol=1e-6)


# ---- incomplete gamma functions -----------------------------------------------------------


def _igamma_grid(dtype):
  """a against x across the method regions: power series (x < a + 1 and small x), the
  continued fraction (x > 1.1, x >= a), the upper series (x <= 1.1), the asymptotic
  expansion (20 < a < 200 and 200 < a, x near a), and the boundaries (0, inf, NaN, < 0)."""
  a = torch.tensor([0.0, 1e-3, 0.1, 0.5, 1.0, 1.5, 3.0, 7.5, 19.0, 25.0, 60.0, 150.0, 250.0, 1000.0, float('inf'),
                    -1.0, float('nan')], dtype=dtype)
  x = torch.tensor([0.0, 1e-4, 0.05, 0.3, 0.5, 0.7, 1.0, 1.05, 1.2, 2.0, 5.0, 8.0, 24.0, 26.0, 55.0, 65.0, 140.0,
                    160.0, 240.0, 262.0, 980.0, 1100.0, float('inf'), -0.5], dtype=dtype)
  return a[:, None].expand(len(a), len(x)).contiguous(), x[None, :].expand(len(a), len(x)).contiguous()


@pytest.mark.parametrize('op', ['igamma', 'igammac'])
@pytest.mark.parametrize('dtype', [F32, torch.float64])
def test_igamma(op, dtype):
  a, x = _igamma_grid(dtype)
  tol = dict(rtol=1e-4, atol=1e-6) if dtype == F32 else dict(rtol=1e-9, atol=1e-12)
  check(getattr(torch, op), a, x, ops=(op,), **tol)


@pytest.mark.parametrize('op', ['igamma', 'igammac'])
def test_igamma_bf16_and_broadcast(op):
  check(getattr(torch, op), make((3, 4), BF16, kind='pos'), make((4,), BF16, kind='pos', seed=1), ops=(op,))


def _u(kind='any'):
  return make((3, 5), F32, kind=kind).to(DEV)


COUNTER_CASES = {
    **{entry: (lambda fn=fn: fn(_u('pos')), entry) for entry, (fn, _) in UNARY.items()},
    'special_ndtri': (lambda: torch.special.ndtri(_u('pos') * 0.1), 'special_ndtri'),
    'special_xlog1py': (lambda: torch.special.xlog1py(_u(), _u('pos')), 'special_xlog1py'),
    'special_zeta': (lambda: torch.special.zeta(_u('pos') + 1, _u('pos')), 'special_zeta'),
    'polygamma': (lambda: torch.polygamma(2, _u()), 'polygamma'),
    'logaddexp2': (lambda: torch.logaddexp2(_u(), _u()), 'logaddexp2'),
    'nextafter': (lambda: torch.nextafter(_u(), _u('pos')), 'nextafter'),
    'frexp.Tensor': (lambda: torch.frexp(_u()), 'frexp'),
    **{entry: (lambda fn=fn: fn(_u(), _u('pos') * 3), entry) for entry, fn in POLYNOMIALS.items()},
    'igamma': (lambda: torch.igamma(_u('pos'), _u('pos')), 'igamma'),
    'igammac': (lambda: torch.igammac(_u('pos'), _u('pos')), 'igammac'),
}
