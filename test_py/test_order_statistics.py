"""kthvalue and median (lower median, with and without dim, keepdim) on the device
against eager CPU: float32, bfloat16, float64 and integer types, NaN rules (kthvalue: NaN
sorts last; median: a slice with a NaN has median NaN at its first NaN), gradients; bad
arguments raise."""

import pytest
import torch

from op_testing import DEV, assert_same, check, check_grad, ids, make

DTYPES = [torch.float32, torch.bfloat16, torch.float64, torch.int32, torch.int64]


def _distinct(shape, dtype, seed=0):
  """Values without ties, so that the index of each order statistic is unique."""
  g = torch.Generator().manual_seed(seed)
  n = 1
  for s in shape:
    n *= s
  return (torch.randperm(n, generator=g) - n // 2).reshape(shape).to(dtype)


@pytest.mark.parametrize('dtype', DTYPES, ids=ids)
def test_kthvalue(dtype):
  x = _distinct((4, 7, 5), dtype)
  for k, dim, keepdim in ((1, 1, False), (4, 1, True), (7, 1, False), (3, 0, False), (5, -1, True)):
    check(lambda t: torch.kthvalue(t, k, dim, keepdim), x, ops=('kthvalue',))
  check(lambda t: torch.kthvalue(t, 1), make((), dtype), ops=('kthvalue',))


@pytest.mark.parametrize('dtype', DTYPES, ids=ids)
def test_median(dtype):
  for shape in ((4, 7, 6), (5,), (1, 3)):
    x = _distinct(shape, dtype, seed=1)
    check(lambda t: torch.median(t), x, ops=('median',))
    for dim in range(-1, len(shape)):
      for keepdim in (False, True):
        check(lambda t: torch.median(t, dim, keepdim), x, ops=('median',))


def test_median_and_kthvalue_nan():
  x = _distinct((3, 6), torch.float32, seed=2)
  x[0, 4] = float('nan')
  x[0, 1] = float('nan')
  x[2, 5] = float('nan')
  check(lambda t: torch.median(t, 1), x, ops=('median',))
  check(lambda t: torch.median(t), x, ops=('median',))
  # kthvalue: one NaN per row (among equal values, which index PyTorch returns is unspecified)
  x[0, 1] = 0.5
  for k in (6, 5, 2):
    check(lambda t: torch.kthvalue(t, k, 1), x, ops=('kthvalue',))


def test_median_kthvalue_gradients():
  check_grad(lambda t: torch.median(t, 1).values.sum() * 2 + torch.kthvalue(t, 2, 0).values.sum() + torch.median(t) * 3,
             _distinct((4, 5), torch.float32, seed=3), ops=('median', 'kthvalue'), rtol=0, atol=0)


@pytest.mark.parametrize('call,error,match', [
    (lambda x: torch.kthvalue(x, 4, 1), RuntimeError, 'kthvalue\\(\\): selected number k out of range'),
    (lambda x: torch.kthvalue(x, 0, 1), RuntimeError, 'kthvalue\\(\\): selected number k out of range'),
    (lambda x: torch.median(x[:, :0], 1), RuntimeError, 'median\\(\\): Expected reduction dim 1 to have non-zero size'),
    (lambda x: torch.median(x[:0]), RuntimeError, 'median\\(\\) input tensor cannot be empty'),
    (lambda x: torch.median(x > 0), NotImplementedError, "\"median\" not implemented for 'Bool'"),
])
def test_order_statistics_bad_arguments_raise(call, error, match):
  x = torch.randn(2, 3, device=DEV)
  with pytest.raises(error, match=match):
    call(x)
  assert_same(x * 2, x.cpu() * 2)


COUNTER_CASES = {
    'kthvalue': (lambda: torch.kthvalue(torch.randn(2, 5, device=DEV), 2), 'kthvalue'),
    'median.dim': (lambda: torch.median(torch.randn(2, 5, device=DEV), 1), 'median'),
    'median': (lambda: torch.median(torch.randn(2, 5, device=DEV)), 'median'),
}
