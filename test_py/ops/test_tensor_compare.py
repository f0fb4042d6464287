"""where, clamp, isin and equal on the XLA device against eager PyTorch on the CPU: values,
dtype and shape, broadcasting and mixed types, NaN, bad arguments, and the counters."""

import pytest
import torch

from testing.op_testing import ALL, DEV, check, ids, make, to_dev
from testing.counter_cases import floats as _f, positive as _pos


# ------------------------------------------------------- where / clamp


@pytest.mark.parametrize('dtype', ALL + [torch.bool], ids=ids)
def test_where(dtype):
  cond = make((3, 4), torch.bool, seed=5)
  check(torch.where, cond, make((3, 4), dtype, seed=1), make((3, 4), dtype, seed=2), ops=['where'])


def test_where_broadcast_and_mixed():
  cond = make((3, 1), torch.bool, seed=5)
  check(torch.where, cond, make((1, 4), torch.float32, seed=1), make((4,), torch.float32, seed=2), ops=['where'])
  check(torch.where, cond, make((3, 4), torch.int32, seed=1), make((3, 4), torch.float32, seed=2), ops=['where'])
  check(lambda c, x: torch.where(c, x, 0.0), cond, make((3, 4), torch.float32, seed=1), ops=['where'])
  check(lambda c, x: torch.where(c, x, 0.5), cond, make((3, 4), torch.int64, seed=1), ops=['where'])
  check(lambda x: torch.where(x > 0, x, -x), make((3, 4), torch.float32, seed=1), ops=['where', 'gt'])


def test_where_non_bool_condition_raises():
  x = torch.ones(3, device=DEV)
  with pytest.raises(RuntimeError):
    torch.where(x, x, x)


@pytest.mark.parametrize('dtype', ALL, ids=ids)
def test_clamp(dtype):
  x = make((4, 5), dtype, seed=3)
  check(lambda t: torch.clamp(t, -1, 2), x, ops=['clamp'])
  check(lambda t: torch.clamp(t, min=0), x, ops=['clamp'])
  check(lambda t: torch.clamp(t, max=1), x, ops=['clamp'])
  check(lambda t: torch.clamp(t, min=2, max=-1), x, ops=['clamp'])  # min > max gives max


def test_clamp_float_bounds_on_float_and_nan():
  x = torch.tensor([-2.0, -0.3, 0.0, 0.7, 3.0, float('nan')])
  check(lambda t: t.clamp(-0.5, 0.5), x, ops=['clamp'])
  check(lambda t: t.clamp(min=0.25), x, ops=['clamp'])


def test_clamp_without_bounds_raises():
  with pytest.raises(RuntimeError):
    torch.clamp(torch.ones(2, device=DEV))


# ---- isin / equal ------------------------------------------------------------

@pytest.mark.parametrize('dtype', ALL, ids=ids)
@pytest.mark.parametrize('invert', [False, True])
def test_isin(dtype, invert):
  e, t = make((3, 4), dtype), make((5,), dtype, seed=1)
  check(lambda x, y: torch.isin(x, y, invert=invert), e, t, ops=('isin',))
  check(lambda x: torch.isin(x, 2, invert=invert), e, ops=('isin',))
  check(lambda y: torch.isin(1, y, invert=invert), t, ops=('isin',))


@pytest.mark.parametrize('dtype', ALL, ids=ids)
def test_equal(dtype):
  a = make((3, 4), dtype)
  b = a.clone()
  b[1, 2] += 1
  for x, y in [(a, a.clone()), (a, b), (a, a[:2])]:
    assert torch.equal(to_dev(x), to_dev(y)) == torch.equal(x, y)


def test_equal_nan_and_corrcoef():
  x = torch.tensor([1.0, float('nan')])
  assert not torch.equal(to_dev(x), to_dev(x))
  check(torch.corrcoef, make((3, 6), torch.float32), ops=('equal',))


# ---- counter cases ------------------------------------------------------------

COUNTER_CASES = {
    'clamp': (lambda: _pos().clamp(0, 1), 'clamp'),
    'where.self': (lambda: torch.where(_pos() > 1, _pos(), _pos()), 'where'),
    'equal': (lambda: torch.equal(_f(), _f()), 'equal'),
    'isin.Tensor_Tensor': (lambda: torch.isin(_f(), _f()[0]), 'isin'),
    'isin.Tensor_Scalar': (lambda: torch.isin(_f(), 1.0), 'isin'),
    'isin.Scalar_Tensor': (lambda: torch.isin(1.0, _f()), 'isin'),
}
