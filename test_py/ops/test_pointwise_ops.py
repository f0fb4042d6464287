"""Element-wise math and activations (forward and backward) on the XLA device against
eager PyTorch on the CPU: values, dtype and shape, float32 / bfloat16 / float64 and
integer types where the op takes them, and the xla::/aten:: counters.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import ALL, DEV, FLOATS, INTS, assert_same, check, ids, lowered, make, to_dev

F64 = [torch.float64]
FL = FLOATS + F64

# name: (fn, dtypes, input kind, counter)
UNARY = {
    'erf': (torch.erf, FL + INTS, 'any', 'erf'),
    'erfinv': (lambda t: torch.erfinv(t * 0.3), FL, 'any', 'erfinv'),
    'log1p': (torch.log1p, FL + INTS, 'pos', 'log1p'),
    'expm1': (torch.expm1, FL + INTS, 'any', 'expm1'),
    'log2': (torch.log2, FL + INTS, 'pos', 'log2'),
    'log10': (torch.log10, FL + INTS, 'pos', 'log10'),
    'exp2': (torch.exp2, FL + INTS, 'any', 'exp2'),
    'tan': (torch.tan, FL + INTS, 'any', 'tan'),
    'asin': (lambda t: torch.asin(t * 0.3), FL, 'any', 'asin'),
    'acos': (lambda t: torch.acos(t * 0.3), FL, 'any', 'acos'),
    'atan': (torch.atan, FL + INTS, 'any', 'atan'),
    'sinh': (torch.sinh, FL + INTS, 'any', 'sinh'),
    'cosh': (torch.cosh, FL + INTS, 'any', 'cosh'),
    'asinh': (torch.asinh, FL + INTS, 'any', 'asinh'),
    'acosh': (lambda t: torch.acosh(t + 1), FL, 'pos', 'acosh'),
    'atanh': (lambda t: torch.atanh(t * 0.3), FL, 'any', 'atanh'),
    'reciprocal': (torch.reciprocal, FL + INTS, 'nonzero', 'reciprocal'),
    'sign': (torch.sign, FL + INTS + [torch.bool, torch.uint8], 'any', 'sign'),
    'sgn': (torch.sgn, FL + INTS, 'any', 'sgn'),
    'round': (lambda t: torch.round(t * 3), FL + INTS, 'any', 'round'),
    'round_decimals': (lambda t: torch.round(t * 10, decimals=1), FL, 'any', 'round'),
    'round_neg_decimals': (lambda t: torch.round(t * 1000, decimals=-2), [torch.float32, torch.float64], 'any', 'round'),
    'trunc': (lambda t: torch.trunc(t * 3), FL + INTS, 'any', 'trunc'),
    'frac': (lambda t: torch.frac(t * 3), FL, 'any', 'frac'),
    'isnan': (lambda t: torch.isnan(t / t), FL + INTS, 'any', 'isnan'),
    'sigmoid_int': (torch.sigmoid, INTS + F64, 'any', 'sigmoid'),
    'abs': (torch.abs, F64, 'any', 'abs'),
    'silu': (F.silu, FL, 'any', 'silu'),
    'mish': (F.mish, FL, 'any', 'mish'),
    'hardsigmoid': (lambda t: F.hardsigmoid(t * 4), FL, 'any', 'hardsigmoid'),
    'hardswish': (lambda t: F.hardswish(t * 4), FL, 'any', 'hardswish'),
    'hardtanh': (lambda t: F.hardtanh(t, -0.5, 0.75), FL + INTS, 'any', 'hardtanh'),
    'relu6': (lambda t: F.relu6(t * 4), FL, 'any', 'hardtanh'),
    'leaky_relu': (lambda t: F.leaky_relu(t, 0.2), FL, 'any', 'leaky_relu'),
    'elu': (lambda t: F.elu(t, 1.5), FL, 'any', 'elu'),
    'selu': (F.selu, FL, 'any', 'elu'),
    'celu': (lambda t: F.celu(t, 0.7), FL, 'any', 'elu'),
    'softplus': (lambda t: F.softplus(t * 8, beta=2, threshold=5), FL, 'any', 'softplus'),
    'logit': (lambda t: torch.logit(torch.sigmoid(t)), FL, 'any', 'logit'),
    'logit_eps': (lambda t: torch.logit(torch.sigmoid(t * 4), eps=0.1), FL, 'any', 'logit'),
    'erfc': (lambda t: torch.erfc(t * 2), FL + INTS, 'any', 'erfc'),
    'lgamma': (torch.lgamma, FL, 'pos', 'lgamma'),
    'digamma': (torch.digamma, FL, 'pos', 'digamma'),
    'sinc': (lambda t: torch.sinc(torch.where(t.abs() < 0.3, torch.zeros_like(t), t)), FL, 'any', 'sinc'),
    'signbit': (torch.signbit, FL + INTS + [torch.uint8], 'any', 'signbit'),
    'isposinf': (lambda t: torch.isposinf(t / 0 if t.is_floating_point() else t), FL + INTS, 'any', 'isposinf'),
    'isneginf': (lambda t: torch.isneginf(t / 0 if t.is_floating_point() else t), FL + INTS, 'any', 'isneginf'),
    'hardshrink': (lambda t: F.hardshrink(t, 0.6), FL, 'any', 'hardshrink'),
    'softshrink': (lambda t: F.softshrink(t, 0.4), FL, 'any', 'softshrink'),
    'threshold': (lambda t: F.threshold(t, 0.1, -2.0), FL + INTS, 'any', 'threshold'),
    'logsigmoid': (lambda t: F.logsigmoid(t * 10), FL, 'any', 'log_sigmoid_forward'),
    'glu': (lambda t: F.glu(t[:, :4]), FL, 'any', 'glu'),
    'glu_dim0': (lambda t: F.glu(t[:2], 0), FL, 'any', 'glu'),
}
UNARY_CASES = [(n, d) for n, (_, ds, _, _) in UNARY.items() for d in ds]


@pytest.mark.parametrize('name,dtype', UNARY_CASES, ids=[f'{n}-{ids(d)}' for n, d in UNARY_CASES])
def test_unary(name, dtype):
  fn, _, kind, op = UNARY[name]
  check(fn, make((3, 5), dtype, kind), ops=[op])


@pytest.mark.parametrize('name', ['erf', 'log1p', 'expm1', 'silu', 'sign', 'trunc', 'atan', 'reciprocal'])
def test_unary_0d_and_empty(name):
  fn, _, _, op = UNARY[name]
  check(fn, torch.tensor(0.75), ops=[op])
  check(fn, torch.zeros(0, 3), ops=[op])


def test_special_values():
  x = torch.tensor([float('nan'), float('inf'), -float('inf'), 0.0, -0.0, 2.5, -2.5, 0.5, -0.5, 1.5])
  for fn, op in [(torch.sign, 'sign'), (torch.round, 'round'), (torch.trunc, 'trunc'), (torch.isnan, 'isnan'),
                 (torch.isinf, 'abs'), (torch.isfinite, None), (torch.nan_to_num, 'nan_to_num'),
                 (lambda t: torch.nan_to_num(t, nan=1.0, posinf=2.0, neginf=-3.0), 'nan_to_num'), (torch.erf, 'erf'),
                 (torch.expm1, 'expm1'), (F.silu, 'silu'), (F.softplus, 'softplus')]:
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
      check(fn, x.to(dtype), ops=[op] if op else [])


def test_nan_to_num_ints_and_default_max():
  check(torch.nan_to_num, make((4,), torch.int64), ops=['nan_to_num'])
  for dtype in (torch.float32, torch.bfloat16, torch.float64):
    x = torch.tensor([float('inf'), -float('inf'), float('nan')], dtype=dtype)
    check(torch.nan_to_num, x, ops=['nan_to_num'])


# name: (fn, dtypes, kind of the second operand, counter)
BINARY = {
    'remainder': (torch.remainder, FL + INTS, 'nonzero', 'remainder'),
    'remainder_scalar': (lambda a, b: torch.remainder(a, -1.5), FL, 'any', 'remainder'),
    'remainder_int_scalar': (lambda a, b: a % 3, INTS, 'any', 'remainder'),
    'fmod': (torch.fmod, FL + INTS, 'nonzero', 'fmod'),
    'fmod_scalar': (lambda a, b: torch.fmod(a, 2), FL + INTS, 'any', 'fmod'),
    'atan2': (torch.atan2, FL + INTS, 'any', 'atan2'),
    'hypot': (torch.hypot, FL, 'any', 'hypot'),
    'logaddexp': (torch.logaddexp, FL, 'any', 'logaddexp'),
    'heaviside': (torch.heaviside, FL + INTS, 'any', 'heaviside'),
    'floor_divide': (torch.floor_divide, FL + INTS, 'nonzero', 'floor_divide'),
    'floor_divide_scalar': (lambda a, b: a // 2, FL + INTS, 'any', 'floor_divide'),
    'div_floor': (lambda a, b: torch.div(a, b, rounding_mode='floor'), FL, 'nonzero', 'div'),
    'clamp_tensor': (lambda a, b: torch.clamp(a, min=b, max=b + 1), FL + INTS, 'any', 'clamp'),
    'clamp_min_tensor': (lambda a, b: torch.clamp_min(a, b), FL + INTS, 'any', 'clamp_min'),
    'clamp_max_tensor': (lambda a, b: torch.clamp_max(a, b), FL + INTS, 'any', 'clamp_max'),
    'clamp_min': (lambda a, b: torch.clamp_min(a, 0.5), FL + INTS, 'any', 'clamp_min'),
    'clamp_max': (lambda a, b: torch.clamp_max(a, -1), FL + INTS, 'any', 'clamp_max'),
    'maximum': (torch.maximum, F64, 'any', 'maximum'),
    'add': (lambda a, b: a + 2 * b - 1, F64, 'any', 'add'),
    'mul_div': (lambda a, b: a * b / 3, F64, 'nonzero', 'div'),
    'pow': (lambda a, b: a.abs() ** b, F64, 'any', 'pow'),
    'eq': (lambda a, b: (a > 0) == (b > 0), FL + INTS, 'any', 'eq'),
    'copysign': (torch.copysign, FL + INTS, 'any', 'copysign'),
    'fmax': (torch.fmax, FL + INTS, 'any', 'fmax'),
    'fmin': (torch.fmin, FL + INTS, 'any', 'fmin'),
    'xlogy': (lambda a, b: torch.xlogy(torch.where(a.abs() < 0.5, torch.zeros_like(a), a), b.abs()), FL, 'any', 'xlogy'),
    'pow_scalar_base': (lambda a, b: torch.pow(2, a.abs()), FL + INTS, 'any', 'pow'),
    'pow_scalar_base_f': (lambda a, b: torch.pow(1.5, a), FL + INTS, 'any', 'pow'),
}
BINARY_CASES = [(n, d) for n, (_, ds, _, _) in BINARY.items() for d in ds]


@pytest.mark.parametrize('name,dtype', BINARY_CASES, ids=[f'{n}-{ids(d)}' for n, d in BINARY_CASES])
def test_binary(name, dtype):
  fn, _, kind, op = BINARY[name]
  a = make((3, 5), dtype, 'any', seed=1)
  b = make((5,), dtype, kind, seed=2)
  if name == 'heaviside':
    a = torch.where(a.abs() < 0.5, torch.zeros_like(a), a)
  check(fn, a, b, ops=[op])


def test_binary_special_values():
  a = torch.tensor([5.5, -5.5, 5.5, -5.5, 0.0, float('inf'), -float('inf'), float('inf'), 3.0, 1e-8])
  b = torch.tensor([2.0, 2.0, -2.0, -2.0, 3.0, float('inf'), -float('inf'), 1.0, 0.0, 3.0])
  for fn, op in [(torch.remainder, 'remainder'), (torch.fmod, 'fmod'), (torch.logaddexp, 'logaddexp'),
                 (torch.floor_divide, 'floor_divide'), (torch.atan2, 'atan2'), (torch.hypot, 'hypot')]:
    check(fn, a, b, ops=[op])
    check(fn, a.double(), b.double(), ops=[op])


def test_mixed_promotion():
  a = make((2, 3), torch.int32)
  b = make((2, 3), torch.float32, seed=3)
  check(torch.atan2, a, b, ops=['atan2'])
  check(torch.remainder, b, make((2, 3), torch.int64, 'nonzero'), ops=['remainder'])
  check(lambda x: torch.clamp(x, min=0.5), a, ops=['clamp'])  # an int tensor with a float bound becomes float
  check(lambda x, y: torch.clamp(x, min=y), a, b, ops=['clamp'])


@pytest.mark.parametrize('dtype', INTS + [torch.uint8, torch.int16], ids=ids)
def test_bitwise(dtype):
  a = make((3, 4), dtype, 'pos', seed=1)
  b = make((4,), dtype, 'pos', seed=2)
  check(torch.bitwise_and, a, b, ops=['bitwise_and'])
  check(torch.bitwise_or, a, b, ops=['bitwise_or'])
  check(torch.bitwise_xor, a, b, ops=['bitwise_xor'])
  check(lambda x: x & 6, a, ops=['bitwise_and'])
  check(lambda x: x | 9, a, ops=['bitwise_or'])
  check(lambda x: x ^ 3, a, ops=['bitwise_xor'])
  check(torch.bitwise_left_shift, a, b, ops=['bitwise_left_shift'])
  check(torch.bitwise_right_shift, a, b, ops=['bitwise_right_shift'])
  check(lambda x: x << 2, a, ops=['bitwise_left_shift'])
  check(lambda x: x >> 1, a, ops=['bitwise_right_shift'])


def test_bitwise_signed_shift_and_bool():
  a = torch.tensor([-16, -1, 7, 1 << 20], dtype=torch.int32)
  check(lambda x: x >> 2, a, ops=['bitwise_right_shift'])
  check(lambda x: x << 3, a, ops=['bitwise_left_shift'])
  p, q = make((5,), torch.bool, seed=1), make((5,), torch.bool, seed=2)
  check(torch.bitwise_and, p, q, ops=['bitwise_and'])
  check(torch.bitwise_or, p, q, ops=['bitwise_or'])
  check(torch.bitwise_xor, p, q, ops=['bitwise_xor'])
  check(torch.eq, p, q, ops=['eq'])
  check(torch.ne, p, q, ops=['ne'])


@pytest.mark.parametrize('dtype', FL, ids=ids)
def test_addcmul_addcdiv_lerp(dtype):
  s = make((3, 4), dtype, seed=1)
  t1 = make((3, 4), dtype, seed=2)
  t2 = make((4,), dtype, 'nonzero', seed=3)
  w = make((3, 1), dtype, seed=4).abs()
  check(lambda a, b, c: torch.addcmul(a, b, c, value=-0.3), s, t1, t2, ops=['addcmul'])
  check(lambda a, b, c: torch.addcmul(a, b, c), s, t1, t2, ops=['addcmul'])
  check(lambda a, b, c: torch.addcdiv(a, b, c, value=2.5), s, t1, t2, ops=['addcdiv'])
  check(lambda a, b, c: torch.addcdiv(a, b, c), s, t1, t2, ops=['addcdiv'])
  check(lambda a, b: torch.lerp(a, b, 0.25), s, t1, ops=['lerp'])
  check(lambda a, b: torch.lerp(a, b, 0.75), s, t1, ops=['lerp'])
  check(lambda a, b, c: torch.lerp(a, b, c), s, t1, w, ops=['lerp'])


def test_nan_handling_of_new_ops():
  a = torch.tensor([float('nan'), 1.0, float('nan'), -0.0, 0.0, -2.0])
  b = torch.tensor([2.0, float('nan'), float('nan'), 1.0, -1.0, 0.0])
  for fn, op in [(torch.fmax, 'fmax'), (torch.fmin, 'fmin'), (torch.copysign, 'copysign'), (torch.xlogy, 'xlogy')]:
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
      check(fn, a.to(dtype), b.to(dtype), ops=[op])
  check(torch.signbit, a, ops=['signbit'])
  check(lambda t: torch.copysign(torch.ones_like(t), t), a, ops=['copysign'])


def test_addcmul_ints():
  a, b, c = (make((2, 3), torch.int64, seed=i) for i in range(3))
  check(lambda x, y, z: torch.addcmul(x, y, z, value=2), a, b, c, ops=['addcmul'])


BACKWARD = {
    'erf': (torch.erf, None),
    'log1p': (lambda t: torch.log1p(t.abs()), None),
    'expm1': (torch.expm1, None),
    'atan': (torch.atan, None),
    'sinh': (torch.sinh, None),
    'asinh': (torch.asinh, None),
    'tan': (torch.tan, None),
    'log2': (lambda t: torch.log2(t.abs() + 0.1), None),
    'hardtanh': (lambda t: F.hardtanh(t * 2, -1, 1.5), 'hardtanh_backward'),
    'relu6': (lambda t: F.relu6(t * 5), 'hardtanh_backward'),
    'leaky_relu': (lambda t: F.leaky_relu(t, 0.1), 'leaky_relu_backward'),
    'elu': (lambda t: F.elu(t, 1.3), 'elu_backward'),
    'selu': (F.selu, 'elu_backward'),
    'silu': (F.silu, 'silu_backward'),
    'softplus': (lambda t: F.softplus(t * 4, beta=1.5, threshold=3), 'softplus_backward'),
    'mish': (F.mish, None),
    'hardsigmoid': (lambda t: F.hardsigmoid(t * 4), 'hardsigmoid_backward'),
    'hardswish': (lambda t: F.hardswish(t * 4), 'hardswish_backward'),
    'logit': (lambda t: torch.logit(torch.sigmoid(t)), 'logit_backward'),
    'logit_eps': (lambda t: torch.logit(torch.sigmoid(t * 4), eps=0.1), 'logit_backward'),
    'addcdiv': (lambda t: torch.addcdiv(t, t, t.abs() + 1, value=0.5), None),
    'lerp': (lambda t: torch.lerp(t, t * t, 0.3), None),
    'clamp_tensor': (lambda t: torch.clamp(t, min=t.detach() * 0 - 0.5), None),
    'atan2': (lambda t: torch.atan2(t, t * t + 1), None),
    'hypot': (lambda t: torch.hypot(t, t + 1), None),
    'logaddexp': (lambda t: torch.logaddexp(t, t * 2), None),
    'hardshrink': (lambda t: F.hardshrink(t, 0.5), 'hardshrink_backward'),
    'softshrink': (lambda t: F.softshrink(t, 0.5), 'softshrink_backward'),
    'threshold': (lambda t: F.threshold(t, 0.2, 3.0), 'threshold_backward'),
    'glu': (lambda t: F.glu(torch.cat([t, t * t], 1)), 'glu_backward'),
    'logsigmoid': (lambda t: F.logsigmoid(t * 5), 'log_sigmoid_backward'),
    'xlogy': (lambda t: torch.xlogy(t, t.abs() + 0.5), None),
    'erfc': (torch.erfc, None),
    'lgamma': (lambda t: torch.lgamma(t.abs() + 0.5), None),
    'copysign': (lambda t: torch.copysign(t, -t * t), None),
    'fmax': (lambda t: torch.fmax(t, t * t), None),
    'sinc': (torch.sinc, None),
}


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64], ids=ids)
@pytest.mark.parametrize('name', list(BACKWARD))
def test_backward(name, dtype):
  fn, op = BACKWARD[name]
  x = make((4, 5), dtype, seed=7)
  g = make((4, 5), dtype, seed=8)
  xc = x.clone().requires_grad_()
  fn(xc).backward(g)
  xd = x.to(DEV).requires_grad_()
  with lowered(*([op] if op else [])):
    fn(xd).backward(g.to(DEV))
    grad = xd.grad.cpu()
  assert grad.dtype == xc.grad.dtype
  torch.testing.assert_close(grad, xc.grad, rtol=1e-4, atol=1e-5)


def test_bfloat16_backward():
  x = make((4, 5), torch.bfloat16, seed=7)
  for fn in (F.silu, F.elu, F.hardswish, lambda t: F.leaky_relu(t, 0.1)):
    xc = x.clone().requires_grad_()
    fn(xc).sum().backward()
    xd = x.to(DEV).requires_grad_()
    fn(xd).sum().backward()
    assert_same(xd.grad, xc.grad)


BAD = [
    ('frac', lambda: torch.frac(torch.ones(2, dtype=torch.int64, device=DEV))),
    ('lerp', lambda: torch.lerp(torch.ones(2, device=DEV), torch.ones(2, device=DEV, dtype=torch.float64), 0.5)),
    ('addcdiv', lambda: torch.addcdiv(torch.ones(2, device=DEV), torch.ones(2, dtype=torch.int64, device=DEV),
                                      torch.ones(2, dtype=torch.int64, device=DEV))),
    ('addcmul', lambda: torch.addcmul(torch.ones(2, 3, device=DEV), torch.ones(4, device=DEV), torch.ones(3, device=DEV))),
    ('heaviside', lambda: torch.heaviside(torch.ones(2, device=DEV), torch.ones(2, dtype=torch.float64, device=DEV))),
    ('bitwise_and', lambda: torch.bitwise_and(torch.ones(2, device=DEV), torch.ones(2, device=DEV))),
    ('bitwise_left_shift', lambda: torch.ones(2, device=DEV) << 1),
    ('hypot', lambda: torch.hypot(torch.ones(2, 3, device=DEV), torch.ones(4, device=DEV))),
    ('remainder', lambda: torch.remainder(torch.ones(2, device=DEV, dtype=torch.bool), True)),
    ('clamp', lambda: torch.clamp(torch.ones(2, device=DEV), min=torch.ones(3, device=DEV))),
    ('leaky_relu', lambda: F.leaky_relu(torch.ones(2, dtype=torch.int64, device=DEV))),
    ('silu', lambda: F.silu(torch.ones(2, dtype=torch.int64, device=DEV))),
    ('hardtanh', lambda: torch.ops.aten.hardtanh(torch.ones(2, device=DEV), 2.0, 1.0)),
    ('abs', lambda: torch.abs(torch.ones(2, dtype=torch.bool, device=DEV))),
    ('round', lambda: torch.round(torch.ones(2, dtype=torch.int64, device=DEV), decimals=2)),
    ('glu', lambda: F.glu(torch.ones(2, 3, device=DEV))),
    ('softshrink', lambda: torch.ops.aten.softshrink(torch.ones(2, device=DEV), -1.0)),
    ('hardshrink', lambda: F.hardshrink(torch.ones(2, dtype=torch.int64, device=DEV))),
]


@pytest.mark.parametrize('op,fn', BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises(op, fn):
  with pytest.raises((RuntimeError, ValueError, TypeError)) as e:
    fn()
  assert op in str(e.value) or op.replace('_', ' ') in str(e.value).lower() or 'lerp' in str(e.value) \
      or 'Integer division' in str(e.value) or 'shape' in str(e.value) or 'size' in str(e.value), str(e.value)
  # The process lives on.
  check(torch.erf, torch.ones(2), ops=['erf'])


def _x(dtype=torch.float32, kind='any'):
  return make((2, 3), dtype, kind).to(DEV)


def _grad(fn, kind='any'):
  def run():
    x = make((2, 3), torch.float32, kind, seed=5).to(DEV).requires_grad_()
    fn(x).sum().backward()
    return x.grad
  return run


COUNTER_CASES = {
    'erf': (lambda: torch.erf(_x()), 'erf'),
    'erfinv': (lambda: torch.erfinv(_x() * 0.1), 'erfinv'),
    'log1p': (lambda: torch.log1p(_x(kind='pos')), 'log1p'),
    'expm1': (lambda: torch.expm1(_x()), 'expm1'),
    'tan': (lambda: torch.tan(_x()), 'tan'),
    'asin': (lambda: torch.asin(_x() * 0.1), 'asin'),
    'acos': (lambda: torch.acos(_x() * 0.1), 'acos'),
    'atan': (lambda: torch.atan(_x()), 'atan'),
    'sinh': (lambda: torch.sinh(_x()), 'sinh'),
    'cosh': (lambda: torch.cosh(_x()), 'cosh'),
    'asinh': (lambda: torch.asinh(_x()), 'asinh'),
    'acosh': (lambda: torch.acosh(_x(kind='pos') + 1), 'acosh'),
    'atanh': (lambda: torch.atanh(_x() * 0.1), 'atanh'),
    'log2': (lambda: torch.log2(_x(kind='pos')), 'log2'),
    'log10': (lambda: torch.log10(_x(kind='pos')), 'log10'),
    'exp2': (lambda: torch.exp2(_x()), 'exp2'),
    'reciprocal': (lambda: torch.reciprocal(_x(kind='nonzero')), 'reciprocal'),
    'sign': (lambda: torch.sign(_x()), 'sign'),
    'sgn': (lambda: torch.sgn(_x()), 'sgn'),
    'round': (lambda: torch.round(_x()), 'round'),
    'round.decimals': (lambda: torch.round(_x(), decimals=2), 'round'),
    'trunc': (lambda: torch.trunc(_x()), 'trunc'),
    'frac': (lambda: torch.frac(_x()), 'frac'),
    'remainder.Tensor': (lambda: torch.remainder(_x(), 0.7), 'remainder'),
    'fmod.Tensor': (lambda: torch.fmod(_x(), _x(kind='nonzero')), 'fmod'),
    'atan2': (lambda: torch.atan2(_x(), _x()), 'atan2'),
    'hypot': (lambda: torch.hypot(_x(), _x()), 'hypot'),
    'logaddexp': (lambda: torch.logaddexp(_x(), _x()), 'logaddexp'),
    'heaviside': (lambda: torch.heaviside(_x(), _x()), 'heaviside'),
    'floor_divide': (lambda: torch.floor_divide(_x(), 0.3), 'floor_divide'),
    'bitwise_and.Tensor': (lambda: _x(torch.int32) & 3, 'bitwise_and'),
    'bitwise_or.Tensor': (lambda: _x(torch.int32) | 3, 'bitwise_or'),
    'bitwise_xor.Tensor': (lambda: _x(torch.int32) ^ 3, 'bitwise_xor'),
    'bitwise_left_shift.Tensor': (lambda: torch.bitwise_left_shift(_x(torch.int32, 'pos'), 2), 'bitwise_left_shift'),
    'bitwise_right_shift.Tensor': (lambda: torch.bitwise_right_shift(_x(torch.int32), 1), 'bitwise_right_shift'),
    '__lshift__.Scalar': (lambda: _x(torch.int32, 'pos') << 2, 'bitwise_left_shift'),
    '__lshift__.Tensor': (lambda: _x(torch.int32, 'pos') << _x(torch.int32, 'pos'), 'bitwise_left_shift'),
    '__rshift__.Scalar': (lambda: _x(torch.int32) >> 1, 'bitwise_right_shift'),
    '__rshift__.Tensor': (lambda: _x(torch.int32) >> _x(torch.int32, 'pos'), 'bitwise_right_shift'),
    'isnan': (lambda: torch.isnan(_x()), 'isnan'),
    'nan_to_num': (lambda: torch.nan_to_num(_x()), 'nan_to_num'),
    'clamp.Tensor': (lambda: torch.clamp(_x(), min=_x()), 'clamp'),
    'clamp_min': (lambda: torch.clamp_min(_x(), 0.1), 'clamp_min'),
    'clamp_max': (lambda: torch.clamp_max(_x(), 0.1), 'clamp_max'),
    'clamp_min.Tensor': (lambda: torch.clamp_min(_x(), _x()), 'clamp_min'),
    'clamp_max.Tensor': (lambda: torch.clamp_max(_x(), _x()), 'clamp_max'),
    'addcmul': (lambda: torch.addcmul(_x(), _x(), _x(), value=0.5), 'addcmul'),
    'addcdiv': (lambda: torch.addcdiv(_x(), _x(), _x(kind='nonzero'), value=0.5), 'addcdiv'),
    'lerp.Scalar': (lambda: torch.lerp(_x(), _x(), 0.3), 'lerp'),
    'lerp.Tensor': (lambda: torch.lerp(_x(), _x(), _x()), 'lerp'),
    'hardtanh': (lambda: F.hardtanh(_x()), 'hardtanh'),
    'hardtanh_backward': (_grad(F.hardtanh), 'hardtanh_backward'),
    'leaky_relu': (lambda: F.leaky_relu(_x()), 'leaky_relu'),
    'leaky_relu_backward': (_grad(F.leaky_relu), 'leaky_relu_backward'),
    'elu': (lambda: F.elu(_x()), 'elu'),
    'elu_backward': (_grad(F.elu), 'elu_backward'),
    'silu': (lambda: F.silu(_x()), 'silu'),
    'silu_backward': (_grad(F.silu), 'silu_backward'),
    'softplus': (lambda: F.softplus(_x()), 'softplus'),
    'softplus_backward': (_grad(F.softplus), 'softplus_backward'),
    'mish': (lambda: F.mish(_x()), 'mish'),
    'hardsigmoid': (lambda: F.hardsigmoid(_x()), 'hardsigmoid'),
    'hardsigmoid_backward': (_grad(F.hardsigmoid), 'hardsigmoid_backward'),
    'hardswish': (lambda: F.hardswish(_x()), 'hardswish'),
    'hardswish_backward': (_grad(F.hardswish), 'hardswish_backward'),
    'logit': (lambda: torch.logit(_x(kind='pos') * 0.1), 'logit'),
    'logit_backward': (_grad(lambda t: torch.logit(t * 0.1), 'pos'), 'logit_backward'),
    'erfc': (lambda: torch.erfc(_x()), 'erfc'),
    'lgamma': (lambda: torch.lgamma(_x(kind='pos')), 'lgamma'),
    'digamma': (lambda: torch.digamma(_x(kind='pos')), 'digamma'),
    'sinc': (lambda: torch.sinc(_x()), 'sinc'),
    'signbit': (lambda: torch.signbit(_x()), 'signbit'),
    'copysign.Tensor': (lambda: torch.copysign(_x(), _x()), 'copysign'),
    'isposinf': (lambda: torch.isposinf(_x()), 'isposinf'),
    'isneginf': (lambda: torch.isneginf(_x()), 'isneginf'),
    'fmax': (lambda: torch.fmax(_x(), _x()), 'fmax'),
    'fmin': (lambda: torch.fmin(_x(), _x()), 'fmin'),
    'pow.Scalar': (lambda: torch.pow(2, _x()), 'pow'),
    'xlogy.Tensor': (lambda: torch.xlogy(_x(), _x(kind='pos')), 'xlogy'),
    'threshold': (lambda: F.threshold(_x(), 0.1, 2.0), 'threshold'),
    'hardshrink': (lambda: F.hardshrink(_x()), 'hardshrink'),
    'hardshrink_backward': (_grad(F.hardshrink), 'hardshrink_backward'),
    'softshrink': (lambda: F.softshrink(_x()), 'softshrink'),
    'softshrink_backward': (_grad(F.softshrink), 'softshrink_backward'),
    'glu': (lambda: F.glu(_x(), 0), 'glu'),
    'glu_backward': (_grad(lambda t: F.glu(t, 0)), 'glu_backward'),
    'log_sigmoid_forward': (lambda: F.logsigmoid(_x()), 'log_sigmoid_forward'),
    'log_sigmoid_backward': (_grad(F.logsigmoid), 'log_sigmoid_backward'),
}


# float64 through the element-wise ops lowered before this family (every op that takes
# float64 on the CPU gives float64 on the device).
F64_EXISTING = {
    'neg': torch.neg, 'abs': torch.abs, 'exp': torch.exp, 'log': lambda t: torch.log(t.abs() + 0.1),
    'sqrt': lambda t: torch.sqrt(t.abs()), 'rsqrt': lambda t: torch.rsqrt(t.abs() + 0.1), 'tanh': torch.tanh,
    'sigmoid': torch.sigmoid, 'sin': torch.sin, 'cos': torch.cos, 'floor': torch.floor, 'ceil': torch.ceil,
    'relu': torch.relu, 'clamp': lambda t: t.clamp(-0.5, 0.5), 'where': lambda t: torch.where(t > 0, t, t * 2),
    'sub': lambda t: t - 1.5, 'mul': lambda t: t * 3, 'div': lambda t: t / 7,
    'div_trunc': lambda t: torch.div(t, 0.3, rounding_mode='trunc'), 'pow': lambda t: t ** 3,
    'pow_t': lambda t: t.abs() ** t, 'minimum': lambda t: torch.minimum(t, t.flip(0)),
    'compare': lambda t: (t > 0.5) | (t <= -0.25) & (t != 0), 'logical': lambda t: torch.logical_not(t),
    'mixed_f32': lambda t: t + t.float(), 'int_promote': lambda t: t * torch.arange(5, device=t.device),
}


@pytest.mark.parametrize('name', list(F64_EXISTING))
def test_float64_existing_ops(name):
  x = make((4, 5), torch.float64, seed=11)
  out = check(F64_EXISTING[name], x)
  assert out.dtype == F64_EXISTING[name](x).dtype


@pytest.mark.parametrize('name', ['tanh', 'sigmoid', 'relu', 'exp', 'div', 'clamp', 'where', 'pow'])
def test_float64_existing_backward(name):
  fn = F64_EXISTING[name]
  x = make((4, 5), torch.float64, seed=12)
  xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
  for t in (xc, xd):
    fn(t).sum().backward()
  assert_same(xd.grad, xc.grad)
