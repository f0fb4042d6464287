"""Unary element-wise ops (neg, abs, exp, log, sqrt, rsqrt, tanh, sigmoid, sin, cos, floor,
ceil, relu, logical_not, bitwise_not) on the XLA device against eager PyTorch on the CPU:
values, dtype and shape, 0-dim and empty inputs, special values, and the counters:
xla::<op> must grow and no aten::<op> (CPU fallback) counter may appear. The other unary
math functions and the activations: test_pointwise_ops.py."""

import pytest
import torch

from testing.op_testing import ALL, DEV, INTS, check, ids, make
from testing.counter_cases import positive as _pos


# ----------------------------------------------------------------- unary ops

UNARY = {
    # name: (fn, dtypes, input kind)
    'neg': (torch.neg, ALL, 'any'),
    'abs': (torch.abs, ALL, 'any'),
    'exp': (torch.exp, ALL + [torch.bool], 'any'),
    'log': (torch.log, ALL, 'pos'),
    'sqrt': (torch.sqrt, ALL, 'pos'),
    'rsqrt': (torch.rsqrt, ALL, 'pos'),
    'tanh': (torch.tanh, ALL, 'any'),
    'sigmoid': (torch.sigmoid, ALL + [torch.bool], 'any'),
    'sin': (torch.sin, ALL, 'any'),
    'cos': (torch.cos, ALL, 'any'),
    'floor': (torch.floor, ALL, 'any'),
    'ceil': (torch.ceil, ALL, 'any'),
    'relu': (torch.relu, ALL, 'any'),
    'logical_not': (torch.logical_not, ALL + [torch.bool], 'any'),
    'bitwise_not': (torch.bitwise_not, INTS + [torch.bool], 'any'),
}
UNARY_CASES = [(n, d) for n, (_, ds, _) in UNARY.items() for d in ds]


@pytest.mark.parametrize('name,dtype', UNARY_CASES, ids=[f'{n}-{ids(d)}' for n, d in UNARY_CASES])
def test_unary(name, dtype):
  fn, _, kind = UNARY[name]
  x = make((3, 5), dtype, kind)
  check(fn, x, ops=[name])


@pytest.mark.parametrize('name', ['neg', 'exp', 'sqrt', 'sigmoid', 'floor', 'relu', 'abs', 'tanh'])
def test_unary_0d_and_empty(name):
  fn = UNARY[name][0]
  check(fn, torch.tensor(2.25), ops=[name])
  check(fn, torch.zeros(0, 3), ops=[name])


def test_floor_ceil_negative_halves():
  x = torch.tensor([-2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5, -0.0])
  check(torch.floor, x, ops=['floor'])
  check(torch.ceil, x, ops=['ceil'])


def test_unary_special_values():
  x = torch.tensor([0.0, -1.0, float('inf'), float('-inf'), float('nan')])
  for name in ['exp', 'log', 'sqrt', 'rsqrt', 'tanh', 'sigmoid', 'abs', 'neg', 'relu']:
    check(UNARY[name][0], x, ops=[name])


def test_neg_bool_raises():
  with pytest.raises(RuntimeError, match='Negation'):
    -torch.ones(2, dtype=torch.bool, device=DEV)


def test_bitwise_not_float_raises():
  with pytest.raises(RuntimeError):
    torch.bitwise_not(torch.ones(2, device=DEV))


# ---- counter cases ------------------------------------------------------------

COUNTER_CASES = {}
for _n in ['neg', 'abs', 'exp', 'log', 'sqrt', 'rsqrt', 'tanh', 'sigmoid', 'sin', 'cos', 'floor', 'ceil', 'relu',
           'logical_not']:
  COUNTER_CASES[_n] = ((lambda n: lambda: getattr(torch, n)(_pos()))(_n), _n)
COUNTER_CASES['bitwise_not'] = (lambda: ~(_pos() > 1), 'bitwise_not')
