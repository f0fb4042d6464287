"""The lowered ATen ops (cpp/aten/xla_native_functions.yaml) against eager PyTorch on the CPU.

Every test runs the same computation on CPU tensors and on their copies on the XLA
device, then compares values, dtype and shape. Tests of lowered ops also check the
counters: xla::<op> must grow and no aten::<op> (CPU fallback) counter may appear.
"""

import math

import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from op_testing import (ALL, BF16, DEV, EXACT, F32, FLOATS, INTS, assert_same, check, counter, fallbacks, ids,
                        lowered, make, to_dev, tol)
from device_marks import needs_devices

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


# ---------------------------------------------------------------- binary ops

BINARY = {
    # name: (fn, dtypes, rhs kind)
    'add': (torch.add, ALL + [torch.bool], 'any'),
    'sub': (torch.sub, ALL, 'any'),
    'mul': (torch.mul, ALL + [torch.bool], 'any'),
    'div': (torch.div, ALL + [torch.bool], 'nonzero'),
    'maximum': (torch.maximum, ALL + [torch.bool], 'any'),
    'minimum': (torch.minimum, ALL + [torch.bool], 'any'),
    'eq': (torch.eq, ALL + [torch.bool], 'any'),
    'ne': (torch.ne, ALL + [torch.bool], 'any'),
    'lt': (torch.lt, ALL + [torch.bool], 'any'),
    'le': (torch.le, ALL + [torch.bool], 'any'),
    'gt': (torch.gt, ALL + [torch.bool], 'any'),
    'ge': (torch.ge, ALL + [torch.bool], 'any'),
    'logical_and': (torch.logical_and, ALL + [torch.bool], 'any'),
    'logical_or': (torch.logical_or, ALL + [torch.bool], 'any'),
    'logical_xor': (torch.logical_xor, ALL + [torch.bool], 'any'),
}
BINARY_CASES = [(n, d) for n, (_, ds, _) in BINARY.items() for d in ds]


@pytest.mark.parametrize('name,dtype', BINARY_CASES, ids=[f'{n}-{ids(d)}' for n, d in BINARY_CASES])
def test_binary(name, dtype):
  fn, _, kind = BINARY[name]
  a = make((3, 4), dtype, 'any', seed=1)
  b = make((3, 4), dtype, kind, seed=2)
  if name in ('eq', 'ne', 'le', 'ge') and dtype != torch.bool:
    b[0] = a[0]  # some equal elements
  check(fn, a, b, ops=[name])


BROADCAST_SHAPES = [((3, 1, 4), (2, 4)), ((4,), (3, 4)), ((3, 4), ()), ((), (2, 3)), ((2, 1), (1, 3)),
                    ((0, 3), (1, 3))]


@pytest.mark.parametrize('name', list(BINARY))
@pytest.mark.parametrize('shapes', BROADCAST_SHAPES, ids=lambda s: f'{s[0]}x{s[1]}')
def test_binary_broadcast(name, shapes):
  fn, _, kind = BINARY[name]
  check(fn, make(shapes[0], torch.float32, 'any', 1), make(shapes[1], torch.float32, kind, 2), ops=[name])


MIXED = [
    (torch.int32, torch.float32),
    (torch.float32, torch.int64),
    (torch.bfloat16, torch.float32),
    (torch.int32, torch.int64),
    (torch.bool, torch.int32),
    (torch.bool, torch.float32),
    (torch.bfloat16, torch.int64),
]


@pytest.mark.parametrize('name', ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'lt', 'eq', 'logical_and'])
@pytest.mark.parametrize('dtypes', MIXED, ids=lambda d: f'{ids(d[0])}-{ids(d[1])}')
def test_binary_type_promotion(name, dtypes):
  if name == 'sub' and torch.bool in dtypes:
    pytest.skip('sub of bool is an error')
  fn, _, kind = BINARY[name]
  check(fn, make((2, 3), dtypes[0], 'any', 1), make((2, 3), dtypes[1], kind, 2), ops=[name])


@pytest.mark.parametrize('name', ['add', 'mul', 'sub', 'div', 'maximum', 'lt'])
def test_binary_zero_dim_tensor_does_not_promote(name):
  # A 0-dim operand of a higher category wins, of the same category does not.
  fn, _, kind = BINARY[name]
  check(fn, make((2, 3), torch.int32, 'any', 1), make((), torch.int64, 'nonzero', 2), ops=[name])
  check(fn, make((2, 3), torch.float32, 'any', 1), make((), torch.float64, 'nonzero', 2), ops=[name])
  check(fn, make((2, 3), torch.bfloat16, 'any', 1), make((), torch.float32, 'nonzero', 2), ops=[name])
  check(fn, make((2, 3), torch.int32, 'any', 1), make((), torch.float32, 'nonzero', 2), ops=[name])


SCALAR_EXPRS = [
    ('mul', lambda x: x * 0.5),
    ('mul', lambda x: 0.5 * x),
    ('mul', lambda x: x * 3),
    ('rsub', lambda x: 2 - x),  # rsub.Scalar, lowered itself
    ('sub', lambda x: x - 1.5),
    ('add', lambda x: x + 1),
    ('add', lambda x: 2.5 + x),
    ('add', lambda x: torch.add(x, 2, alpha=3)),
    ('div', lambda x: x / 2),
    ('div', lambda x: x / 0.25),
    ('pow', lambda x: x ** 2),
    ('pow', lambda x: x ** 3),
    ('pow', lambda x: x ** 0),
    ('gt', lambda x: x > 0.5),
    ('lt', lambda x: x < 2),
    ('eq', lambda x: x == 1),
    ('ne', lambda x: x != 1),
    ('le', lambda x: x <= -1),
    ('ge', lambda x: x >= 2.5),
]


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64], ids=ids)
@pytest.mark.parametrize('expr', range(len(SCALAR_EXPRS)), ids=lambda i: f'{i}-{SCALAR_EXPRS[i][0]}')
def test_python_scalar_operand(expr, dtype):
  op, fn = SCALAR_EXPRS[expr]
  check(fn, make((3, 4), dtype, 'any', 3), ops=[op])


@pytest.mark.parametrize('expr', [lambda x: x + 1, lambda x: x * 2, lambda x: x > 0, lambda x: x == True,
                                  lambda x: x + 1.5])
def test_python_scalar_bool_tensor(expr):
  check(expr, make((3, 4), torch.bool))


def test_pow_scalar_float_exponents():
  x = make((3, 4), torch.float32, 'pos')
  for e in [0.5, -1, -2.5, 1, 2, 3.0]:
    check(lambda t: t ** e, x, ops=['pow'])
  # An int tensor to a float power computes in float.
  check(lambda t: t ** 0.5, make((3, 4), torch.int32, 'pos'), ops=['pow'])
  check(lambda t: torch.pow(t, 2.5), make((3, 4), torch.bfloat16, 'pos'), ops=['pow'])


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64], ids=ids)
def test_pow_tensor_tensor(dtype):
  base = make((3, 4), dtype, 'pos', 1)
  exp = make((3, 4), dtype, 'any', 2)
  if not dtype.is_floating_point:
    exp = exp.abs() % 4  # integers to negative powers are an error
  check(torch.pow, base, exp, ops=['pow'])
  check(torch.pow, base, exp[0], ops=['pow'])  # broadcast


def test_pow_mixed_types():
  check(torch.pow, make((3, 4), torch.int32, 'pos', 1), make((3, 4), torch.float32, 'any', 2), ops=['pow'])
  check(torch.pow, make((3, 4), torch.float32, 'pos', 1), make((4,), torch.int64, 'pos', 2), ops=['pow'])


@pytest.mark.parametrize('alpha', [2, 0.5, -1, 0])
@pytest.mark.parametrize('name', ['add', 'sub'])
def test_add_sub_alpha(name, alpha):
  fn = BINARY[name][0]
  check(lambda a, b: fn(a, b, alpha=alpha), make((3, 4), torch.float32, 'any', 1), make((4,), torch.float32, 'any', 2),
        ops=[name])
  if isinstance(alpha, int):
    check(lambda a, b: fn(a, b, alpha=alpha), make((3, 4), torch.int64, 'any', 1), make((3, 4), torch.int64, 'any', 2),
          ops=[name])


def test_sub_bool_raises():
  b = torch.ones(2, dtype=torch.bool, device=DEV)
  with pytest.raises(RuntimeError, match='Subtraction'):
    b - b


@pytest.mark.parametrize('mode', ['floor', 'trunc'])
@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64], ids=ids)
def test_div_rounding_mode(mode, dtype):
  if dtype.is_floating_point:
    a = torch.tensor([7.0, -7.0, 7.0, -7.0, 6.0, -6.0, 0.5, -0.5, 5.5]).to(dtype)
    b = torch.tensor([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 2.0, 3.0, -1.5]).to(dtype)
  else:
    a = torch.tensor([7, -7, 7, -7, 6, -6, 0, 1, -1, 9], dtype=dtype)
    b = torch.tensor([2, 2, -2, -2, 3, 3, 5, -5, 5, -4], dtype=dtype)
  check(lambda x, y: torch.div(x, y, rounding_mode=mode), a, b, ops=['div'])
  check(lambda x, y: torch.div(x, y, rounding_mode=mode), a, b[0], ops=['div'])


def test_div_int_true_division_gives_float():
  a = torch.tensor([7, -7, 1, 0], dtype=torch.int64)
  b = torch.tensor([2, 2, 3, 5], dtype=torch.int64)
  r = check(torch.div, a, b, ops=['div'])
  assert r.dtype == torch.float32


def test_div_bad_rounding_mode_raises():
  x = torch.ones(2, device=DEV)
  with pytest.raises(RuntimeError):
    torch.div(x, x, rounding_mode='round')


def test_div_by_zero_float():
  check(torch.div, torch.tensor([1.0, -1.0, 0.0]), torch.tensor([0.0, 0.0, 0.0]), ops=['div'])


def test_maximum_minimum_nan():
  a = torch.tensor([1.0, float('nan'), 3.0, float('nan')])
  b = torch.tensor([float('nan'), 2.0, 1.0, float('nan')])
  check(torch.maximum, a, b, ops=['maximum'])
  check(torch.minimum, a, b, ops=['minimum'])


def test_compare_nan():
  a = torch.tensor([1.0, float('nan'), float('nan')])
  b = torch.tensor([float('nan'), 1.0, float('nan')])
  for name in ['eq', 'ne', 'lt', 'le', 'gt', 'ge']:
    check(BINARY[name][0], a, b, ops=[name])


# ------------------------------------------------------- where / clamp / backward


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


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
def test_threshold_backward(dtype):
  g = make((3, 4), dtype, seed=1)
  x = make((3, 4), dtype, seed=2)
  x[0, 0] = 0
  x[1, 1] = 0.5
  for thr in [0, 0.5, -1]:
    check(lambda a, b: torch.ops.aten.threshold_backward(a, b, thr), g, x, ops=['threshold_backward'])


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
def test_sigmoid_tanh_backward(dtype):
  g = make((3, 4), dtype, seed=1)
  y = make((3, 4), dtype, seed=2).sigmoid()
  check(torch.ops.aten.sigmoid_backward, g, y, ops=['sigmoid_backward'])
  y = make((3, 4), dtype, seed=2).tanh()
  check(torch.ops.aten.tanh_backward, g, y, ops=['tanh_backward'])


# ------------------------------------------------------- in-place and out=


def test_inplace_variants():
  a = make((3, 4), torch.float32, seed=1)
  b = make((4,), torch.float32, 'nonzero', seed=2)

  def run(x, y):
    x = x.clone()
    x.add_(y)
    x.mul_(2)
    x.sub_(y, alpha=0.5)
    x.div_(y)
    x.clamp_(-3, 3)
    x.sigmoid_()
    x.pow_(2)
    x.relu_()
    return x

  check(run, a, b, ops=['add', 'mul', 'sub', 'div', 'clamp', 'sigmoid', 'pow', 'relu', 'clone'])


def test_inplace_int_and_rounding():
  a = make((3, 4), torch.int64, seed=1)
  b = make((3, 4), torch.int64, 'nonzero', seed=2)

  def run(x, y):
    x = x.clone()
    x.mul_(y)
    x.div_(y, rounding_mode='floor')
    x.add_(3)
    x.bitwise_not_()
    x.neg_()
    x.abs_()
    return x

  check(run, a, b, ops=['mul', 'div', 'add', 'bitwise_not', 'neg', 'abs'])


def test_inplace_keeps_identity_and_dtype():
  x = torch.ones(2, 3, dtype=torch.bfloat16, device=DEV)
  y = x.mul_(torch.full((2, 3), 1.5, device=DEV))  # f32 operand, bf16 result
  assert y is x
  assert x.dtype == torch.bfloat16
  assert torch.equal(x.cpu(), torch.full((2, 3), 1.5, dtype=torch.bfloat16))


def test_inplace_bad_cast_raises():
  x = torch.ones(2, dtype=torch.int32, device=DEV)
  with pytest.raises(RuntimeError):
    x.add_(torch.ones(2, device=DEV) * 0.5)


@pytest.mark.parametrize('name', ['add', 'mul', 'sub', 'div', 'maximum', 'lt', 'logical_and'])
def test_out_variants(name):
  fn, _, kind = BINARY[name]
  a = make((3, 4), torch.float32, seed=1)
  b = make((3, 4), torch.float32, kind, seed=2)
  expected = fn(a, b)
  with lowered(name):
    out = torch.empty(3, 4, dtype=expected.dtype, device=DEV)
    r = fn(a.to(DEV), b.to(DEV), out=out)
    assert r is out
  assert_same(out, expected)
  # An out= tensor of another size is resized.
  out = torch.empty(0, dtype=expected.dtype, device=DEV)
  fn(a.to(DEV), b.to(DEV), out=out)
  assert_same(out, expected)


def test_out_unary_and_reduction():
  x = make((3, 4), torch.float32, 'pos', seed=1)
  with lowered('exp', 'sum', 'mm'):
    o1 = torch.empty(3, 4, device=DEV)
    torch.exp(x.to(DEV), out=o1)
    o2 = torch.empty(4, device=DEV)
    torch.sum(x.to(DEV), 0, out=o2)
    o3 = torch.empty(3, 3, device=DEV)
    torch.mm(x.to(DEV), x.t().to(DEV), out=o3)
  assert_same(o1, torch.exp(x))
  assert_same(o2, x.sum(0))
  assert_same(o3, x @ x.t())


# -------------------------------------------------------------- reductions


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.bool], ids=ids)
@pytest.mark.parametrize('dim,keepdim', [(None, False), (0, False), (1, True), (-1, False), ((0, 2), False),
                                         ((0, 2), True), ((), False), ([-3, 1], True)])
def test_sum(dtype, dim, keepdim):
  x = make((2, 3, 4), dtype, seed=4)
  if dim is None:
    fn = lambda t: t.sum()
  else:
    fn = lambda t: t.sum(dim, keepdim=keepdim)
  check(fn, x, ops=['sum'])


def test_sum_dtype_arg():
  x = make((3, 4), torch.int32, seed=4)
  check(lambda t: t.sum(dtype=torch.float32), x, ops=['sum'])
  check(lambda t: t.sum(1, dtype=torch.int32), x, ops=['sum'])
  check(lambda t: t.sum(0, dtype=torch.float64), make((3, 4), torch.float32), ops=['sum'])
  check(lambda t: t.sum(dtype=torch.float32), make((3, 4), torch.bfloat16), ops=['sum'])


def test_sum_0d_and_empty():
  check(lambda t: t.sum(), torch.tensor(2.5), ops=['sum'])
  check(lambda t: t.sum(0), torch.tensor(2.5), ops=['sum'])
  check(lambda t: t.sum(-1, keepdim=True), torch.tensor(2.5), ops=['sum'])
  check(lambda t: t.sum(), torch.zeros(0, 3), ops=['sum'])
  check(lambda t: t.sum(0), torch.zeros(0, 3), ops=['sum'])


def test_sum_bad_dim_raises():
  with pytest.raises(RuntimeError):
    torch.ones(2, 3, device=DEV).sum(2)


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('dim,keepdim', [(None, False), (0, False), (1, True), (-1, False), ((0, 2), False),
                                         ((0, 2), True), ((), False)])
def test_mean(dtype, dim, keepdim):
  x = make((2, 3, 4), dtype, seed=4)
  fn = (lambda t: t.mean()) if dim is None else (lambda t: t.mean(dim, keepdim=keepdim))
  check(fn, x, ops=['mean'])


def test_mean_dtype_and_0d():
  check(lambda t: t.mean(dtype=torch.float32), make((3, 4), torch.bfloat16), ops=['mean'])
  check(lambda t: t.mean(1, dtype=torch.float64), make((3, 4), torch.float32), ops=['mean'])
  check(lambda t: t.mean(0), torch.tensor(1.5), ops=['mean'])
  check(lambda t: t.mean(dtype=torch.float32), make((3, 4), torch.int64), ops=['mean'])


def test_mean_int_raises():
  with pytest.raises(RuntimeError, match='mean'):
    torch.ones(3, dtype=torch.int64, device=DEV).mean()


def test_bf16_sum_accumulates_precisely():
  # 1024 ones plus small values: a bf16 accumulator would lose the small ones.
  x = torch.full((4096,), 0.01, dtype=torch.bfloat16)
  check(lambda t: t.sum(), x, ops=['sum'])
  check(lambda t: t.mean(), x, ops=['mean'])


# --------------------------------------------------------- matrix products


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64], ids=ids)
def test_mm(dtype):
  a, b = make((3, 5), dtype, seed=1), make((5, 4), dtype, seed=2)
  check(torch.mm, a, b, ops=['mm'], **({} if dtype != torch.bfloat16 else dict(rtol=2e-2, atol=5e-2)))


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int64], ids=ids)
def test_bmm(dtype):
  a, b = make((2, 3, 5), dtype, seed=1), make((2, 5, 4), dtype, seed=2)
  check(torch.bmm, a, b, ops=['bmm'], **({} if dtype != torch.bfloat16 else dict(rtol=2e-2, atol=5e-2)))


@pytest.mark.parametrize('alpha,beta', [(1, 1), (2.0, 0.5), (1, 0), (-1.5, 1), (0.5, 2)])
@pytest.mark.parametrize('bias_shape', [(3, 4), (4,), (1, 4), (3, 1), ()])
def test_addmm(alpha, beta, bias_shape):
  bias = make(bias_shape, torch.float32, seed=3)
  a, b = make((3, 5), torch.float32, seed=1), make((5, 4), torch.float32, seed=2)
  check(lambda c, x, y: torch.addmm(c, x, y, alpha=alpha, beta=beta), bias, a, b, ops=['addmm'])


def test_addmm_beta_zero_ignores_nan_bias():
  bias = torch.full((3, 4), float('nan'))
  a, b = make((3, 5), torch.float32, seed=1), make((5, 4), torch.float32, seed=2)
  check(lambda c, x, y: torch.addmm(c, x, y, beta=0), bias, a, b, ops=['addmm'])


def test_addmm_bf16_and_int():
  args = [make((4,), torch.bfloat16, seed=3), make((3, 5), torch.bfloat16, seed=1), make((5, 4), torch.bfloat16, seed=2)]
  check(lambda c, x, y: torch.addmm(c, x, y, alpha=2, beta=0.5), *args, ops=['addmm'], rtol=2e-2, atol=1e-1)
  args = [make((4,), torch.int64, seed=3), make((3, 5), torch.int64, seed=1), make((5, 4), torch.int64, seed=2)]
  check(lambda c, x, y: torch.addmm(c, x, y, alpha=2, beta=3), *args, ops=['addmm'])


def test_linear():
  x, w, b = make((2, 3, 5), torch.float32, seed=1), make((4, 5), torch.float32, seed=2), make((4,), torch.float32, seed=3)
  check(torch.nn.functional.linear, x[0], w, b, ops=['addmm', 't_copy'])
  check(torch.nn.functional.linear, x[0], w, ops=['mm'])
  check(torch.nn.functional.linear, x, w, b)  # 3-D input goes through a view


@pytest.mark.parametrize('shapes', [((5,), (5,)), ((3, 5), (5,)), ((5,), (5, 4)), ((3, 5), (5, 4)),
                                    ((2, 3, 5), (5, 4)), ((2, 3, 5), (2, 5, 4)), ((5,), (2, 5, 4)),
                                    ((2, 3, 5), (5,)), ((2, 1, 3, 5), (4, 5, 2))],
                         ids=lambda s: f'{s[0]}@{s[1]}')
def test_matmul(shapes):
  a, b = make(shapes[0], torch.float32, seed=1), make(shapes[1], torch.float32, seed=2)
  # Matrix-vector products use dot/mv, which are not lowered (CPU fallback).
  check(torch.matmul, a, b, any_fallback=1 in (len(shapes[0]), len(shapes[1])))


def test_matmul_lowered_paths():
  check(torch.matmul, make((3, 5), torch.float32, seed=1), make((5, 4), torch.float32, seed=2), ops=['mm'])
  check(torch.matmul, make((2, 3, 5), torch.float32, seed=1), make((5, 4), torch.float32, seed=2),
        ops=['mm', '_unsafe_view'])
  check(torch.matmul, make((2, 3, 5), torch.float32, seed=1), make((2, 5, 4), torch.float32, seed=2), ops=['bmm'])


def test_mm_errors_and_recovery():
  a = torch.ones(2, 3, device=DEV)
  with pytest.raises(RuntimeError, match='2x3 and 4x5'):
    torch.mm(a, torch.ones(4, 5, device=DEV))
  with pytest.raises(RuntimeError):
    torch.mm(a, torch.ones(3, 2, dtype=torch.float64, device=DEV))
  with pytest.raises(RuntimeError):
    torch.bmm(torch.ones(2, 2, 3, device=DEV), torch.ones(3, 3, 2, device=DEV))
  with pytest.raises(RuntimeError):
    torch.addmm(torch.ones(3, device=DEV), a, torch.ones(4, 5, device=DEV))
  r = torch.mm(a, torch.ones(3, 2, device=DEV))
  assert torch.equal(r.cpu(), torch.full((2, 2), 3.0))


# ------------------------------------------------------------------- views


def test_view_ops():
  x = make((2, 3, 4), torch.float32, seed=1)
  check(lambda t: t.view(6, 4), x, ops=['view_copy'])
  check(lambda t: t.view(-1), x, ops=['view_copy'])
  check(lambda t: t.reshape(4, -1, 2), x, ops=['view_copy'])
  check(lambda t: torch.ops.aten._unsafe_view(t, [3, 8]), x, ops=['_unsafe_view'])
  check(lambda t: t.permute(2, 0, 1), x, ops=['permute_copy'])
  check(lambda t: t.permute(-1, -3, -2), x, ops=['permute_copy'])
  check(lambda t: t.transpose(0, 2), x, ops=['transpose_copy'])
  check(lambda t: t.transpose(-1, 1), x, ops=['transpose_copy'])
  check(lambda t: t[0].t(), x, ops=['t_copy'])
  check(lambda t: t[0, 0].t(), x, ops=['t_copy'])
  check(lambda t: t[:, :1].expand(5, 2, 3, 4), x, ops=['expand_copy'])
  check(lambda t: t[:, :1].expand(-1, 3, -1), x, ops=['expand_copy'])
  check(lambda t: t[0, 0, 0].expand(2, 3), x, ops=['expand_copy'])
  check(lambda t: t[:, 1:3], x, ops=['slice_copy'])
  check(lambda t: t[..., ::2], x, ops=['slice_copy'])
  check(lambda t: t[:, -2:], x, ops=['slice_copy'])
  check(lambda t: t[:, 1:100:2], x, ops=['slice_copy'])
  check(lambda t: t[:, 2:1], x, ops=['slice_copy'])
  check(lambda t: t[1], x, ops=['select_copy'])
  check(lambda t: t[:, -1], x, ops=['select_copy'])
  check(lambda t: t.select(2, 3), x, ops=['select_copy'])
  check(lambda t: t.unsqueeze(0), x, ops=['unsqueeze_copy'])
  check(lambda t: t.unsqueeze(-1), x, ops=['unsqueeze_copy'])
  check(lambda t: t.unsqueeze(2), x, ops=['unsqueeze_copy'])
  y = make((1, 3, 1, 4), torch.float32, seed=2)
  check(lambda t: t.squeeze(), y, ops=['squeeze_copy'])
  check(lambda t: t.squeeze(0), y, ops=['squeeze_copy'])
  check(lambda t: t.squeeze(1), y, ops=['squeeze_copy'])  # not size 1: unchanged
  check(lambda t: t.squeeze(-2), y, ops=['squeeze_copy'])
  check(lambda t: t.squeeze((0, 2)), y, ops=['squeeze_copy'])
  check(lambda t: t.squeeze((0, 1)), y, ops=['squeeze_copy'])
  check(lambda t: torch.ops.aten.alias(t), x, ops=['alias_copy'])
  check(lambda t: t.detach(), x, ops=['detach_copy'])
  check(lambda t: torch.tensor(1.0).to(t.device).squeeze(), x)


@pytest.mark.parametrize('dtype', [torch.bfloat16, torch.int32, torch.bool], ids=ids)
def test_view_ops_other_dtypes(dtype):
  x = make((2, 3, 4), dtype, seed=1)
  check(lambda t: t.permute(1, 2, 0)[1:, ::2].reshape(-1).unsqueeze(0).expand(2, -1), x)


def test_view_errors():
  x = torch.ones(2, 3, device=DEV)
  with pytest.raises(RuntimeError):
    x.view(4, 2)
  with pytest.raises(RuntimeError):
    x.permute(0, 0)
  with pytest.raises(RuntimeError):
    x.expand(3, 3)
  with pytest.raises((RuntimeError, IndexError)):
    x[5]
  with pytest.raises((RuntimeError, IndexError)):
    x.select(1, 3)
  with pytest.raises((RuntimeError, IndexError)):
    x.unsqueeze(4)
  assert torch.equal(x.view(3, 2).cpu(), torch.ones(3, 2))


def test_scatter_ops_direct():
  base = make((4, 5), torch.float32, seed=1)
  src = make((4, 2), torch.float32, seed=2)
  check(lambda b, s: torch.slice_scatter(b, s, 1, 1, 5, 2), base, src, ops=['slice_scatter'])
  check(lambda b, s: torch.slice_scatter(b, s, 1, -2), base, src, ops=['slice_scatter'])
  row = make((1, 5), torch.float32, seed=3)
  check(lambda b, s: torch.slice_scatter(b, s, 0, 3), base, row, ops=['slice_scatter'])
  check(lambda b, s: torch.slice_scatter(b, s, 0, 1, 3, 2), base, row, ops=['slice_scatter'])
  check(lambda b, s: torch.select_scatter(b, s[:, 0], 1, 3), base, src, ops=['select_scatter'])
  check(lambda b, s: torch.select_scatter(b, s[0], 0, -1), base, row, ops=['select_scatter'])
  check(lambda b, s: torch.select_scatter(b, s[0, :1], 0, 1), base[:, :1].contiguous(), row,
        ops=['select_scatter'])
  check(lambda b, s: torch.slice_scatter(b, s.int(), 1, 0, 2), base, src, ops=['slice_scatter'])


def test_slice_scatter_wrong_size_raises():
  with pytest.raises(RuntimeError):
    torch.slice_scatter(torch.zeros(4, 5, device=DEV), torch.ones(4, 3, device=DEV), 1, 0, 2)


def _through_views(cases):
  for name, fn, ops in cases:
    x = make((3, 4), torch.float32, seed=7)
    expected = x.clone()
    fn(expected)
    dx = x.to(DEV)
    with lowered(*ops):
      fn(dx)
    assert_same(dx, expected)


def test_inplace_through_views():
  _through_views([
      ('select add_', lambda t: t[1].add_(1), ['select_copy', 'select_scatter', 'add']),
      ('view mul_', lambda t: t.view(2, 6).mul_(2), ['view_copy', 'mul']),
      ('t add_', lambda t: t.t().add_(1), ['t_copy', 'add']),
      ('slice zero_', lambda t: t[::2].zero_(), ['slice_copy', 'slice_scatter', 'zero']),
      ('col slice mul_', lambda t: t[:, 1:3].mul_(-1), ['slice_copy', 'slice_scatter', 'mul']),
      ('nested', lambda t: t[1:][:, 2].sub_(5), ['slice_copy', 'select_copy', 'select_scatter', 'slice_scatter',
                                                   'sub']),
      ('permute', lambda t: t.unsqueeze(0).permute(2, 0, 1)[0].add_(10), ['permute_copy', 'add']),
      ('fill_ col', lambda t: t[:, 0].fill_(5), ['fill', 'select_scatter']),
      ('clamp_ row', lambda t: t[2].clamp_(0, 0.1), ['clamp']),
      ('squeeze', lambda t: t.unsqueeze(1).squeeze(1)[0].relu_(), ['relu']),
  ])


def test_setitem():
  _through_views([
      ('col = 5', lambda t: t.__setitem__((slice(None), 0), 5), ['select_scatter']),
      ('row = tensor', lambda t: t.__setitem__(1, torch.arange(4.0, device=t.device)), ['select_scatter']),
      ('block = 0', lambda t: t.__setitem__((slice(0, 2), slice(1, 3)), 0), ['slice_scatter']),
  ])


def test_views_see_base_updates():
  x = torch.zeros(3, 4, device=DEV)
  v = x.view(12)
  row = x[1]
  tt = x.t()
  x.add_(1)
  x[1, 2] = 7
  expected = torch.ones(3, 4)
  expected[1, 2] = 7
  assert torch.equal(v.cpu(), expected.view(12))
  assert torch.equal(row.cpu(), expected[1])
  assert torch.equal(tt.cpu(), expected.t())
  # A write through one view shows in the base and in the other views.
  row.mul_(2)
  expected[1].mul_(2)
  assert torch.equal(x.cpu(), expected)
  assert torch.equal(v.cpu(), expected.view(12))
  assert torch.equal(tt.cpu(), expected.t())


def test_view_values_after_mark_step():
  x = torch.arange(12.0, device=DEV).view(3, 4)
  y = x[:, 1]
  xm.mark_step()
  y.add_(100)
  xm.mark_step()
  expected = torch.arange(12.0).view(3, 4)
  expected[:, 1] += 100
  assert torch.equal(x.cpu(), expected)


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


# ------------------------------------------------------------- dtype casts


CAST_INPUT = torch.tensor([[-2.7, -1.0, -0.5, 0.0], [0.25, 0.5, 1.5, 100.75]])


@pytest.mark.parametrize('cast', [
    lambda t: t.to(torch.bfloat16), lambda t: t.int(), lambda t: t.long(), lambda t: t.bool(),
    lambda t: t.double(), lambda t: t.float(), lambda t: t.to(torch.bfloat16).float(),
    lambda t: t.int().float(), lambda t: t.bool().int(), lambda t: t.double().to(torch.bfloat16),
    lambda t: t.to(torch.int64).to(torch.bfloat16), lambda t: t.half(),
], ids=['bf16', 'int', 'long', 'bool', 'double', 'float', 'bf16-float', 'int-float', 'bool-int', 'double-bf16',
        'long-bf16', 'half'])
def test_casts(cast):
  check(cast, CAST_INPUT, ops=[] if cast(CAST_INPUT) is CAST_INPUT else ['_to_copy'])


def test_cast_same_dtype_and_int_bool():
  x = torch.tensor([-3, 0, 2, 7], dtype=torch.int64)
  check(lambda t: t.bool(), x, ops=['_to_copy'])
  check(lambda t: t.int(), x, ops=['_to_copy'])
  check(lambda t: t.to(torch.float32), x, ops=['_to_copy'])
  check(lambda t: t.bool().float(), x, ops=['_to_copy'])
  d = x.to(DEV)
  assert d.to(torch.int64) is d  # no-op cast keeps the tensor


@needs_devices(2)
def test_transfers_between_devices():
  x = make((2, 3), torch.float32)
  with lowered('_to_copy'):
    d1 = x.to('xla:1')
  assert d1.device == torch.device('xla', 1)
  assert_same(d1, x)
  d0 = d1.to(DEV)
  assert d0.device == DEV
  assert_same(d0 * 2, x * 2)
  assert_same(d1.to(DEV, torch.int32), x.int())


def test_clone():
  x = make((3, 4), torch.float32)
  d = x.to(DEV)
  with lowered('clone'):
    c = d.clone()
  c.add_(1)
  assert_same(d, x)
  assert_same(c, x + 1)


def test_copy_from_ops():
  x = make((3, 4), torch.float32)
  d = x.to(DEV)
  with lowered('_copy_from'):
    dst = torch.ops.aten._copy_from(d, torch.empty(3, 4, dtype=torch.float64, device=DEV))
  assert_same(dst, x.double())
  with lowered('_copy_from_and_resize'):
    dst = torch.ops.aten._copy_from_and_resize(d, torch.empty(0, device=DEV))
  assert_same(dst, x)


@needs_devices(2)
def test_copy_inplace_values():
  x = make((3, 4), torch.float32)
  d = torch.zeros(3, 4, dtype=torch.int32, device=DEV)
  d.copy_(x.to(DEV))  # device -> device, with a cast
  assert_same(d, x.int())
  d.copy_(torch.arange(4))  # host -> device, broadcast
  assert_same(d, torch.arange(4, dtype=torch.int32).expand(3, 4).contiguous())
  d.copy_(torch.ones(3, 4, device='xla:1'))  # another device
  assert_same(d, torch.ones(3, 4, dtype=torch.int32))


def test_copy_is_lowered():
  with lowered('copy'):
    d = torch.zeros(3, 4, device=DEV)
    d.copy_(torch.ones(4, device=DEV))
  assert_same(d, torch.ones(3, 4))


def test_copy_device_to_host():
  """cpu_tensor.copy_(xla_tensor): functionalization asks the XLA copy for the value, in
  the host tensor's dtype and shape, then writes it to the host tensor."""
  c = torch.zeros(2, 3)
  c.copy_(torch.ones(2, 3, device=DEV) * 3)
  assert torch.equal(c, torch.full((2, 3), 3.0))
  d = torch.zeros(2, 3, dtype=torch.float64)
  d.copy_(torch.arange(3, device=DEV))  # broadcast and cast, as eager's copy_
  assert torch.equal(d, torch.arange(3, dtype=torch.float64).expand(2, 3))
  v = torch.zeros(6)
  v[2:5].copy_(torch.ones(3, device=DEV))  # into a view of a host tensor
  assert v.tolist() == [0, 0, 1, 1, 1, 0]


# ------------------------------------------------------------------ random


def test_rand_statistics():
  xm.set_rng_state(123)
  with lowered('uniform', 'empty'):
    x = torch.rand(20000, device=DEV)
  c = x.cpu()
  assert c.dtype == torch.float32 and c.shape == (20000,)
  assert c.min() >= 0 and c.max() < 1
  assert abs(c.mean().item() - 0.5) < 0.02
  assert abs(c.std().item() - (1 / 12) ** 0.5) < 0.02
  # Not all equal, and spread over the whole range.
  assert c.min() < 0.01 and c.max() > 0.99


def test_uniform_range():
  xm.set_rng_state(7)
  x = torch.empty(20000, device=DEV)
  with lowered('uniform'):
    x.uniform_(-3, 5)
  c = x.cpu()
  assert c.min() >= -3 and c.max() < 5
  assert abs(c.mean().item() - 1.0) < 0.15
  assert abs(c.std().item() - 8 / 12**0.5) < 0.15
  b = torch.empty(1000, dtype=torch.bfloat16, device=DEV).uniform_(2, 4).cpu()
  assert b.dtype == torch.bfloat16 and b.min() >= 2 and b.max() <= 4
  d = torch.empty(1000, dtype=torch.float64, device=DEV).uniform_().cpu()
  assert d.dtype == torch.float64 and d.min() >= 0 and d.max() < 1
  assert len(set(d.tolist())) > 990


def test_uniform_errors():
  with pytest.raises(RuntimeError):
    torch.empty(3, device=DEV).uniform_(2, 1)


def test_randn_statistics():
  xm.set_rng_state(321)
  with lowered('normal', 'empty'):
    x = torch.randn(200, 100, device=DEV)
  c = x.cpu()
  assert c.shape == (200, 100) and c.dtype == torch.float32
  assert torch.isfinite(c).all()
  assert abs(c.mean().item()) < 0.03
  assert abs(c.std().item() - 1) < 0.03
  # About 68% within one standard deviation.
  assert abs((c.abs() < 1).float().mean().item() - 0.6827) < 0.02


def test_normal_inplace_statistics():
  xm.set_rng_state(5)
  x = torch.empty(20000, device=DEV)
  with lowered('normal'):
    x.normal_(3.0, 0.5)
  c = x.cpu()
  assert abs(c.mean().item() - 3) < 0.02
  assert abs(c.std().item() - 0.5) < 0.02
  b = torch.empty(5000, dtype=torch.bfloat16, device=DEV).normal_(-1, 2).cpu().float()
  assert abs(b.mean().item() + 1) < 0.15 and abs(b.std().item() - 2) < 0.15
  z = torch.empty(10, device=DEV).normal_(4.0, 0.0).cpu()
  assert torch.equal(z, torch.full((10,), 4.0))
  with pytest.raises(RuntimeError):
    torch.empty(3, device=DEV).normal_(0, -1)


def test_random_int_tensor_raises():
  with pytest.raises(RuntimeError):
    torch.empty(3, dtype=torch.int32, device=DEV).uniform_()


def test_rng_repeatability():
  xm.set_rng_state(42)
  a = torch.rand(100, device=DEV)
  b = torch.randn(100, device=DEV)
  a2 = torch.rand(100, device=DEV)
  ca, cb, ca2 = a.cpu(), b.cpu(), a2.cpu()
  assert not torch.equal(ca, ca2)  # the state advances
  xm.set_rng_state(42)
  assert torch.equal(torch.rand(100, device=DEV).cpu(), ca)
  assert torch.equal(torch.randn(100, device=DEV).cpu(), cb)
  assert torch.equal(torch.rand(100, device=DEV).cpu(), ca2)
  xm.set_rng_state(43)
  assert not torch.equal(torch.rand(100, device=DEV).cpu(), ca)


def test_rng_repeatability_across_mark_step():
  xm.set_rng_state(9)
  a = torch.rand(50, device=DEV)
  xm.mark_step()
  b = torch.rand(50, device=DEV)
  xm.mark_step()
  ca, cb = a.cpu(), b.cpu()
  assert not torch.equal(ca, cb)
  xm.set_rng_state(9)
  a = torch.rand(50, device=DEV)
  b = torch.rand(50, device=DEV)
  assert torch.equal(a.cpu(), ca) and torch.equal(b.cpu(), cb)


@needs_devices(2)
def test_rng_state_per_device():
  xm.set_rng_state(11, DEV)
  a = torch.rand(20, device=DEV).cpu()
  xm.set_rng_state(11, 'xla:1')
  b = torch.rand(20, device='xla:1').cpu()
  assert torch.equal(a, b)
  xm.set_rng_state(1234)
  assert isinstance(xm.get_rng_state(), int)


# ------------------------------------------------ counter cases of the entries above


def _view_below_functionalization(x, size):
  """aten::view as a composite kernel calls it: on the unwrapped XLA tensor."""
  inner = torch._from_functional_tensor(x)
  with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.Functionalize)):
    out = inner.view(size)
  return torch._to_functional_tensor(out)


def _x():
  return make((2, 3), torch.float32, 'pos', seed=11).to(DEV)


# yaml entry -> (code using it on the device, counter without "xla::"); see op_testing.py
COUNTER_CASES = {
    'empty.memory_format': (lambda: torch.empty(2, 3, device=DEV), 'empty'),
    'empty_strided': (lambda: torch.empty_strided((2, 3), (3, 1), device=DEV), 'empty_strided'),
    '_to_copy': (lambda: _x().to(torch.bfloat16), '_to_copy'),
    '_copy_from': (lambda: torch.ops.aten._copy_from(_x(), torch.empty(2, 3, device=DEV)), '_copy_from'),
    '_copy_from_and_resize': (lambda: torch.ops.aten._copy_from_and_resize(_x(), torch.empty(0, device=DEV)),
                              '_copy_from_and_resize'),
    'copy': (lambda: torch.ops.aten.copy(_x(), _x() * 2), 'copy'),
    '_propagate_xla_data': (lambda: _x().add_(1), '_propagate_xla_data'),
    'clone': (lambda: _x().clone(), 'clone'),
    'fill.Scalar': (lambda: _x().fill_(2), 'fill'),
    'fill.Tensor': (lambda: _x().fill_(torch.tensor(2.0, device=DEV)), 'fill'),
    'zero': (lambda: _x().zero_(), 'zero'),
    'arange.start_out': (lambda: torch.arange(1, 5, device=DEV), 'arange'),
    '_local_scalar_dense': (lambda: _x().sum().item(), '_local_scalar_dense'),
    'uniform': (lambda: _x().uniform_(), 'uniform'),
    'normal_functional': (lambda: _x().normal_(), 'normal'),
    'add.Tensor': (lambda: _x() + _x(), 'add'),
    'sub.Tensor': (lambda: _x() - _x(), 'sub'),
    'mul.Tensor': (lambda: _x() * _x(), 'mul'),
    'div.Tensor': (lambda: _x() / _x(), 'div'),
    'div.Tensor_mode': (lambda: torch.div(_x(), _x(), rounding_mode='floor'), 'div'),
    'maximum': (lambda: torch.maximum(_x(), _x()), 'maximum'),
    'minimum': (lambda: torch.minimum(_x(), _x()), 'minimum'),
    'pow.Tensor_Scalar': (lambda: _x() ** 3, 'pow'),
    'pow.Tensor_Tensor': (lambda: _x() ** _x(), 'pow'),
    'threshold_backward': (lambda: torch.ops.aten.threshold_backward(_x(), _x(), 0.5), 'threshold_backward'),
    'sigmoid_backward': (lambda: torch.ops.aten.sigmoid_backward(_x(), _x()), 'sigmoid_backward'),
    'tanh_backward': (lambda: torch.ops.aten.tanh_backward(_x(), _x()), 'tanh_backward'),
    'clamp': (lambda: _x().clamp(0, 1), 'clamp'),
    'where.self': (lambda: torch.where(_x() > 1, _x(), _x()), 'where'),
    'sum': (lambda: _x().sum(), 'sum'),
    'sum.dim_IntList': (lambda: _x().sum(1), 'sum'),
    'mean': (lambda: _x().mean(), 'mean'),
    'mean.dim': (lambda: _x().mean(0), 'mean'),
    'mm': (lambda: _x() @ _x().t(), 'mm'),
    'bmm': (lambda: torch.bmm(_x()[None], _x().t()[None]), 'bmm'),
    'addmm': (lambda: torch.addmm(_x()[0], _x().t(), _x()), 'addmm'),
    'view_copy': (lambda: _x().view(6), 'view_copy'),
    '_unsafe_view': (lambda: torch.ops.aten._unsafe_view(_x(), [6]), '_unsafe_view'),
    'view': (lambda: _view_below_functionalization(_x(), [3, 2]), 'view'),
    'permute_copy': (lambda: _x().permute(1, 0), 'permute_copy'),
    'transpose_copy.int': (lambda: _x().transpose(0, 1), 'transpose_copy'),
    't_copy': (lambda: _x().t(), 't_copy'),
    'expand_copy': (lambda: _x()[:1].expand(4, 3), 'expand_copy'),
    'slice_copy.Tensor': (lambda: _x()[:, 1:], 'slice_copy'),
    'select_copy.int': (lambda: _x()[1], 'select_copy'),
    'unsqueeze_copy': (lambda: _x().unsqueeze(1), 'unsqueeze_copy'),
    'squeeze_copy': (lambda: _x()[None].squeeze(), 'squeeze_copy'),
    'squeeze_copy.dim': (lambda: _x()[None].squeeze(0), 'squeeze_copy'),
    'squeeze_copy.dims': (lambda: _x()[None, :, None].squeeze((0, 2)), 'squeeze_copy'),
    'alias_copy': (lambda: torch.ops.aten.alias(_x()), 'alias_copy'),
    'detach_copy': (lambda: _x().detach(), 'detach_copy'),
    'slice_scatter': (lambda: torch.slice_scatter(_x(), _x()[:, :1], 1, 0, 1), 'slice_scatter'),
    'select_scatter': (lambda: torch.select_scatter(_x(), _x()[0], 0, 1), 'select_scatter'),
}
for _n in ['neg', 'abs', 'exp', 'log', 'sqrt', 'rsqrt', 'tanh', 'sigmoid', 'sin', 'cos', 'floor', 'ceil', 'relu',
           'logical_not']:
  COUNTER_CASES[_n] = ((lambda n: lambda: getattr(torch, n)(_x()))(_n), _n)
COUNTER_CASES['bitwise_not'] = (lambda: ~(_x() > 1), 'bitwise_not')
for _n in ['eq', 'ne', 'lt', 'le', 'gt', 'ge']:
  COUNTER_CASES[_n + '.Tensor'] = ((lambda n: lambda: getattr(torch, n)(_x(), _x()[0]))(_n), _n)
  COUNTER_CASES[_n + '.Scalar'] = ((lambda n: lambda: getattr(torch, n)(_x(), 1.0))(_n), _n)
for _n in ['logical_and', 'logical_or', 'logical_xor']:
  COUNTER_CASES[_n] = ((lambda n: lambda: getattr(torch, n)(_x() > 1, _x()))(_n), _n)


def _grad_of(fn):
  def run():
    x = make((3, 4), torch.float32, seed=5).to(DEV).requires_grad_()
    fn(x).sum().backward()
    return x.grad
  return run


COUNTER_CASES['slice_backward'] = (_grad_of(lambda x: x[:, 1:3]), 'slice_backward')
COUNTER_CASES['select_backward'] = (_grad_of(lambda x: x[1]), 'select_backward')


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.bool], ids=ids)
def test_item(dtype):
  x = make((2, 3), dtype, seed=3)
  with lowered('_local_scalar_dense'):
    got = x.to(DEV)[1, 2].item()
  assert type(got) is type(x[1, 2].item())
  assert got == x[1, 2].item()


def test_item_of_many_elements_raises():
  with pytest.raises(RuntimeError, match='elements cannot be converted to Scalar'):
    torch.ones(2, device=DEV).item()


def test_view_below_functionalization_reshapes():
  x = make((2, 6), torch.float32, seed=4)
  with lowered('view'):
    got = _view_below_functionalization(x.to(DEV), [4, 3])
  assert_same(got, x.view(4, 3))


def test_embedding_forward_runs_lowered():
  weight = make((10, 4), torch.float32, seed=6)
  idx = torch.tensor([[1, 3], [9, 0]])
  check(lambda w, i: torch.nn.functional.embedding(i, w), weight, idx, ops=['view', 'index_select'])
