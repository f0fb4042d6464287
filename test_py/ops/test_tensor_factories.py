"""Factories on the XLA device against eager PyTorch on the CPU: zeros, ones, full, empty
(then filled), empty_strided, new_empty_strided, arange, eye, linspace, the *_like
factories and _efficientzerotensor; values, dtype and shape, bad arguments, and the
counters."""

import pytest
import torch

from testing.op_testing import DEV, assert_same, check_grad, ids, lowered, make
from testing.counter_cases import positive as _pos, typed as _x


# --------------------------------------------------------------- factories


@pytest.mark.parametrize('dtype', [None, torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.bool,
                                   torch.float64], ids=str)
def test_zeros_ones_full(dtype):
  for fn, args in [(torch.zeros, ((2, 3),)), (torch.ones, ((2, 3),)), (torch.full, ((2, 3), 1))]:
    expected = fn(*args, dtype=dtype)
    assert_same(fn(*args, dtype=dtype, device=DEV), expected)
  with lowered('zero', 'empty'):
    z = torch.zeros(4, 2, dtype=dtype, device=DEV)
  assert_same(z, torch.zeros(4, 2, dtype=dtype))
  with lowered('fill', 'empty'):
    o = torch.ones(0, 3, dtype=dtype, device=DEV)
  assert_same(o, torch.ones(0, 3, dtype=dtype))


def test_full_values():
  for value, dtype in [(2.5, None), (-3, None), (7, torch.int32), (True, None), (0.1, torch.bfloat16),
                       (2**40, torch.int64), (float('inf'), torch.float32), (-1.5, torch.float64)]:
    expected = torch.full((2, 2), value, dtype=dtype)
    with lowered('fill'):
      actual = torch.full((2, 2), value, dtype=dtype, device=DEV)
    assert_same(actual, expected)
  assert_same(torch.full((), 3.0, device=DEV), torch.full((), 3.0))


@pytest.mark.parametrize('args,kwargs', [
    ((5,), {}), ((2, 7), {}), ((0, 10, 3), {}), ((10, 0, -3), {}), ((5, -5, -1), {}),
    ((0.0, 1.0, 0.1), {}), ((1.0, -1.0, -0.25), {}), ((0, 5), dict(dtype=torch.float32)),
    ((0, 1, 0.3), dict(dtype=torch.float64)), ((-2.5, 2.5), {}), ((0, 5), dict(dtype=torch.int32)),
    ((0, 4), dict(dtype=torch.bfloat16)), ((3, 3), {}), ((2**33, 2**33 + 5), {}),
], ids=str)
def test_arange(args, kwargs):
  expected = torch.arange(*args, **kwargs)
  with lowered('arange'):
    actual = torch.arange(*args, device=DEV, **kwargs)
  assert_same(actual, expected)


def test_arange_out_and_errors():
  out = torch.empty(0, dtype=torch.int64, device=DEV)
  torch.arange(3, 9, 2, out=out)
  assert_same(out, torch.arange(3, 9, 2))
  with pytest.raises(RuntimeError):
    torch.arange(0, 5, 0, device=DEV)
  with pytest.raises(RuntimeError):
    torch.arange(5, 0, 1, device=DEV)


@pytest.mark.parametrize('dtype', [torch.float32, torch.int64, torch.bool, torch.bfloat16], ids=ids)
def test_empty_then_fill(dtype):
  with lowered('empty', 'fill'):
    x = torch.empty(3, 4, dtype=dtype, device=DEV)
    x.fill_(1)
  assert_same(x, torch.ones(3, 4, dtype=dtype))
  with lowered('empty_strided', 'fill'):
    y = torch.empty_strided((2, 3), (3, 1), dtype=dtype, device=DEV)
    y.fill_(torch.tensor(1, dtype=dtype, device=DEV))
  assert_same(y, torch.ones(2, 3, dtype=dtype))
  x.zero_()
  assert_same(x, torch.zeros(3, 4, dtype=dtype))


def test_fill_tensor_value_and_errors():
  x = torch.empty(2, 3, device=DEV)
  with lowered('fill'):
    x.fill_(torch.tensor(2.5, dtype=torch.float64, device=DEV))
  assert_same(x, torch.full((2, 3), 2.5))
  with pytest.raises(RuntimeError):
    x.fill_(torch.ones(2, device=DEV))


def test_like_factories():
  x = make((2, 3), torch.int32).to(DEV)
  assert_same(torch.zeros_like(x), torch.zeros(2, 3, dtype=torch.int32))
  assert_same(torch.ones_like(x, dtype=torch.float32), torch.ones(2, 3))
  assert_same(torch.full_like(x, 4), torch.full((2, 3), 4, dtype=torch.int32))
  assert torch.empty_like(x).shape == (2, 3)


def test_factories():
  with lowered('eye'):
    assert_same(torch.eye(3, device=DEV), torch.eye(3))
    assert_same(torch.eye(2, 4, device=DEV, dtype=torch.int64), torch.eye(2, 4, dtype=torch.int64))
    assert_same(torch.eye(3, 0, device=DEV), torch.eye(3, 0))
  with lowered('linspace'):
    assert_same(torch.linspace(-1, 2, 7, device=DEV), torch.linspace(-1, 2, 7))
    assert_same(torch.linspace(0, 1, 1, device=DEV), torch.linspace(0, 1, 1))
    assert_same(torch.linspace(0, 1, 0, device=DEV), torch.linspace(0, 1, 0))
    assert_same(torch.linspace(3, -4, 10, device=DEV, dtype=torch.float64),
                torch.linspace(3, -4, 10, dtype=torch.float64))
    assert_same(torch.linspace(0, 10, 4, device=DEV, dtype=torch.int64), torch.linspace(0, 10, 4, dtype=torch.int64))
  with lowered():
    assert_same(torch.full((2, 3), 2.5, device=DEV), torch.full((2, 3), 2.5))
    assert_same(torch.full((2,), 7, device=DEV), torch.full((2,), 7))
    assert_same(torch.zeros(2, 3, device=DEV, dtype=torch.float64), torch.zeros(2, 3, dtype=torch.float64))
    assert_same(torch.ones(4, device=DEV, dtype=torch.int32), torch.ones(4, dtype=torch.int32))
    x = make((2, 3), torch.float32).to(DEV)
    assert torch.empty_like(x).shape == (2, 3)
    assert_same(torch.zeros_like(x), torch.zeros(2, 3))
    assert_same(torch.ones_like(x, dtype=torch.float64), torch.ones(2, 3, dtype=torch.float64))
    assert_same(torch.full_like(x, 3), torch.full((2, 3), 3.0))
    assert_same(torch.arange(0, 1, 0.1, device=DEV), torch.arange(0, 1, 0.1))
    assert_same(torch.arange(-1.5, 2.25, 0.25, device=DEV, dtype=torch.float64),
                torch.arange(-1.5, 2.25, 0.25, dtype=torch.float64))
    assert_same(torch.arange(10, 0, -3, device=DEV), torch.arange(10, 0, -3))


@pytest.mark.parametrize('dtype', [torch.float32, torch.int64], ids=ids)
def test_efficient_zero_tensor_is_zeros(dtype):
  with lowered('_efficientzerotensor'):
    z = torch.ops.aten._efficientzerotensor([2, 3], dtype=dtype, device=DEV)
  assert_same(z, torch.zeros(2, 3, dtype=dtype))
  # sgn's gradient is one of them.
  check_grad(torch.sgn, make((4,), torch.float32), ops=['_efficientzerotensor'])


def test_new_empty_strided():
  x = make((2, 3), torch.bfloat16).to(DEV)
  with lowered('new_empty_strided'):
    y = x.new_empty_strided((4, 2), (2, 1))
  assert y.device == x.device and y.dtype == torch.bfloat16 and y.shape == (4, 2)


# ---- counter cases ------------------------------------------------------------

COUNTER_CASES = {
    'empty.memory_format': (lambda: torch.empty(2, 3, device=DEV), 'empty'),
    'empty_strided': (lambda: torch.empty_strided((2, 3), (3, 1), device=DEV), 'empty_strided'),
    'fill.Scalar': (lambda: _pos().fill_(2), 'fill'),
    'fill.Tensor': (lambda: _pos().fill_(torch.tensor(2.0, device=DEV)), 'fill'),
    'zero': (lambda: _pos().zero_(), 'zero'),
    'arange.start_out': (lambda: torch.arange(1, 5, device=DEV), 'arange'),
    'eye.out': (lambda: torch.eye(3, device=DEV), 'eye'),
    'eye.m_out': (lambda: torch.eye(3, 4, device=DEV), 'eye'),
    'linspace.out': (lambda: torch.linspace(0, 1, 5, device=DEV), 'linspace'),
    '_efficientzerotensor': (lambda: torch.ops.aten._efficientzerotensor([2, 3], device=DEV), '_efficientzerotensor'),
    'new_empty_strided': (lambda: _x().new_empty_strided((2, 2), (2, 1)), 'new_empty_strided'),
}


def test_arange_with_a_nan_bound_is_an_unsupported_range():
  for start, end in ((-5, float('nan')), (float('nan'), 5), (0, float('inf'))):
    with pytest.raises(RuntimeError, match='unsupported range'):
      torch.arange(start, end, device=DEV)
