"""Computations built with torch_xla.core.xla_builder and ops registered with
torch_xla.core.xla_op_registry, run on XLA tensors against eager PyTorch on the CPU."""

import itertools

import pytest
import torch

import torch_xla
import torch_xla.core.xla_builder as xb
import torch_xla.core.xla_model as xm
import torch_xla.core.xla_op_registry as xor
import torch_xla.debug.metrics as met

DEV = xm.xla_device()
_names = itertools.count()


def run(opfn, *tensors, **kwargs):
  """opfn registered as an op and called on the tensors moved to the device; the
  results back on the CPU."""
  op = xor.register(f'test_op_{next(_names)}', opfn)
  out = op(*[t.to(DEV) for t in tensors], **kwargs)
  if isinstance(out, (list, tuple)):
    return [o.cpu() for o in out]
  return out.cpu()


def close(actual, expected, atol=1e-5, rtol=1e-5):
  assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
  torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol)


def scalar(like, value, dtype=None):
  return xb.Op.scalar(like.builder(), value, dtype=dtype or like.shape().dtype)


# ------------------------------------------------------------------ element-wise

FLOAT_BINARY = [
    (lambda a, b: a + b, torch.add),
    (lambda a, b: a - b, torch.sub),
    (lambda a, b: a * b, torch.mul),
    (lambda a, b: a / b, torch.div),
    (lambda a, b: a.max(b), torch.maximum),
    (lambda a, b: a.min(b), torch.minimum),
    (lambda a, b: a % b, torch.fmod),
    (lambda a, b: a.atan2(b), torch.atan2),
]


@pytest.mark.parametrize('i', range(len(FLOAT_BINARY)))
def test_float_binary_ops(i):
  opfn, torch_fn = FLOAT_BINARY[i]
  a, b = torch.randn(3, 4), torch.randn(3, 4) + 3
  close(run(opfn, a, b), torch_fn(a, b))


def test_float_power():
  a, b = torch.rand(3, 4) + 0.5, torch.randn(3, 4)
  close(run(lambda x, y: x**y, a, b), a**b)


INT_BINARY = [
    (lambda a, b: a + b, torch.add),
    (lambda a, b: a - b, torch.sub),
    (lambda a, b: a * b, torch.mul),
    (lambda a, b: a / b, lambda a, b: torch.div(a, b, rounding_mode='trunc')),
    (lambda a, b: a % b, torch.fmod),
    (lambda a, b: a & b, torch.bitwise_and),
    (lambda a, b: a | b, torch.bitwise_or),
    (lambda a, b: a ^ b, torch.bitwise_xor),
    (lambda a, b: a.max(b), torch.maximum),
]


@pytest.mark.parametrize('dtype', [torch.int32, torch.int64])
@pytest.mark.parametrize('i', range(len(INT_BINARY)))
def test_int_binary_ops(i, dtype):
  opfn, torch_fn = INT_BINARY[i]
  a = torch.randint(-50, 50, (3, 4), dtype=dtype)
  b = torch.randint(1, 9, (3, 4), dtype=dtype)
  close(run(opfn, a, b), torch_fn(a, b))


def test_shifts():
  a = torch.randint(-1000, 1000, (5,), dtype=torch.int32)
  s = torch.randint(0, 8, (5,), dtype=torch.int32)
  close(run(lambda x, y: x << y, a, s), a << s)
  close(run(lambda x, y: x >> y, a, s), a >> s)


COMPARISONS = [
    (lambda a, b: a == b, torch.eq),
    (lambda a, b: a != b, torch.ne),
    (lambda a, b: a < b, torch.lt),
    (lambda a, b: a <= b, torch.le),
    (lambda a, b: a > b, torch.gt),
    (lambda a, b: a >= b, torch.ge),
]


@pytest.mark.parametrize('dtype', [torch.float32, torch.int32])
@pytest.mark.parametrize('i', range(len(COMPARISONS)))
def test_comparisons(i, dtype):
  opfn, torch_fn = COMPARISONS[i]
  a = torch.randint(0, 3, (4, 4)).to(dtype)
  b = torch.randint(0, 3, (4, 4)).to(dtype)
  close(run(opfn, a, b), torch_fn(a, b))


UNARY = [
    (lambda a: -a, torch.neg, None),
    (lambda a: a.exp(), torch.exp, None),
    (lambda a: a.expm1(), torch.expm1, None),
    (lambda a: a.log(), torch.log, 'positive'),
    (lambda a: a.log1p(), torch.log1p, 'positive'),
    (lambda a: a.sqrt(), torch.sqrt, 'positive'),
    (lambda a: a.rsqrt(), torch.rsqrt, 'positive'),
    (lambda a: a.sin(), torch.sin, None),
    (lambda a: a.cos(), torch.cos, None),
    (lambda a: a.tan(), torch.tan, None),
    (lambda a: a.tanh(), torch.tanh, None),
    (lambda a: a.sinh(), torch.sinh, None),
    (lambda a: a.cosh(), torch.cosh, None),
    (lambda a: a.asin(), torch.asin, 'unit'),
    (lambda a: a.acos(), torch.acos, 'unit'),
    (lambda a: a.atan(), torch.atan, None),
    (lambda a: a.erf(), torch.erf, None),
    (lambda a: a.erfc(), torch.erfc, None),
    (lambda a: a.erfinf(), torch.erfinv, 'unit'),
    (lambda a: a.floor(), torch.floor, None),
    (lambda a: a.ceil(), torch.ceil, None),
    (lambda a: a.abs(), torch.abs, None),
    (lambda a: a.sign(), torch.sign, None),
    (lambda a: a.square(), torch.square, None),
    (lambda a: a.sigmoid(), torch.sigmoid, None),
]


@pytest.mark.parametrize('i', range(len(UNARY)))
def test_unary_ops(i):
  opfn, torch_fn, domain = UNARY[i]
  a = torch.randn(4, 5)
  if domain == 'positive':
    a = a.abs() + 0.1
  elif domain == 'unit':
    a = torch.rand(4, 5) * 1.8 - 0.9
  close(run(opfn, a), torch_fn(a), atol=1e-5, rtol=1e-4)


def test_scalar_operand_broadcasts():
  a = torch.randn(2, 3)
  close(run(lambda x: x * scalar(x, 3.0) + scalar(x, 1.0), a), a * 3 + 1)
  close(run(lambda x: scalar(x, 2.0) - x, a), 2 - a)


def test_convert_and_bitcast():
  a = torch.randn(3, 4) * 10
  close(run(lambda x: x.cast(xb.Type.S32), a), a.to(torch.int32))
  close(run(lambda x: x.cast(xb.Type.BF16), a), a.to(torch.bfloat16))
  i = torch.randint(-5, 5, (6,), dtype=torch.int64)
  close(run(lambda x: x.cast(xb.Type.F32), i), i.to(torch.float32))
  close(run(lambda x: x.bitcast(xb.Type.S32), a), a.view(torch.int32))


def test_complex_values():
  c = torch.randn(3, dtype=torch.complex64)
  real, imag, conj, magnitude, doubled = run(
      lambda a: xb.Op.tuple((a.real(), a.imag(), a.conj(), a.abs(), a + xb.Op.
                             constant(a.builder(), c))), c)
  close(real, c.real)
  close(imag, c.imag)
  close(conj, c.conj().resolve_conj())
  close(magnitude, c.abs())
  close(doubled, c + c)


def test_select_and_clamp():
  p = torch.rand(3, 4) > 0.5
  a, b = torch.randn(3, 4), torch.randn(3, 4)
  close(run(lambda c, x, y: c.select(x, y), p, a, b), torch.where(p, a, b))
  close(
      run(lambda x: x.clamp(scalar(x, -0.5), scalar(x, 0.5)), a),
      a.clamp(-0.5, 0.5))


# ------------------------------------------------------------------ shapes


def test_reshape_broadcast_transpose():
  a = torch.randn(2, 3, 4)
  close(run(lambda x: x.reshape([6, 4]), a), a.reshape(6, 4))
  close(run(lambda x: x.reshape([4, -1]), a), a.reshape(4, 6))
  close(
      run(lambda x: x.reshape([4, 6], dimensions=[2, 0, 1]), a),
      a.permute(2, 0, 1).reshape(4, 6))
  close(run(lambda x: x.transpose([1, 2, 0]), a), a.permute(1, 2, 0))
  close(run(lambda x: x.broadcast([5]), a), a.expand(5, 2, 3, 4))
  v = torch.randn(3)
  close(
      run(lambda x: x.broadcast_in_dim([2, 3, 4], [1]), v),
      v.reshape(1, 3, 1).expand(2, 3, 4))
  close(run(lambda x: x.rev([0, 2]), a), a.flip(0, 2))


def test_slices_and_concat():
  a = torch.randn(6, 5)
  close(
      run(lambda x: x.slice([1, 0], [5, 5], [2, 2]), a), a[1:5:2, 0:5:2])
  close(run(lambda x: x.slice_in_dim(2, 4, dimno=1), a), a[:, 2:4])
  b = torch.randn(6, 3)
  close(
      run(lambda x, y: xb.Op.concat_in_dim([x, y, x], 1), a, b),
      torch.cat([a, b, a], 1))


def test_dynamic_slices():
  a = torch.randn(5, 6)
  i, j = torch.tensor(2, dtype=torch.int32), torch.tensor(3, dtype=torch.int64)
  close(
      run(lambda x, s, t: x.dynamic_slice([s, t], [2, 3]), a, i, j),
      a[2:4, 3:6])
  u = torch.randn(2, 2)
  expected = a.clone()
  expected[2:4, 3:5] = u
  close(
      run(lambda x, v, s, t: x.dynamic_update_slice(v, [s, t]), a, u, i, j),
      expected)


def test_pad():
  a = torch.randn(2, 3)
  expected = torch.full((2 + 1 + 1 + 1, 1 + 3 + 2 * 2 + 0), 7.0)
  expected[1:5:2, 1:9:3] = a
  close(
      run(lambda x: x.pad(scalar(x, 7.0), [(1, 1, 1), (1, 0, 2)]), a), expected)


def test_constants_and_iota():
  value = torch.randn(2, 3)
  close(run(lambda x: x + xb.Op.constant(x.builder(), value), value), value * 2)
  ints = torch.arange(6, dtype=torch.int64).reshape(2, 3)
  close(run(lambda x: x * xb.Op.constant(x.builder(), ints), ints), ints * ints)
  mask = torch.tensor([[True, False, True], [False, False, True]])
  close(
      run(lambda x: x & xb.Op.constant(x.builder(), mask), ~mask), ~mask & mask)
  half = torch.randn(4).to(torch.bfloat16)
  close(run(lambda x: x - xb.Op.constant(x.builder(), half), half), half - half)
  shape = xb.mkshape(xb.Type.S32, (2, 3))
  close(
      run(lambda x: x + xb.Op.iota(x.builder(), shape, 1),
          torch.zeros(2, 3, dtype=torch.int32)),
      torch.arange(3, dtype=torch.int32).expand(2, 3).contiguous())
  close(
      run(lambda x: x.zeros_like() + x.ones_like(), torch.randn(3)),
      torch.ones(3))


def test_get_dimension_size():
  a = torch.randn(2, 7)
  close(
      run(lambda x: x.get_dimension_size(1), a), torch.tensor(7,
                                                             dtype=torch.int32))


# ------------------------------------------------------------------ linear algebra


def test_dot():
  a, b, v = torch.randn(3, 4), torch.randn(4, 5), torch.randn(4)
  close(run(lambda x, y: x @ y, a, b), a @ b, atol=1e-4, rtol=1e-4)
  close(run(lambda x, y: x @ y, a, v), a @ v, atol=1e-4, rtol=1e-4)
  close(run(lambda x, y: x @ y, v, v), v @ v, atol=1e-4, rtol=1e-4)
  i, j = torch.randint(-5, 5, (2, 3)), torch.randint(-5, 5, (3, 2))
  close(run(lambda x, y: x @ y, i, j), i @ j)


def test_dot_general_batched():
  a, b = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
  close(
      run(lambda x, y: x.dot_general(y, [2], [2], [0], [0]), a, b),
      torch.bmm(a, b.transpose(1, 2)),
      atol=1e-4,
      rtol=1e-4)


def test_triangular_solve():
  a = torch.randn(3, 3).triu() + 3 * torch.eye(3)
  b = torch.randn(3, 2)
  expected = torch.linalg.solve_triangular(a, b, upper=True)
  actual = run(
      lambda x, y: x.triangular_solve(
          y, left_side=True, lower=False, unit_diagonal=False,
          transpose_a=False), a, b)
  close(actual, expected, atol=1e-4, rtol=1e-4)


def test_convolution():
  x, w = torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3)
  close(
      run(lambda a, k: a.conv(k, [1, 1], padding='same'), x, w),
      torch.nn.functional.conv2d(x, w, padding=1),
      atol=1e-4,
      rtol=1e-4)
  # NHWC input, HWIO kernel, stride 2, explicit padding, dilated kernel.
  expected = torch.nn.functional.conv2d(
      x, w, stride=2, padding=(2, 1), dilation=(2, 1))
  actual = run(
      lambda a, k: a.conv_general_dilated(
          k, [2, 2], [(2, 2), (1, 1)], [1, 1], [2, 1],
          input_batch_dimension=0,
          input_feature_dimension=3,
          kernel_input_feature_dimension=2,
          kernel_output_feature_dimension=3,
          output_batch_dimension=0,
          output_feature_dimension=1,
          input_spatial_dimensions=[1, 2],
          kernel_spatial_dimensions=[0, 1],
          output_spatial_dimensions=[2, 3]), x.permute(0, 2, 3, 1).contiguous(),
      w.permute(2, 3, 1, 0).contiguous())
  close(actual, expected, atol=1e-4, rtol=1e-4)


# ------------------------------------------------------------------ reductions


def test_reduce_with_python_computation():
  a = torch.randn(3, 4, 5)
  close(
      run(lambda x: x.reduce(scalar(x, 0.0), lambda p, q: p + q, [1]), a),
      a.sum(1),
      atol=1e-5,
      rtol=1e-5)
  close(
      run(lambda x: x.reduce(scalar(x, float('-inf')), lambda p, q: p.max(q),
                             [0, 2]), a), a.amax((0, 2)))
  i = torch.randint(-3, 4, (2, 3), dtype=torch.int32)
  close(
      run(lambda x: x.reduce_all(scalar(x, 1), lambda p, q: p * q), i),
      i.prod().to(torch.int32))


def test_reduce_with_built_computation():
  scalar_shape = xb.mkshape(xb.Type.F32, ())
  add = xb.create_computation('add', lambda p, q: p + q,
                              (scalar_shape, scalar_shape))
  a = torch.randn(4, 6)
  close(
      run(lambda x: x.reduce(scalar(x, 0.0), add, [0]), a),
      a.sum(0),
      atol=1e-5,
      rtol=1e-5)


def test_reduce_window_and_max_pool():
  a = torch.randn(1, 2, 6, 6)
  expected = torch.nn.functional.avg_pool2d(a, 2) * 4
  close(
      run(
          lambda x: x.reduce_window(
              scalar(x, 0.0), lambda p, q: p + q, [1, 1, 2, 2], [1, 1, 2, 2]),
          a),
      expected,
      atol=1e-5,
      rtol=1e-5)
  close(
      run(
          lambda x: x.max_pool([3, 3], [2, 2], 0, 1, [2, 3],
                               padding=[(0, 0), (0, 0), (1, 1), (1, 1)]), a),
      torch.nn.functional.max_pool2d(a, 3, 2, padding=1))


# ------------------------------------------------------------------ control flow


@pytest.mark.parametrize('threshold', [0.1, 0.9])
def test_conditional(threshold):

  def opfn(k, a, b, k0=None):
    pred = k > scalar(k, k0)
    return pred.mkconditional((a, b), lambda x, y: x + y, lambda x, y: x - y)

  k, a, b = torch.tensor(0.5), torch.randn(2, 2), torch.randn(2, 2)
  expected = a + b if k.item() > threshold else a - b
  close(run(opfn, k, a, b, k0=threshold), expected)


def test_while_loop():

  def opfn(a, b, limit=None):

    def cond(counter, x, y):
      return counter < scalar(counter, limit)

    def body(counter, x, y):
      return xb.Op.tuple((counter + scalar(counter, 1), x + y, y))

    zero = xb.Op.scalar(a.builder(), 0, dtype=xb.Type.S32)
    return xb.Op.mkwhile((zero, a, b), cond, body).get_tuple_element(1)

  a, b = torch.randn(3), torch.randn(3)
  close(run(opfn, a, b, limit=7), a + 7 * b, atol=1e-5, rtol=1e-5)


def test_call():
  a, b = torch.randn(4), torch.randn(4)
  close(
      run(lambda x, y: xb.Op.call(lambda p, q: p * q + p, [x, y]), a, b),
      a * b + a)


def test_map_and_sort():
  a, b = torch.randn(3, 4), torch.randn(3, 4)
  close(
      run(lambda x, y: xb.Op.map([x, y], lambda p, q: p.max(q) * p, [0, 1]), a,
          b),
      torch.maximum(a, b) * a)
  keys = torch.randperm(10).to(torch.float32)
  values = torch.arange(10, dtype=torch.int32)
  sorted_keys, order = torch.sort(keys)
  actual = run(
      lambda k, v: xb.Op.sort([k, v], lambda k0, k1, v0, v1: k0 < k1, 0), keys,
      values)
  close(actual[0], sorted_keys)
  close(actual[1], order.to(torch.int32))


def test_gather_and_scatter():
  a = torch.randn(5, 3)
  idx = torch.tensor([[4], [0], [2]])
  gathered = run(
      lambda x, i: x.gather(
          i,
          offset_dims=[1],
          collapsed_slice_dims=[0],
          start_index_map=[0],
          index_vector_dim=1,
          slice_sizes=[1, 3]), a, idx)
  close(gathered, a[idx[:, 0]])
  updates = torch.randn(3, 3)
  expected = a.index_add(0, idx[:, 0], updates)
  scattered = run(
      lambda x, i, u: x.scatter(
          i,
          u,
          lambda p, q: p + q,
          update_window_dims=[1],
          inserted_window_dims=[0],
          scatter_dims_to_operand_dims=[0],
          index_vector_dim=1), a, idx, updates)
  close(scattered, expected)


# ------------------------------------------------------------------ results, registry


def test_tuple_results_of_mixed_types():
  op = xor.register('mixed_dtype_tuple',
                    lambda a: xb.Op.tuple((a, a.cast(xb.Type.BF16))))
  a = torch.randn(2, 3)
  same, cast = op(a.to(DEV))
  close(same.cpu(), a)
  close(cast.cpu(), a.to(torch.bfloat16))


def test_registered_op_builds_once_per_shape_and_keywords():
  built = []

  def opfn(a, b, scale=1.0):
    built.append(a.shape())
    return (a + b) * scalar(a, scale)

  op = xor.register('scaled_add', opfn)
  a, b = torch.randn(2, 2), torch.randn(2, 2)
  for _ in range(3):
    close(op(a.to(DEV), b.to(DEV), scale=2.0).cpu(), (a + b) * 2)
  assert len(built) == 1
  close(op(a.to(DEV), b.to(DEV), scale=3.0).cpu(), (a + b) * 3)
  c = torch.randn(3)
  close(op(c.to(DEV), c.to(DEV), scale=3.0).cpu(), (c + c) * 3)
  assert len(built) == 3


def test_registered_op_joins_the_lazy_graph():
  op = xor.register('twice', lambda a: a + a)
  x = torch.randn(4, 4)
  xd = x.to(DEV)
  y = torch.relu(op(xd.sin())) @ xd
  hlo = torch_xla._XLAC._get_stablehlo([y])
  assert 'func.call' in hlo and 'xb_twice_' in hlo
  close(y.cpu(), torch.relu(2 * x.sin()) @ x, atol=1e-4, rtol=1e-4)


def test_ops_of_one_name_with_different_bodies_in_one_graph():
  add = xor.register('same_name', lambda a: a + a)
  mul = xor.register('same_name', lambda a: a * a)
  x = torch.randn(5)
  xd = x.to(DEV)
  close((add(xd) - mul(xd)).cpu(), x + x - x * x)


def test_computation_reused_across_steps_compiles_once():
  op = xor.register('compiled_once', lambda a: a.exp() - a)
  x = torch.randn(3, 3)
  for step in range(3):
    if step == 1:
      met.clear_all()
    shift = 0.25 * (step + 1)  # a graph parameter: every step has one graph
    y = op(x.to(DEV) + shift)
    torch_xla.sync()
    close(y.cpu(), (x + shift).exp() - (x + shift))
  assert met.counter_value('UncachedCompile') in (None, 0)


def test_xla_callable_and_computation_text():

  def add(a, b):
    return xb.Op.sin(a) + b

  fn = xb.XlaCallable(add)
  a, b = torch.randn(2, 2), torch.randn(2, 2)
  res = fn(a.to(DEV), b.to(DEV))
  close(res.cpu(), torch.sin(a) + b)
  shape = xb.mkshape(xb.Type.F32, (2, 2))
  computation = xb.create_computation('sin_add', add, [shape, shape])
  text = xb.get_computation_hlo(computation)
  assert 'func.func public @main' in text and 'stablehlo.sine' in text
  assert computation.parameter_shapes == [shape, shape]
  assert computation.result_shape == shape


def test_direct_user_computation_call():
  a = torch.randn(3, 3)
  computation = xb.create_computation('neg', lambda x: -x,
                                      [xb.tensor_shape(a.to(DEV))])
  out = torch_xla._XLAC._xla_user_computation('xla::neg', [a.to(DEV)],
                                              computation)
  close(out[0].cpu(), -a)


def test_type_maps_round_trip():
  for xla_type in xb._XLA_PT_TYPE_MAP:
    pt_type = xb.Op.to_torch_type(xla_type)
    assert xb.Op.from_torch_type(pt_type) == xla_type
  assert xb.Op.to_torch_type(None) == torch.float32


def test_tensor_shape():
  t = torch.zeros(2, 5, dtype=torch.int16, device=DEV)
  assert xb.tensor_shape(t) == xb.mkshape(xb.Type.S16, (2, 5))
  shapes = xb.tensor_shape([t, torch.zeros(3)])
  assert [repr(s) for s in shapes] == ['s16[2,5]', 'f32[3]']


# ------------------------------------------------------------------ bad input


def test_shape_mismatch_raises_value_error_naming_the_op():
  op = xor.register('bad_add', lambda a, b: a + b)
  with pytest.raises(ValueError, match=r'xla_builder\.Add: .*f32\[2,3\].*f32\[3,2\]'):
    op(torch.zeros(2, 3, device=DEV), torch.zeros(3, 2, device=DEV))


def test_type_mismatch_raises_type_error():
  op = xor.register('bad_types', lambda a, b: a * b)
  with pytest.raises(TypeError, match=r'xla_builder\.Mul: operand types differ'):
    op(torch.zeros(2, device=DEV), torch.zeros(2, dtype=torch.int32, device=DEV))


@pytest.mark.parametrize('opfn, message', [
    (lambda a: a.reshape([7]), r'Reshape: cannot reshape f32\[2,3\]'),
    (lambda a: a.slice([0, 0], [3, 3]), r'Slice: dimension 0'),
    (lambda a: a.transpose([0, 0]), r'Transpose: permutation .* repeats'),
    (lambda a: a @ a, r'Dot: dimension 1 of f32\[2,3\] and dimension 0'),
    (lambda a: a.reduce(scalar(a, 0.0), lambda p, q: p.cast(xb.Type.S32), [0]),
     r'Reduce: the computation returns s32\[\]'),
    (lambda a: a.get_tuple_element(0), r'GetTupleElement: .* not a tuple'),
    (lambda a: (a > a).mkconditional(
        (a,), lambda x: x, lambda x: x.cast(xb.Type.S32)), r'Conditional'),
    (lambda a: a.log().cast('f33'), r'unknown element type'),
])
def test_bad_arguments_raise_naming_the_op(opfn, message):
  op = xor.register(f'bad_{next(_names)}', opfn)
  with pytest.raises((ValueError, TypeError), match=message):
    op(torch.zeros(2, 3, device=DEV))


def test_computation_reading_another_builders_value_raises():
  other = xb.create_builder('other')
  foreign = xb.mkparam(other, 0, xb.mkshape(xb.Type.F32, (2,)))
  op = xor.register('foreign', lambda a: a + foreign)
  with pytest.raises(ValueError, match='belongs to builder'):
    op(torch.zeros(2, device=DEV))


def test_user_computation_input_checks():
  shape = xb.mkshape(xb.Type.F32, (3,))
  computation = xb.create_computation('sin', lambda a: a.sin(), [shape])
  with pytest.raises(RuntimeError, match='expected at least 1 input tensor'):
    torch_xla._XLAC._xla_user_computation('xla::sin', [], computation)
  with pytest.raises(ValueError, match=r'input 0 is f32\[4\].*parameter 0 is f32\[3\]'):
    torch_xla._XLAC._xla_user_computation('xla::sin',
                                          [torch.zeros(4, device=DEV)],
                                          computation)
  with pytest.raises(RuntimeError, match='expected a tensor on an XLA device'):
    torch_xla._XLAC._xla_user_computation('xla::sin', [torch.zeros(3)],
                                          computation)
  with pytest.raises(ValueError, match='expected 1 input tensors, got 2'):
    torch_xla._XLAC._xla_user_computation(
        'xla::sin', [torch.zeros(3, device=DEV)] * 2, computation)


def test_unsupported_ops_say_so():
  op = xor.register('dynamic', lambda a: a.dynamic_reshape([6]))
  with pytest.raises(NotImplementedError, match='dynamic shapes'):
    op(torch.zeros(2, 3, device=DEV))
  with pytest.raises(NotImplementedError, match='no op named'):
    xb.mkop('NoSuchOp', (xb.mkparam(xb.create_builder('b'), 0,
                                    xb.mkshape(xb.Type.F32, ())).op,))
