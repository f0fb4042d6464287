"""Sorting and order statistics on the device against eager CPU: sort (stable, NaN and
edge cases), argsort, topk, kthvalue and median (lower median, with and without dim,
keepdim; kthvalue: NaN sorts last; median: a slice with a NaN has median NaN at its
first NaN), nanmedian and mode; float32, bfloat16, float64 and integer types,
gradients; bad arguments raise."""

import pytest
import torch

from testing.op_testing import ALL, DEV, assert_same, check, check_grad, check_grads, ids, lowered, make
from testing.counter_cases import typed as _x


# ---- sort / topk ------------------------------------------------------------------------------------


@pytest.mark.parametrize('dtype', ALL, ids=ids)
@pytest.mark.parametrize('dim', [0, -1])
@pytest.mark.parametrize('descending', [False, True])
def test_sort(dtype, dim, descending):
  x = make((5, 6), dtype)  # ints and bf16 have ties: stable order is checked too
  check(lambda t: torch.sort(t, dim=dim, descending=descending, stable=True), x, ops=('sort',))
  check(lambda t: torch.sort(t, dim, descending), x, ops=('sort',))


def test_sort_nan_and_edge_cases():
  x = torch.tensor([3., float('nan'), -1., float('inf'), float('-inf'), 0., float('nan'), 2.])
  check(lambda t: torch.sort(t, stable=True), x, ops=('sort',))
  check(lambda t: torch.sort(t, descending=True, stable=True), x, ops=('sort',))
  check(lambda t: torch.sort(t), torch.tensor(1.5), ops=('sort',))
  check(lambda t: torch.argsort(t, dim=0), make((4, 3), torch.int64), ops=('sort',))


def test_sort_backward():
  x = make((3, 5), torch.float32)
  check_grads(lambda t: torch.sort(t, 1)[0], x)


@pytest.mark.parametrize('dtype', [torch.float32, torch.int64], ids=ids)
@pytest.mark.parametrize('k,dim,largest', [(1, 0, True), (3, 1, True), (2, -1, False), (0, 1, True), (6, 1, False)])
def test_topk(dtype, k, dim, largest):
  x = torch.randperm(30, generator=torch.Generator().manual_seed(0)).reshape(5, 6).to(dtype)  # distinct values
  check(lambda t: torch.topk(t, k, dim, largest), x, ops=('topk',))


def test_topk_backward_and_bad_k():
  x = torch.randperm(12, generator=torch.Generator().manual_seed(1)).reshape(3, 4).float()
  check_grads(lambda t: torch.topk(t, 2)[0], x)
  with pytest.raises(RuntimeError, match='topk'):
    torch.topk(torch.ones(3, device=DEV), 4)


def test_sort_bad_dim_raises():
  with pytest.raises((IndexError, RuntimeError), match='sort'):
    torch.sort(torch.ones(3, device=DEV), dim=2)


# ---- kthvalue / median -------------------------------------------------------

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


# ---- nanmedian and mode ---------------------------------------------------------------------------

def _with_nans_and_ties(shape, dtype, seed=0):
  x = make(shape, dtype, seed=seed)
  if dtype.is_floating_point:
    x = (x * 2).round() / 2  # ties
    flat = x.view(-1)
    flat[3] = float('nan')
    flat[-2] = float('nan')
  return x


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32], ids=ids)
def test_nanmedian(dtype):
  x = _with_nans_and_ties((5, 6), dtype, seed=3)
  for dim in (0, 1):
    check(lambda a: torch.nanmedian(a, dim), x, ops=('nanmedian',))
  check(lambda a: torch.nanmedian(a, 1, keepdim=True).values, x, ops=('nanmedian',))
  check(lambda a: torch.nanmedian(a), x, ops=('nanmedian',))
  check(lambda a: torch.nanmedian(a), torch.tensor([]).to(dtype) if dtype.is_floating_point else x,
        ops=('nanmedian',))


def test_nanmedian_all_nan():
  """A slice of NaNs only: the median is NaN at one of its indices (which one PyTorch's CPU
  kernel returns depends on std::nth_element)."""
  x = torch.full((2, 6), float('nan'), device=DEV)
  with lowered('nanmedian'):
    values, indices = torch.nanmedian(x, 1)
    assert torch.isnan(values.cpu()).all()
    assert ((indices.cpu() >= 0) & (indices.cpu() < 6)).all()
    assert torch.isnan(torch.nanmedian(x).cpu())


def test_nanmedian_gradient():
  x = make((4, 5), torch.float32, seed=4)
  x[1, 2] = float('nan')
  check_grad(lambda a: torch.nanmedian(a, 1).values, x, ops=('nanmedian',))


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.bool], ids=ids)
def test_mode(dtype):
  g = torch.Generator().manual_seed(5)
  x = torch.randint(0, 4, (5, 9), generator=g).to(dtype)
  for dim in (0, 1):
    check(lambda a: torch.mode(a, dim), x, ops=('mode',))
  check(lambda a: torch.mode(a, 1, keepdim=True), x, ops=('mode',))
  check(lambda a: torch.mode(a, 0), torch.tensor(3).to(dtype), ops=('mode',))
  check(lambda a: torch.mode(a, 0), torch.tensor([2]).to(dtype), ops=('mode',))


def test_mode_long_slices():
  """Past 16 elements PyTorch's CPU kernel (std::sort, unstable) returns the index of some
  occurrence of the mode; here it is the last one. The values agree."""
  g = torch.Generator().manual_seed(1)
  x = torch.randint(0, 4, (6, 40), generator=g).float()
  expected = torch.mode(x, 1)
  with lowered('mode'):
    values, indices = torch.mode(x.to(DEV), 1)
    values, indices = values.cpu(), indices.cpu()
  assert torch.equal(values, expected.values)
  assert torch.equal(x.gather(1, indices[:, None])[:, 0], values)
  assert torch.equal(indices, torch.stack([(row == v).nonzero().max() for row, v in zip(x, values)]))


# ---- counter cases ------------------------------------------------------------

COUNTER_CASES = {
    'sort': (lambda: torch.ops.aten.sort(_x(), 1, False), 'sort'),
    'sort.stable': (lambda: torch.sort(_x(), stable=True), 'sort'),
    'topk': (lambda: torch.topk(_x(), 2), 'topk'),
    'kthvalue': (lambda: torch.kthvalue(torch.randn(2, 5, device=DEV), 2), 'kthvalue'),
    'median.dim': (lambda: torch.median(torch.randn(2, 5, device=DEV), 1), 'median'),
    'median': (lambda: torch.median(torch.randn(2, 5, device=DEV)), 'median'),
    'nanmedian': (lambda: torch.nanmedian(torch.ones(3, device=DEV)), 'nanmedian'),
    'nanmedian.dim': (lambda: torch.nanmedian(torch.ones(3, device=DEV), 0), 'nanmedian'),
    'mode': (lambda: torch.mode(torch.ones(3, device=DEV)), 'mode'),
}
