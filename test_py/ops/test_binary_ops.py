"""Binary element-wise ops (add, sub, mul, div, pow, maximum, minimum, comparisons,
logical ops, rsub) on the XLA device against eager PyTorch on the CPU: values, dtype and
shape, broadcasting, type promotion, Python scalar operands, rounding modes, NaN, the
in-place and out= variants, and the counters: xla::<op> must grow and no aten::<op> (CPU
fallback) counter may appear. The other binary math functions: test_pointwise_ops.py."""

import pytest
import torch

from testing.op_testing import ALL, DEV, assert_same, check, ids, lowered, make
from testing.counter_cases import floats as _f, positive as _pos


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


# ---- rsub ----------------------------------------------------------------------------------


@pytest.mark.parametrize('dtype', ALL, ids=ids)
def test_rsub(dtype):
  a, b = make((3, 4), dtype), make((3, 4), dtype, seed=1)
  check(lambda x, y: torch.rsub(x, y, alpha=2), a, b, ops=('rsub',))
  check(lambda x: torch.rsub(x, 3), a, ops=('rsub',))
  check(lambda x: 2.5 - x, a, ops=('rsub',))


# ---- counter cases ------------------------------------------------------------

COUNTER_CASES = {
    '_propagate_xla_data': (lambda: _pos().add_(1), '_propagate_xla_data'),
    'add.Tensor': (lambda: _pos() + _pos(), 'add'),
    'sub.Tensor': (lambda: _pos() - _pos(), 'sub'),
    'mul.Tensor': (lambda: _pos() * _pos(), 'mul'),
    'div.Tensor': (lambda: _pos() / _pos(), 'div'),
    'div.Tensor_mode': (lambda: torch.div(_pos(), _pos(), rounding_mode='floor'), 'div'),
    'maximum': (lambda: torch.maximum(_pos(), _pos()), 'maximum'),
    'minimum': (lambda: torch.minimum(_pos(), _pos()), 'minimum'),
    'pow.Tensor_Scalar': (lambda: _pos() ** 3, 'pow'),
    'pow.Tensor_Tensor': (lambda: _pos() ** _pos(), 'pow'),
    'rsub.Tensor': (lambda: torch.rsub(_f(), _f()), 'rsub'),
    'rsub.Scalar': (lambda: torch.rsub(_f(), 2.0), 'rsub'),
}
for _n in ['eq', 'ne', 'lt', 'le', 'gt', 'ge']:
  COUNTER_CASES[_n + '.Tensor'] = ((lambda n: lambda: getattr(torch, n)(_pos(), _pos()[0]))(_n), _n)
  COUNTER_CASES[_n + '.Scalar'] = ((lambda n: lambda: getattr(torch, n)(_pos(), 1.0))(_n), _n)
for _n in ['logical_and', 'logical_or', 'logical_xor']:
  COUNTER_CASES[_n] = ((lambda n: lambda: getattr(torch, n)(_pos() > 1, _pos()))(_n), _n)
