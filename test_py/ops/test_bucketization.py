"""searchsorted and bucketize on the device against eager CPU: left and right sides,
1-D and row-wise (N-D) sequences, sorter, int32 output, values on and between the
boundaries, float32, bfloat16, float64 and integer types, mixed dtypes; bad arguments
raise."""

import pytest
import torch

from testing.op_testing import DEV, assert_same, check, ids, make

DTYPES = [torch.float32, torch.bfloat16, torch.float64, torch.int32, torch.int64]


def _boundaries(n, dtype, rows=()):
  g = torch.Generator().manual_seed(7)
  b = torch.randint(-20, 20, rows + (n,), generator=g).sort(-1).values
  return b.to(dtype)


@pytest.mark.parametrize('dtype', DTYPES, ids=ids)
def test_bucketize(dtype):
  b = _boundaries(9, dtype)
  x = torch.cat([b[::2], torch.randint(-25, 25, (15,)).to(dtype)]).reshape(4, 5)  # on and between
  for right in (False, True):
    for out_int32 in (False, True):
      check(lambda v, bb: torch.bucketize(v, bb, right=right, out_int32=out_int32), x, b, ops=('bucketize',))


@pytest.mark.parametrize('dtype', DTYPES, ids=ids)
def test_searchsorted_1d_and_rows(dtype):
  seq = _boundaries(8, dtype)
  values = torch.cat([seq[1::3], torch.randint(-25, 25, (7,)).to(dtype)])
  rows = _boundaries(6, dtype, rows=(2, 3))
  row_values = torch.randint(-25, 25, (2, 3, 5)).to(dtype)
  for kw in (dict(), dict(right=True), dict(side='right'), dict(side='left', out_int32=True)):
    check(lambda s, v: torch.searchsorted(s, v, **kw), seq, values, ops=('searchsorted',))
    check(lambda s, v: torch.searchsorted(s, v, **kw), rows, row_values, ops=('searchsorted',))
  check(lambda s, v: torch.searchsorted(s, v), seq, values[0], ops=('searchsorted',))  # a 0-dim value


def test_searchsorted_sorter_and_mixed_dtypes():
  seq = make((2, 7), torch.float32)
  sorter = seq.argsort(-1)
  values = make((2, 4), torch.float32, seed=3)
  check(lambda s, v, o: torch.searchsorted(s, v, sorter=o), seq, values, sorter, ops=('searchsorted',))
  check(lambda s, v: torch.searchsorted(s, v), torch.tensor([1, 3, 5, 7]), torch.tensor([3.5, 0.0, 7.0]),
        ops=('searchsorted',))


@pytest.mark.parametrize('call,match', [
    (lambda d: torch.searchsorted(torch.ones(2, 3, device=d), torch.ones(3, 2, device=d)),
     'boundaries tensor should be 1 dimension or the first N-1 dimensions'),
    (lambda d: torch.searchsorted(torch.ones(3, device=d), torch.ones(2, device=d), side='left', right=True),
     "side and right can't be set to opposites"),
    (lambda d: torch.bucketize(torch.ones(2, device=d), torch.ones(2, 3, device=d)),
     'boundaries tensor must be 1 dimension'),
])
def test_bucketize_searchsorted_bad_arguments_raise(call, match):
  for device in ('cpu', DEV):
    with pytest.raises(RuntimeError, match=match):
      call(device)
  x = torch.ones(3, device=DEV)
  assert_same(x * 2, torch.ones(3) * 2)


COUNTER_CASES = {
    'searchsorted.Tensor': (lambda: torch.searchsorted(torch.arange(5.0, device=DEV), torch.randn(3, device=DEV)),
                            'searchsorted'),
    'bucketize.Tensor': (lambda: torch.bucketize(torch.randn(3, device=DEV), torch.arange(5.0, device=DEV)),
                         'bucketize'),
}
