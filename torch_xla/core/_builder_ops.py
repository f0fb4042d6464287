"""The ops of torch_xla.core.xla_builder: for each op name (as `mkop` takes it), a shape
rule and a lowering to StableHLO text.

A shape rule checks the operands and arguments when the op is built and raises
ValueError (shapes, dimensions) or TypeError (element types) naming the op, so that a
mistake surfaces at the line that made it, never in the XLA compiler. It returns the
node's operands, shape and attributes. A lowering appends the op's StableHLO operations
to a block (_builder_graph.Block) and returns the names of its result leaves.
"""

import math

import numpy as np
import torch

from torch_xla.core import _builder_types as types
from torch_xla.core._builder_graph import (Computation, Node, Shape, i64_array,
                                           int_list, tuple_offsets)

OPS = {}


class OpDef(object):
  __slots__ = ('infer', 'lower')

  def __init__(self, infer, lower):
    self.infer = infer
    self.lower = lower


def define(name, infer, lower):
  OPS[name] = OpDef(infer, lower)


def make_node(builder, name, operands, kwargs):
  """The node of op `name` on `operands` (nodes), checked by its shape rule."""
  opdef = OPS.get(name)
  if opdef is None:
    raise NotImplementedError(f'xla_builder: no op named {name!r} '
                              f'(the ops: {", ".join(sorted(OPS))})')
  operands = list(operands)
  for i, o in enumerate(operands):
    if not isinstance(o, Node):
      raise TypeError(f'xla_builder.{name}: operand {i} is a {type(o).__name__}, '
                      'not an op of a builder')
    if o.builder is not builder:
      raise ValueError(f'xla_builder.{name}: operand {i} belongs to builder '
                       f'{o.builder.name!r}, not {builder.name!r}; a computation '
                       'reads only its own parameters')
  operands, shape, attrs = opdef.infer(name, builder, operands, kwargs)
  return Node(builder, name, operands, attrs, shape)


def lower_node(block, node, operand_values):
  return OPS[node.kind].lower(block, node, operand_values)


# ---- checks shared by the shape rules


def _array(name, node, what='operand'):
  if node.shape.is_tuple():
    raise ValueError(f'xla_builder.{name}: the {what} is the tuple {node.shape}; '
                     'take an element with get_tuple_element')
  return node.shape


def _count(name, operands, n):
  if len(operands) != n:
    raise ValueError(
        f'xla_builder.{name}: expected {n} operands, got {len(operands)}')


def _same_type(name, shapes):
  dtypes = [s.dtype for s in shapes]
  if len(set(dtypes)) > 1:
    raise TypeError(f'xla_builder.{name}: operand types differ: '
                    f'{", ".join(map(str, shapes))}; convert with .cast()')


def _dims(name, values, rank, what):
  """`values` as dimension numbers in [0, rank), each once."""
  out = [int(v) for v in values]
  for d in out:
    if not 0 <= d < rank:
      raise ValueError(f'xla_builder.{name}: {what} {out} has {d}, out of range '
                       f'for rank {rank}')
  if len(set(out)) != len(out):
    raise ValueError(f'xla_builder.{name}: {what} {out} repeats a dimension')
  return out


def _per_dim(name, values, rank, what):
  out = [int(v) for v in values]
  if len(out) != rank:
    raise ValueError(f'xla_builder.{name}: {what} {out} has {len(out)} entries '
                     f'for an operand of rank {rank}')
  return out


def _scalar_of(name, node, dtype, what):
  s = _array(name, node, what)
  if s.rank != 0 or s.dtype != dtype:
    raise ValueError(f'xla_builder.{name}: the {what} must be a {dtype}[] scalar, '
                     f'got {s}')


def _computation(name, computation, parameter_shapes, what):
  """`computation` as a Computation with these parameter shapes: built from a Python
  function when callable (each tuple parameter unpacked into its elements)."""
  if callable(computation) and not isinstance(computation, Computation):
    from torch_xla.core import xla_builder
    computation = xla_builder.Op.make_computation(
        name + what.title().replace(' ', ''), computation, parameter_shapes)
  if not isinstance(computation, Computation):
    raise TypeError(f'xla_builder.{name}: the {what} must be a computation or a '
                    f'function, got {type(computation).__name__}')
  got = computation.parameter_shapes
  if got != list(parameter_shapes):
    raise ValueError(f'xla_builder.{name}: the {what} takes {got}, expected '
                     f'{list(parameter_shapes)}')
  return computation


# ---- element-wise ops

_BINARY = {
    'Add': 'stablehlo.add',
    'Sub': 'stablehlo.subtract',
    'Mul': 'stablehlo.multiply',
    'Div': 'stablehlo.divide',
    'Rem': 'stablehlo.remainder',
    'Pow': 'stablehlo.power',
    'Max': 'stablehlo.maximum',
    'Min': 'stablehlo.minimum',
    'And': 'stablehlo.and',
    'Or': 'stablehlo.or',
    'Xor': 'stablehlo.xor',
    'Atan2': 'stablehlo.atan2',
    'ShiftLeft': 'stablehlo.shift_left',
    'ShiftRight': None,  # arithmetic for signed types, logical for unsigned
    'ShiftRightArithmetic': 'stablehlo.shift_right_arithmetic',
    'ShiftRightLogical': 'stablehlo.shift_right_logical',
}
_COMPARE = {'Eq': 'EQ', 'Ne': 'NE', 'Ge': 'GE', 'Gt': 'GT', 'Le': 'LE', 'Lt': 'LT'}

_NUMERIC = types.FLOATING | types.COMPLEX | types.INTEGRAL
_BINARY_TYPES = {
    'And': types.INTEGRAL | {types.Type.PRED},
    'Or': types.INTEGRAL | {types.Type.PRED},
    'Xor': types.INTEGRAL | {types.Type.PRED},
    'Atan2': types.FLOATING | types.COMPLEX,
    'ShiftLeft': types.INTEGRAL,
    'ShiftRight': types.INTEGRAL,
    'ShiftRightArithmetic': types.INTEGRAL,
    'ShiftRightLogical': types.INTEGRAL,
    'Rem': types.FLOATING | types.INTEGRAL,
    'Max': _NUMERIC | {types.Type.PRED},
    'Min': _NUMERIC | {types.Type.PRED},
}


def _infer_binary(name, builder, operands, kwargs):
  _count(name, operands, 2)
  a, b = (_array(name, o) for o in operands)
  _same_type(name, (a, b))
  allowed = _BINARY_TYPES.get(name, _NUMERIC)
  if name not in _COMPARE and a.dtype not in allowed:
    raise TypeError(f'xla_builder.{name}: not defined for element type {a.dtype}')
  if a.sizes != b.sizes and a.rank != 0 and b.rank != 0:
    raise ValueError(f'xla_builder.{name}: operand shapes {a} and {b} differ '
                     '(they must be equal, or one a scalar)')
  sizes = a.sizes if a.rank else b.sizes
  dtype = types.Type.PRED if name in _COMPARE else a.dtype
  return operands, Shape.create(dtype, sizes), {}


def _broadcast_scalar(block, value, shape, sizes):
  if shape.rank or not sizes:
    return value
  return block.op('stablehlo.broadcast_in_dim', [value],
                  [Shape.create(shape.dtype, sizes)],
                  'broadcast_dimensions = array<i64>')[0]


def _compare_attrs(direction, dtype):
  if dtype in types.FLOATING or dtype in types.COMPLEX:
    kind = 'FLOAT'
  elif dtype in types.SIGNED:
    kind = 'SIGNED'
  else:
    kind = 'UNSIGNED'
  return (f'comparison_direction = #stablehlo<comparison_direction {direction}>, '
          f'compare_type = #stablehlo<comparison_type {kind}>')


def _lower_binary(block, node, values):
  (a,), (b,) = values
  sa, sb = node.operands[0].shape, node.operands[1].shape
  sizes = node.shape.sizes
  a = _broadcast_scalar(block, a, sa, sizes)
  b = _broadcast_scalar(block, b, sb, sizes)
  if node.kind in _COMPARE:
    return block.op('stablehlo.compare', [a, b], [node.shape],
                    _compare_attrs(_COMPARE[node.kind], sa.dtype))
  op = _BINARY[node.kind]
  if op is None:
    op = ('stablehlo.shift_right_logical' if sa.dtype in types.UNSIGNED else
          'stablehlo.shift_right_arithmetic')
  return block.op(op, [a, b], [node.shape])


for _name in list(_BINARY) + list(_COMPARE):
  define(_name, _infer_binary, _lower_binary)

_UNARY = {
    'Neg': 'stablehlo.negate',
    'Not': 'stablehlo.not',
    'Abs': 'stablehlo.abs',
    'Exp': 'stablehlo.exponential',
    'Expm1': 'stablehlo.exponential_minus_one',
    'Log': 'stablehlo.log',
    'Log1p': 'stablehlo.log_plus_one',
    'Sqrt': 'stablehlo.sqrt',
    'Rsqrt': 'stablehlo.rsqrt',
    'Cbrt': 'stablehlo.cbrt',
    'Sin': 'stablehlo.sine',
    'Cos': 'stablehlo.cosine',
    'Tan': 'stablehlo.tan',
    'Tanh': 'stablehlo.tanh',
    'Logistic': 'stablehlo.logistic',
    'Floor': 'stablehlo.floor',
    'Ceil': 'stablehlo.ceil',
    'Sign': 'stablehlo.sign',
    'Round': 'stablehlo.round_nearest_afz',
    'RoundNearestEven': 'stablehlo.round_nearest_even',
    'IsFinite': 'stablehlo.is_finite',
    'Clz': 'stablehlo.count_leading_zeros',
    'PopulationCount': 'stablehlo.popcnt',
    'Real': 'stablehlo.real',
    'Imag': 'stablehlo.imag',
    'Sinh': 'chlo.sinh',
    'Cosh': 'chlo.cosh',
    'Asin': 'chlo.asin',
    'Acos': 'chlo.acos',
    'Atan': 'chlo.atan',
    'Asinh': 'chlo.asinh',
    'Acosh': 'chlo.acosh',
    'Atanh': 'chlo.atanh',
    'Erf': 'chlo.erf',
    'Erfc': 'chlo.erfc',
    'ErfInv': 'chlo.erf_inv',
    'Lgamma': 'chlo.lgamma',
    'Digamma': 'chlo.digamma',
    'Conj': None,
    'Square': None,
}

_REAL_FUNCTIONS = types.FLOATING | types.COMPLEX
_UNARY_TYPES = {
    'Not': types.INTEGRAL | {types.Type.PRED},
    'Clz': types.INTEGRAL,
    'PopulationCount': types.INTEGRAL,
    'Floor': types.FLOATING,
    'Ceil': types.FLOATING,
    'Round': types.FLOATING,
    'RoundNearestEven': types.FLOATING,
    'IsFinite': types.FLOATING,
    'Neg': _NUMERIC,
    'Abs': _NUMERIC,
    'Sign': _NUMERIC,
    'Square': _NUMERIC,
    'Real': _NUMERIC,
    'Imag': _NUMERIC,
    'Conj': _NUMERIC,
    'Erf': types.FLOATING,
    'Erfc': types.FLOATING,
    'ErfInv': types.FLOATING,
    'Lgamma': types.FLOATING,
    'Digamma': types.FLOATING,
}


def _infer_unary(name, builder, operands, kwargs):
  _count(name, operands, 1)
  s = _array(name, operands[0])
  if s.dtype not in _UNARY_TYPES.get(name, _REAL_FUNCTIONS):
    raise TypeError(f'xla_builder.{name}: not defined for element type {s.dtype}')
  dtype = s.dtype
  if name == 'IsFinite':
    dtype = types.Type.PRED
  elif name in ('Abs', 'Real', 'Imag') and dtype in types.COMPLEX:
    dtype = types.COMPLEX_PART[dtype]
  return operands, Shape.create(dtype, s.sizes), {}


def _lower_unary(block, node, values):
  (x,), = values
  src = node.operands[0].shape
  if node.kind == 'Square':
    return block.op('stablehlo.multiply', [x, x], [node.shape])
  if node.kind == 'Conj':
    if src.dtype not in types.COMPLEX:
      return [x]
    part = Shape.create(types.COMPLEX_PART[src.dtype], src.sizes)
    re = block.op('stablehlo.real', [x], [part])[0]
    im = block.op('stablehlo.imag', [x], [part])[0]
    neg = block.op('stablehlo.negate', [im], [part])[0]
    return block.op('stablehlo.complex', [re, neg], [node.shape])
  if node.kind in ('Real', 'Imag') and src.dtype not in types.COMPLEX:
    if node.kind == 'Real':
      return [x]
    return [_constant(block, Shape.create(src.dtype, src.sizes), 0)]
  return block.op(_UNARY[node.kind], [x], [node.shape])


for _name in _UNARY:
  define(_name, _infer_unary, _lower_unary)


def _infer_convert(name, builder, operands, kwargs):
  _count(name, operands, 1)
  s = _array(name, operands[0])
  to = types.type_name(kwargs['to_type'])
  if name == 'BitcastConvert' and types.BIT_WIDTHS[to] != types.BIT_WIDTHS[s.dtype]:
    raise ValueError(f'xla_builder.{name}: {s.dtype} and {to} differ in width; '
                     'only types of equal width are supported')
  return operands, Shape.create(to, s.sizes), {}


def _lower_convert(block, node, values):
  (x,), = values
  if node.operands[0].shape == node.shape:
    return [x]
  op = ('stablehlo.convert'
        if node.kind == 'Convert' else 'stablehlo.bitcast_convert')
  return block.op(op, [x], [node.shape])


define('Convert', _infer_convert, _lower_convert)
define('BitcastConvert', _infer_convert, _lower_convert)


def _infer_select(name, builder, operands, kwargs):
  _count(name, operands, 3)
  p, t, f = (_array(name, o) for o in operands)
  if p.dtype != types.Type.PRED:
    raise TypeError(f'xla_builder.{name}: the predicate must be of type pred, got {p}')
  if t != f:
    raise ValueError(f'xla_builder.{name}: the values {t} and {f} differ in shape')
  if p.rank and p.sizes != t.sizes:
    raise ValueError(f'xla_builder.{name}: the predicate {p} does not match the '
                     f'values {t} (it must have their sizes, or be a scalar)')
  return operands, t, {}


def _lower_select(block, node, values):
  return block.op('stablehlo.select', [v[0] for v in values], [node.shape])


define('Select', _infer_select, _lower_select)


def _infer_clamp(name, builder, operands, kwargs):
  _count(name, operands, 3)
  x, lo, hi = (_array(name, o) for o in operands)
  _same_type(name, (x, lo, hi))
  for bound, what in ((lo, 'minimum'), (hi, 'maximum')):
    if bound.rank and bound.sizes != x.sizes:
      raise ValueError(f'xla_builder.{name}: the {what} {bound} does not match the '
                       f'operand {x} (it must have its sizes, or be a scalar)')
  return operands, x, {}


def _lower_clamp(block, node, values):
  (x,), (lo,), (hi,) = values
  return block.op('stablehlo.clamp', [lo, x, hi], [node.shape])


define('Clamp', _infer_clamp, _lower_clamp)

# ---- leaves


def _infer_parameter(name, builder, operands, kwargs):
  shape = kwargs['shape']
  if not isinstance(shape, Shape):
    shape = Shape(shape)
  return [], shape, {'number': kwargs['number']}


def _lower_parameter(block, node, values):
  raise AssertionError('parameters are bound before lowering')


define('Parameter', _infer_parameter, _lower_parameter)


def _as_tensor(value):
  if isinstance(value, torch.Tensor):
    return value.detach().cpu()
  if isinstance(value, np.ndarray):
    return torch.from_numpy(value)
  return torch.tensor(value)


def _infer_constant(name, builder, operands, kwargs):
  value = _as_tensor(kwargs['value'])
  dtype = types.type_name(value.dtype)
  return [], Shape.create(dtype, value.shape), {'value': value.contiguous()}


def _dense_literal(value, dtype):
  """The dense<...> literal of a tensor: its raw bytes in hex (exact for every type),
  booleans as a nested list."""
  if dtype == types.Type.PRED:
    if value.dim() == 0:
      return 'true' if bool(value) else 'false'
    return str(value.tolist()).replace('True', 'true').replace('False', 'false')
  if value.dtype in (torch.bfloat16, torch.float16):
    value = value.view(torch.int16)
  elif value.dtype in (torch.uint16, torch.uint32, torch.uint64):
    value = value.view({
        torch.uint16: torch.int16,
        torch.uint32: torch.int32,
        torch.uint64: torch.int64
    }[value.dtype])
  data = value.numpy().astype(value.numpy().dtype.newbyteorder('<')).tobytes()
  if not data:
    return '[]' if value.dim() == 1 else str(np.zeros(value.shape).tolist())
  return '"0x' + data.hex().upper() + '"'


def _constant(block, shape, value):
  """A splat constant of `shape` holding the number `value`."""
  tensor = torch.full(tuple(shape.sizes), value,
                      dtype=types.XLA_PT_TYPE_MAP[shape.dtype])
  return block.op('stablehlo.constant', [], [shape],
                  f'value = dense<{_dense_literal(tensor, shape.dtype)}> : '
                  f'{shape.mlir()}')[0]


def _lower_constant(block, node, values):
  value = node.attrs['value']
  return block.op('stablehlo.constant', [], [node.shape],
                  f'value = dense<{_dense_literal(value, node.shape.dtype)}> : '
                  f'{node.shape.mlir()}')


define('Constant', _infer_constant, _lower_constant)


def _infer_iota(name, builder, operands, kwargs):
  shape = kwargs['shape']
  shape = shape if isinstance(shape, Shape) else Shape(shape)
  if shape.is_tuple():
    raise ValueError(f'xla_builder.{name}: the shape must be an array, got {shape}')
  dim = int(kwargs['iota_dimension'])
  _dims(name, [dim], shape.rank, 'iota_dimension')
  return [], shape, {'iota_dimension': dim}


def _lower_iota(block, node, values):
  return block.op('stablehlo.iota', [], [node.shape],
                  f'iota_dimension = {node.attrs["iota_dimension"]} : i64')


define('Iota', _infer_iota, _lower_iota)

# ---- tuples


def _infer_tuple(name, builder, operands, kwargs):
  return operands, Shape.tuple_of([o.shape for o in operands]), {}


def _lower_tuple(block, node, values):
  return [v for leaves in values for v in leaves]


define('Tuple', _infer_tuple, _lower_tuple)


def _infer_get_tuple_element(name, builder, operands, kwargs):
  _count(name, operands, 1)
  shape = operands[0].shape
  index = int(kwargs['index'])
  if not shape.is_tuple():
    raise ValueError(f'xla_builder.{name}: the operand {shape} is not a tuple')
  if not 0 <= index < shape.tuple_size():
    raise ValueError(f'xla_builder.{name}: index {index} out of range for the '
                     f'tuple {shape}')
  return operands, shape.element(index), {'index': index}


def _lower_get_tuple_element(block, node, values):
  leaves, = values
  start = tuple_offsets(node.operands[0].shape)[node.attrs['index']]
  return leaves[start:start + len(node.shape.leaves())]


define('GetTupleElement', _infer_get_tuple_element, _lower_get_tuple_element)

# ---- shapes and layouts


def _infer_reshape(name, builder, operands, kwargs):
  _count(name, operands, 1)
  s = _array(name, operands[0])
  sizes = [int(v) for v in kwargs['sizes']]
  dimensions = kwargs.get('dimensions')
  numel = math.prod(s.sizes)
  inferred = [i for i, v in enumerate(sizes) if v == -1]
  if len(inferred) > 1 or any(v < -1 for v in sizes):
    raise ValueError(f'xla_builder.{name}: invalid sizes {sizes}')
  if inferred:
    known = math.prod(v for v in sizes if v != -1)
    if known == 0 or numel % known:
      raise ValueError(f'xla_builder.{name}: cannot infer a size of {sizes} for '
                       f'{numel} elements')
    sizes[inferred[0]] = numel // known
  if math.prod(sizes) != numel:
    raise ValueError(f'xla_builder.{name}: cannot reshape {s} ({numel} elements) '
                     f'to {sizes}')
  attrs = {}
  if dimensions is not None:
    attrs['permutation'] = _dims(name, dimensions, s.rank, 'dimensions')
    if len(attrs['permutation']) != s.rank:
      raise ValueError(f'xla_builder.{name}: dimensions {dimensions} is not a '
                       f'permutation of the {s.rank} dimensions')
  return operands, Shape.create(s.dtype, sizes), attrs


def _transposed(shape, permutation):
  return Shape.create(shape.dtype, [shape.sizes[p] for p in permutation])


def _lower_reshape(block, node, values):
  (x,), = values
  s = node.operands[0].shape
  permutation = node.attrs.get('permutation')
  if permutation is not None and permutation != sorted(permutation):
    t = _transposed(s, permutation)
    x = block.op('stablehlo.transpose', [x], [t],
                 f'permutation = {i64_array(permutation)}')[0]
  return block.op('stablehlo.reshape', [x], [node.shape])


define('Reshape', _infer_reshape, _lower_reshape)


def _infer_transpose(name, builder, operands, kwargs):
  _count(name, operands, 1)
  s = _array(name, operands[0])
  permutation = _dims(name, kwargs['permutation'], s.rank, 'permutation')
  if len(permutation) != s.rank:
    raise ValueError(f'xla_builder.{name}: permutation {permutation} does not '
                     f'cover the {s.rank} dimensions of {s}')
  return operands, _transposed(s, permutation), {'permutation': permutation}


def _lower_transpose(block, node, values):
  return block.op('stablehlo.transpose', [values[0][0]], [node.shape],
                  f'permutation = {i64_array(node.attrs["permutation"])}')


define('Transpose', _infer_transpose, _lower_transpose)


def _infer_broadcast(name, builder, operands, kwargs):
  _count(name, operands, 1)
  s = _array(name, operands[0])
  sizes = [int(v) for v in kwargs['sizes']]
  if any(v < 0 for v in sizes):
    raise ValueError(f'xla_builder.{name}: negative size in {sizes}')
  if name == 'Broadcast':
    out = sizes + list(s.sizes)
    dims = list(range(len(sizes), len(out)))
  else:
    dims = _dims(name, kwargs['dimensions'], len(sizes), 'dimensions')
    if len(dims) != s.rank:
      raise ValueError(f'xla_builder.{name}: dimensions {dims} has '
                       f'{len(dims)} entries for the operand {s}')
    for i, d in enumerate(dims):
      if s.sizes[i] not in (1, sizes[d]):
        raise ValueError(f'xla_builder.{name}: operand dimension {i} of {s} '
                         f'cannot broadcast to size {sizes[d]}')
    out = sizes
  return operands, Shape.create(s.dtype, out), {'dimensions': dims}


def _lower_broadcast(block, node, values):
  return block.op(
      'stablehlo.broadcast_in_dim', [values[0][0]], [node.shape],
      f'broadcast_dimensions = {i64_array(node.attrs["dimensions"])}')


define('Broadcast', _infer_broadcast, _lower_broadcast)
define('BroadcastInDim', _infer_broadcast, _lower_broadcast)


def _infer_slice(name, builder, operands, kwargs):
  _count(name, operands, 1)
  s = _array(name, operands[0])
  if name == 'SliceInDim':
    dim = _dims(name, [kwargs['dimno']], s.rank, 'dimno')[0]
    start = [0] * s.rank
    limit = list(s.sizes)
    strides = [1] * s.rank
    start[dim] = int(kwargs['start_index'])
    limit[dim] = int(kwargs['limit_index'])
    strides[dim] = int(kwargs.get('stride', 1))
  else:
    start = _per_dim(name, kwargs['start_indices'], s.rank, 'start_indices')
    limit = _per_dim(name, kwargs['limit_indices'], s.rank, 'limit_indices')
    strides = _per_dim(name, kwargs.get('strides') or [1] * s.rank, s.rank,
                       'strides')
  sizes = []
  for d in range(s.rank):
    if not 0 <= start[d] <= limit[d] <= s.sizes[d] or strides[d] < 1:
      raise ValueError(f'xla_builder.{name}: dimension {d} of {s}: start '
                       f'{start[d]}, limit {limit[d]}, stride {strides[d]} is not '
                       f'a slice of size {s.sizes[d]}')
    sizes.append(-(-(limit[d] - start[d]) // strides[d]))
  attrs = {'start': start, 'limit': limit, 'strides': strides}
  return operands, Shape.create(s.dtype, sizes), attrs


def _lower_slice(block, node, values):
  a = node.attrs
  return block.op(
      'stablehlo.slice', [values[0][0]], [node.shape],
      f'start_indices = {i64_array(a["start"])}, limit_indices = '
      f'{i64_array(a["limit"])}, strides = {i64_array(a["strides"])}')


define('Slice', _infer_slice, _lower_slice)
define('SliceInDim', _infer_slice, _lower_slice)


def _index_operands(name, indices, rank):
  indices = list(indices)
  if len(indices) != rank:
    raise ValueError(f'xla_builder.{name}: {len(indices)} start indices for an '
                     f'operand of rank {rank}')
  for i, node in enumerate(indices):
    s = _array(name, node, f'start index {i}')
    if s.rank != 0 or s.dtype not in types.INTEGRAL:
      raise TypeError(f'xla_builder.{name}: start index {i} must be an integer '
                      f'scalar, got {s}')
  return indices


def _same_index_type(block, node, index_values, index_nodes):
  """The start indices converted to the first one's type (StableHLO takes one type)."""
  dtype = index_nodes[0].shape.dtype
  out = []
  for (v,), n in zip(index_values, index_nodes):
    if n.shape.dtype != dtype:
      v = block.op('stablehlo.convert', [v], [Shape.create(dtype, ())])[0]
    out.append(v)
  return out


def _infer_dynamic_slice(name, builder, operands, kwargs):
  _count(name, operands, 1)
  s = _array(name, operands[0])
  indices = _index_operands(name, kwargs['start_indices'], s.rank)
  sizes = _per_dim(name, kwargs['slice_sizes'], s.rank, 'slice_sizes')
  for d in range(s.rank):
    if not 0 <= sizes[d] <= s.sizes[d]:
      raise ValueError(f'xla_builder.{name}: slice size {sizes[d]} of dimension '
                       f'{d} does not fit {s}')
  return operands + indices, Shape.create(s.dtype, sizes), {'sizes': sizes}


def _lower_dynamic_slice(block, node, values):
  indices = _same_index_type(block, node, values[1:], node.operands[1:])
  return block.op('stablehlo.dynamic_slice', [values[0][0]] + indices,
                  [node.shape],
                  f'slice_sizes = {i64_array(node.attrs["sizes"])}')


define('DynamicSlice', _infer_dynamic_slice, _lower_dynamic_slice)


def _infer_dynamic_update_slice(name, builder, operands, kwargs):
  _count(name, operands, 2)
  s, u = (_array(name, o) for o in operands)
  _same_type(name, (s, u))
  if u.rank != s.rank or any(a > b for a, b in zip(u.sizes, s.sizes)):
    raise ValueError(f'xla_builder.{name}: the update {u} does not fit in {s}')
  indices = _index_operands(name, kwargs['start_indices'], s.rank)
  return operands + indices, s, {}


def _lower_dynamic_update_slice(block, node, values):
  indices = _same_index_type(block, node, values[2:], node.operands[2:])
  return block.op('stablehlo.dynamic_update_slice',
                  [values[0][0], values[1][0]] + indices, [node.shape])


define('DynamicUpdateSlice', _infer_dynamic_update_slice,
       _lower_dynamic_update_slice)


def _infer_concat(name, builder, operands, kwargs):
  if not operands:
    raise ValueError(f'xla_builder.{name}: nothing to concatenate')
  shapes = [_array(name, o) for o in operands]
  _same_type(name, shapes)
  first = shapes[0]
  dim = _dims(name, [kwargs['dimension']], first.rank, 'dimension')[0]
  for s in shapes[1:]:
    if s.rank != first.rank or any(a != b for d, (a, b) in enumerate(
        zip(s.sizes, first.sizes)) if d != dim):
      raise ValueError(f'xla_builder.{name}: {first} and {s} differ outside '
                       f'dimension {dim}')
  sizes = list(first.sizes)
  sizes[dim] = sum(s.sizes[dim] for s in shapes)
  return operands, Shape.create(first.dtype, sizes), {'dimension': dim}


def _lower_concat(block, node, values):
  return block.op('stablehlo.concatenate', [v[0] for v in values], [node.shape],
                  f'dimension = {node.attrs["dimension"]} : i64')


define('ConcatInDim', _infer_concat, _lower_concat)


def _infer_rev(name, builder, operands, kwargs):
  _count(name, operands, 1)
  s = _array(name, operands[0])
  return operands, s, {
      'dimensions': _dims(name, kwargs['dimensions'], s.rank, 'dimensions')
  }


def _lower_rev(block, node, values):
  return block.op('stablehlo.reverse', [values[0][0]], [node.shape],
                  f'dimensions = {i64_array(node.attrs["dimensions"])}')


define('Rev', _infer_rev, _lower_rev)


def _infer_pad(name, builder, operands, kwargs):
  _count(name, operands, 2)
  s = _array(name, operands[0])
  _scalar_of(name, operands[1], s.dtype, 'padding value')
  config = [tuple(int(v) for v in c) for c in kwargs['config']]
  if len(config) != s.rank or any(len(c) != 3 for c in config):
    raise ValueError(f'xla_builder.{name}: config {config} must have one (low, '
                     f'high, interior) triple per dimension of {s}')
  sizes = []
  for d, (lo, hi, interior) in enumerate(config):
    n = s.sizes[d]
    size = lo + hi + n + max(n - 1, 0) * interior
    if interior < 0 or size < 0:
      raise ValueError(f'xla_builder.{name}: padding {config[d]} of dimension '
                       f'{d} of {s} is invalid')
    sizes.append(size)
  return operands, Shape.create(s.dtype, sizes), {'config': config}


def _lower_pad(block, node, values):
  config = node.attrs['config']
  return block.op(
      'stablehlo.pad', [values[0][0], values[1][0]], [node.shape],
      f'edge_padding_low = {i64_array(c[0] for c in config)}, '
      f'edge_padding_high = {i64_array(c[1] for c in config)}, '
      f'interior_padding = {i64_array(c[2] for c in config)}')


define('Pad', _infer_pad, _lower_pad)

# ---- linear algebra


def _precision(name, kwargs):
  precision = kwargs.get('precision_config')
  if precision is None:
    from torch_xla import backends
    precision = backends.get_mat_mul_precision()
  names = {'default': 'DEFAULT', 'high': 'HIGH', 'highest': 'HIGHEST'}
  if precision not in names:
    raise ValueError(f'xla_builder.{name}: precision_config {precision!r} is not '
                     'one of default, high, highest')
  return names[precision]


def _infer_dot(name, builder, operands, kwargs):
  _count(name, operands, 2)
  a, b = (_array(name, o) for o in operands)
  _same_type(name, (a, b))
  if name == 'Dot':
    if a.rank not in (1, 2) or b.rank not in (1, 2):
      raise ValueError(f'xla_builder.{name}: operands {a} and {b} must be vectors '
                       'or matrices')
    lc, rc, lb, rb = [a.rank - 1], [0], [], []
  else:
    lc = _dims(name, kwargs['lhs_contracting_dimensions'], a.rank,
               'lhs_contracting_dimensions')
    rc = _dims(name, kwargs['rhs_contracting_dimensions'], b.rank,
               'rhs_contracting_dimensions')
    lb = _dims(name, kwargs.get('lhs_batch_dimensions', ()), a.rank,
               'lhs_batch_dimensions')
    rb = _dims(name, kwargs.get('rhs_batch_dimensions', ()), b.rank,
               'rhs_batch_dimensions')
    if len(lc) != len(rc) or len(lb) != len(rb):
      raise ValueError(f'xla_builder.{name}: unequal numbers of contracting or '
                       'batch dimensions')
  for l, r in list(zip(lc, rc)) + list(zip(lb, rb)):
    if a.sizes[l] != b.sizes[r]:
      raise ValueError(f'xla_builder.{name}: dimension {l} of {a} and dimension '
                       f'{r} of {b} differ in size')
  free_a = [d for d in range(a.rank) if d not in lc and d not in lb]
  free_b = [d for d in range(b.rank) if d not in rc and d not in rb]
  sizes = ([a.sizes[d] for d in lb] + [a.sizes[d] for d in free_a] +
           [b.sizes[d] for d in free_b])
  attrs = {'dims': (lb, rb, lc, rc), 'precision': _precision(name, kwargs)}
  return operands, Shape.create(a.dtype, sizes), attrs


def _lower_dot(block, node, values):
  lb, rb, lc, rc = node.attrs['dims']
  p = node.attrs['precision']
  attrs = (f'dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = '
           f'{int_list(lb)}, rhs_batching_dimensions = {int_list(rb)}, '
           f'lhs_contracting_dimensions = {int_list(lc)}, '
           f'rhs_contracting_dimensions = {int_list(rc)}>, precision_config = '
           f'[#stablehlo<precision {p}>, #stablehlo<precision {p}>]')
  return block.op('stablehlo.dot_general', [values[0][0], values[1][0]],
                  [node.shape], attrs)


define('Dot', _infer_dot, _lower_dot)
define('DotGeneral', _infer_dot, _lower_dot)


def _infer_triangular_solve(name, builder, operands, kwargs):
  _count(name, operands, 2)
  a, b = (_array(name, o) for o in operands)
  _same_type(name, (a, b))
  if a.dtype not in types.FLOATING | types.COMPLEX:
    raise TypeError(f'xla_builder.{name}: not defined for element type {a.dtype}')
  left = bool(kwargs.get('left_side'))
  if a.rank < 2 or a.sizes[-1] != a.sizes[-2] or b.rank != a.rank:
    raise ValueError(f'xla_builder.{name}: a {a} must be square matrices of the '
                     f'rank of b {b}')
  solved = b.sizes[-2] if left else b.sizes[-1]
  if solved != a.sizes[-1] or a.sizes[:-2] != b.sizes[:-2]:
    raise ValueError(f'xla_builder.{name}: a {a} and b {b} do not match '
                     f'(left_side={left})')
  attrs = {
      'left_side': left,
      'lower': bool(kwargs.get('lower')),
      'unit_diagonal': bool(kwargs.get('unit_diagonal')),
      'transpose_a': bool(kwargs.get('transpose_a')),
  }
  return operands, b, attrs


def _lower_triangular_solve(block, node, values):
  a = node.attrs
  flag = lambda v: 'true' if v else 'false'
  transpose = 'TRANSPOSE' if a['transpose_a'] else 'NO_TRANSPOSE'
  return block.op(
      'stablehlo.triangular_solve', [values[0][0], values[1][0]], [node.shape],
      f'left_side = {flag(a["left_side"])}, lower = {flag(a["lower"])}, '
      f'unit_diagonal = {flag(a["unit_diagonal"])}, transpose_a = '
      f'#stablehlo<transpose {transpose}>')


define('TriangularSolve', _infer_triangular_solve, _lower_triangular_solve)

# ---- reductions


def _infer_reduce(name, builder, operands, kwargs):
  _count(name, operands, 2)
  s = _array(name, operands[0])
  _scalar_of(name, operands[1], s.dtype, 'initial value')
  if name == 'ReduceAll':
    dims = list(range(s.rank))
  else:
    dims = _dims(name, kwargs['dimensions'], s.rank, 'dimensions')
  scalar = s.as_scalar()
  computation = _computation(name, kwargs['computation'], [scalar, scalar],
                             'computation')
  if computation.result_shape != scalar:
    raise ValueError(f'xla_builder.{name}: the computation returns '
                     f'{computation.result_shape}, expected {scalar}')
  sizes = [n for d, n in enumerate(s.sizes) if d not in dims]
  return operands, Shape.create(s.dtype, sizes), {
      'dimensions': sorted(dims),
      'computation': computation
  }


def _lower_reduce(block, node, values):
  region = block.region(node.attrs['computation'])
  return block.op('stablehlo.reduce', [values[0][0], values[1][0]],
                  [node.shape],
                  f'dimensions = {i64_array(node.attrs["dimensions"])}',
                  regions=[region])


define('Reduce', _infer_reduce, _lower_reduce)
define('ReduceAll', _infer_reduce, _lower_reduce)


def _window_padding(name, padding, sizes, window, strides):
  """(low, high) per dimension of a window's padding: 'valid', 'same' or pairs."""
  if padding == 'valid':
    return [(0, 0)] * len(sizes)
  if padding == 'same':
    out = []
    for n, w, s in zip(sizes, window, strides):
      total = max((-(-n // s) - 1) * s + w - n, 0)
      out.append((total // 2, total - total // 2))
    return out
  pairs = [tuple(int(v) for v in p) for p in padding]
  if len(pairs) != len(sizes) or any(len(p) != 2 for p in pairs):
    raise ValueError(f'xla_builder.{name}: padding {padding} must be "valid", '
                     '"same" or one (low, high) pair per dimension')
  return pairs


def _windowed_sizes(name, shape, window, strides, padding):
  sizes = []
  for d, (n, w, s, (lo, hi)) in enumerate(
      zip(shape.sizes, window, strides, padding)):
    if w < 1 or s < 1 or n + lo + hi < w:
      raise ValueError(f'xla_builder.{name}: window {w} stride {s} padding '
                       f'{(lo, hi)} does not fit dimension {d} of {shape}')
    sizes.append((n + lo + hi - w) // s + 1)
  return sizes


def _infer_reduce_window(name, builder, operands, kwargs):
  _count(name, operands, 2)
  s = _array(name, operands[0])
  _scalar_of(name, operands[1], s.dtype, 'initial value')
  window = _per_dim(name, kwargs['window_dimensions'], s.rank,
                    'window_dimensions')
  strides = _per_dim(name, kwargs['window_strides'], s.rank, 'window_strides')
  padding = _window_padding(name, kwargs.get('padding', 'valid'), s.sizes,
                            window, strides)
  scalar = s.as_scalar()
  computation = _computation(name, kwargs['computation'], [scalar, scalar],
                             'computation')
  if computation.result_shape != scalar:
    raise ValueError(f'xla_builder.{name}: the computation returns '
                     f'{computation.result_shape}, expected {scalar}')
  sizes = _windowed_sizes(name, s, window, strides, padding)
  return operands, Shape.create(s.dtype, sizes), {
      'window': window,
      'strides': strides,
      'padding': padding,
      'computation': computation,
  }


def _padding_attr(padding):
  rows = ', '.join(f'[{lo}, {hi}]' for lo, hi in padding)
  return f'dense<[{rows}]> : tensor<{len(padding)}x2xi64>'


def _lower_reduce_window(block, node, values):
  a = node.attrs
  region = block.region(a['computation'])
  attrs = (f'window_dimensions = {i64_array(a["window"])}, window_strides = '
           f'{i64_array(a["strides"])}')
  if any(p != (0, 0) for p in a['padding']):
    attrs += f', padding = {_padding_attr(a["padding"])}'
  return block.op('stablehlo.reduce_window', [values[0][0], values[1][0]],
                  [node.shape],
                  attrs,
                  regions=[region])


define('ReduceWindow', _infer_reduce_window, _lower_reduce_window)


def _infer_max_pool(name, builder, operands, kwargs):
  _count(name, operands, 1)
  s = _array(name, operands[0])
  spatial = _dims(name, kwargs['spatial_dimensions'], s.rank,
                  'spatial_dimensions')
  kernel = [int(v) for v in kwargs['kernel_size']]
  stride = [int(v) for v in kwargs['stride']]
  if len(kernel) == len(spatial) and len(spatial) != s.rank:
    full_kernel, full_stride = [1] * s.rank, [1] * s.rank
    for i, d in enumerate(spatial):
      full_kernel[d], full_stride[d] = kernel[i], stride[i]
    kernel, stride = full_kernel, full_stride
  kernel = _per_dim(name, kernel, s.rank, 'kernel_size')
  stride = _per_dim(name, stride, s.rank, 'stride')
  padding = _window_padding(name, kwargs.get('padding', 'valid'), s.sizes,
                            kernel, stride)
  sizes = _windowed_sizes(name, s, kernel, stride, padding)
  return operands, Shape.create(s.dtype, sizes), {
      'window': kernel,
      'strides': stride,
      'padding': padding
  }


def _lowest(dtype):
  if dtype in types.FLOATING:
    return -math.inf
  if dtype in types.UNSIGNED or dtype == types.Type.PRED:
    return 0
  return -(1 << (types.BIT_WIDTHS[dtype] - 1))


def _lower_max_pool(block, node, values):
  a = node.attrs
  scalar = node.shape.as_scalar()
  init = _constant(block, scalar, _lowest(scalar.dtype))
  x, y = block.writer.argument(scalar), block.writer.argument(scalar)
  inner = block.indent + '    '
  r = block.writer.value(scalar)
  t = scalar.mlir()
  region = (f'{block.indent}  ^bb0({x}: {t}, {y}: {t}):\n'
            f'{inner}{r} = "stablehlo.maximum"({x}, {y}) : ({t}, {t}) -> {t}\n'
            f'{inner}"stablehlo.return"({r}) : ({t}) -> ()\n')
  attrs = (f'window_dimensions = {i64_array(a["window"])}, window_strides = '
           f'{i64_array(a["strides"])}')
  if any(p != (0, 0) for p in a['padding']):
    attrs += f', padding = {_padding_attr(a["padding"])}'
  return block.op('stablehlo.reduce_window', [values[0][0], init], [node.shape],
                  attrs,
                  regions=[region])


define('MaxPool', _infer_max_pool, _lower_max_pool)

# ---- control flow


def _infer_conditional(name, builder, operands, kwargs):
  _count(name, operands, 3)
  _scalar_of(name, operands[0], types.Type.PRED, 'predicate')
  true_c = _computation(name, kwargs['true_computation'], [operands[1].shape],
                        'true computation')
  false_c = _computation(name, kwargs['false_computation'], [operands[2].shape],
                         'false computation')
  if true_c.result_shape != false_c.result_shape:
    raise ValueError(f'xla_builder.{name}: the branches return '
                     f'{true_c.result_shape} and {false_c.result_shape}')
  return operands, true_c.result_shape, {
      'true_computation': true_c,
      'false_computation': false_c
  }


def _lower_conditional(block, node, values):
  pred, true_args, false_args = values
  regions = [
      block.region(node.attrs['true_computation'], [true_args]),
      block.region(node.attrs['false_computation'], [false_args]),
  ]
  return block.op('stablehlo.if', pred, node.shape.leaves(), regions=regions)


define('Conditional', _infer_conditional, _lower_conditional)


def _infer_while(name, builder, operands, kwargs):
  _count(name, operands, 1)
  shape = operands[0].shape
  cond = _computation(name, kwargs['condition_computation'], [shape],
                      'condition computation')
  body = _computation(name, kwargs['body_computation'], [shape],
                      'body computation')
  if cond.result_shape != Shape.create(types.Type.PRED, ()):
    raise ValueError(f'xla_builder.{name}: the condition returns '
                     f'{cond.result_shape}, expected pred[]')
  if body.result_shape != shape:
    raise ValueError(f'xla_builder.{name}: the body returns {body.result_shape} '
                     f'for the carried value {shape}')
  return operands, shape, {'condition': cond, 'body': body}


def _lower_while(block, node, values):
  regions = [
      block.region(node.attrs['condition']),
      block.region(node.attrs['body'])
  ]
  return block.op('stablehlo.while', values[0], node.shape.leaves(),
                  regions=regions)


define('While', _infer_while, _lower_while)


def _infer_call(name, builder, operands, kwargs):
  computation = _computation(name, kwargs['computation'],
                             [o.shape for o in operands], 'computation')
  return operands, computation.result_shape, {'computation': computation}


def _lower_call(block, node, values):
  return block.inline(node.attrs['computation'], values)


define('Call', _infer_call, _lower_call)


def _infer_map(name, builder, operands, kwargs):
  if not operands:
    raise ValueError(f'xla_builder.{name}: nothing to map')
  if kwargs.get('static_operands'):
    raise NotImplementedError(f'xla_builder.{name}: static operands are not '
                              'supported')
  shapes = [_array(name, o) for o in operands]
  for s in shapes[1:]:
    if s.sizes != shapes[0].sizes:
      raise ValueError(f'xla_builder.{name}: operands {shapes[0]} and {s} differ '
                       'in sizes')
  rank = shapes[0].rank
  dims = kwargs.get('dimensions')
  if dims is not None and sorted(int(d) for d in dims) != list(range(rank)):
    raise ValueError(f'xla_builder.{name}: dimensions {dims} must be all '
                     f'{rank} dimensions')
  computation = _computation(name, kwargs['computation'],
                             [s.as_scalar() for s in shapes], 'computation')
  result = computation.result_shape
  if result.is_tuple() or result.rank != 0:
    raise ValueError(f'xla_builder.{name}: the computation returns {result}, '
                     'expected a scalar')
  return operands, Shape.create(result.dtype, shapes[0].sizes), {
      'computation': computation
  }


def _lower_map(block, node, values):
  region = block.region(node.attrs['computation'])
  return block.op('stablehlo.map', [v[0] for v in values], [node.shape],
                  f'dimensions = {i64_array(range(node.shape.rank))}',
                  regions=[region])


define('Map', _infer_map, _lower_map)


def _infer_sort(name, builder, operands, kwargs):
  if not operands:
    raise ValueError(f'xla_builder.{name}: nothing to sort')
  shapes = [_array(name, o) for o in operands]
  for s in shapes[1:]:
    if s.sizes != shapes[0].sizes:
      raise ValueError(f'xla_builder.{name}: operands {shapes[0]} and {s} differ '
                       'in sizes')
  rank = shapes[0].rank
  dim = kwargs.get('dimension')
  dim = rank - 1 if dim is None or dim == -1 else int(dim)
  _dims(name, [dim], rank, 'dimension')
  scalars = []
  for s in shapes:
    scalars += [s.as_scalar(), s.as_scalar()]
  comparator = _computation(name, kwargs['comparator'], scalars, 'comparator')
  if comparator.result_shape != Shape.create(types.Type.PRED, ()):
    raise ValueError(f'xla_builder.{name}: the comparator returns '
                     f'{comparator.result_shape}, expected pred[]')
  shape = shapes[0] if len(shapes) == 1 else Shape.tuple_of(shapes)
  return operands, shape, {
      'dimension': dim,
      'is_stable': bool(kwargs.get('is_stable')),
      'comparator': comparator
  }


def _lower_sort(block, node, values):
  a = node.attrs
  region = block.region(a['comparator'])
  stable = 'true' if a['is_stable'] else 'false'
  return block.op('stablehlo.sort', [v[0] for v in values],
                  node.shape.leaves(),
                  f'dimension = {a["dimension"]} : i64, is_stable = {stable}',
                  regions=[region])


define('Sort', _infer_sort, _lower_sort)

# ---- indexing


def _dims_field(name, values):
  return f'{name} = {int_list(values)}, ' if values else ''


def _infer_gather(name, builder, operands, kwargs):
  _count(name, operands, 2)
  s, idx = (_array(name, o) for o in operands)
  if idx.dtype not in types.INTEGRAL:
    raise TypeError(f'xla_builder.{name}: the indices {idx} must be integers')
  if kwargs.get('slice_sizes') is None:
    raise ValueError(f'xla_builder.{name}: slice_sizes is required')
  slice_sizes = _per_dim(name, kwargs['slice_sizes'], s.rank, 'slice_sizes')
  index_vector_dim = int(kwargs['index_vector_dim'])
  if not 0 <= index_vector_dim <= idx.rank:
    raise ValueError(f'xla_builder.{name}: index_vector_dim {index_vector_dim} '
                     f'out of range for the indices {idx}')
  collapsed = _dims(name, kwargs['collapsed_slice_dims'], s.rank,
                    'collapsed_slice_dims')
  start_index_map = _dims(name, kwargs['start_index_map'], s.rank,
                          'start_index_map')
  vector = idx.sizes[index_vector_dim] if index_vector_dim < idx.rank else 1
  if len(start_index_map) != vector:
    raise ValueError(f'xla_builder.{name}: start_index_map {start_index_map} '
                     f'must have {vector} entries (the index vector\'s size)')
  for d in range(s.rank):
    if not 0 <= slice_sizes[d] <= s.sizes[d]:
      raise ValueError(f'xla_builder.{name}: slice size {slice_sizes[d]} does '
                       f'not fit dimension {d} of {s}')
  for d in collapsed:
    if slice_sizes[d] > 1:
      raise ValueError(f'xla_builder.{name}: collapsed dimension {d} has slice '
                       f'size {slice_sizes[d]}, not 1')
  batch = [n for d, n in enumerate(idx.sizes) if d != index_vector_dim]
  offsets = [n for d, n in enumerate(slice_sizes) if d not in collapsed]
  rank = len(batch) + len(offsets)
  offset_dims = _dims(name, kwargs['offset_dims'], rank, 'offset_dims')
  if len(offset_dims) != len(offsets):
    raise ValueError(f'xla_builder.{name}: offset_dims {offset_dims} must have '
                     f'{len(offsets)} entries')
  offset_dims = sorted(offset_dims)
  sizes, bi, oi = [], iter(batch), iter(offsets)
  for d in range(rank):
    sizes.append(next(oi) if d in offset_dims else next(bi))
  attrs = {
      'offset_dims': offset_dims,
      'collapsed': sorted(collapsed),
      'start_index_map': start_index_map,
      'index_vector_dim': index_vector_dim,
      'slice_sizes': slice_sizes,
      'sorted': bool(kwargs.get('indices_are_sorted')),
  }
  return operands, Shape.create(s.dtype, sizes), attrs


def _lower_gather(block, node, values):
  a = node.attrs
  attrs = ('dimension_numbers = #stablehlo.gather<' +
           _dims_field('offset_dims', a['offset_dims']) +
           _dims_field('collapsed_slice_dims', a['collapsed']) +
           _dims_field('start_index_map', a['start_index_map']) +
           f'index_vector_dim = {a["index_vector_dim"]}>, slice_sizes = '
           f'{i64_array(a["slice_sizes"])}, indices_are_sorted = '
           f'{"true" if a["sorted"] else "false"}')
  return block.op('stablehlo.gather', [values[0][0], values[1][0]],
                  [node.shape], attrs)


define('Gather', _infer_gather, _lower_gather)


def _infer_scatter(name, builder, operands, kwargs):
  _count(name, operands, 3)
  s, idx, upd = (_array(name, o) for o in operands)
  _same_type(name, (s, upd))
  if idx.dtype not in types.INTEGRAL:
    raise TypeError(f'xla_builder.{name}: the indices {idx} must be integers')
  index_vector_dim = int(kwargs['index_vector_dim'])
  if not 0 <= index_vector_dim <= idx.rank:
    raise ValueError(f'xla_builder.{name}: index_vector_dim {index_vector_dim} '
                     f'out of range for the indices {idx}')
  window = _dims(name, kwargs['update_window_dims'], upd.rank,
                 'update_window_dims')
  inserted = _dims(name, kwargs['inserted_window_dims'], s.rank,
                   'inserted_window_dims')
  to_operand = _dims(name, kwargs['scatter_dims_to_operand_dims'], s.rank,
                     'scatter_dims_to_operand_dims')
  if len(window) + len(inserted) != s.rank:
    raise ValueError(f'xla_builder.{name}: update_window_dims {window} and '
                     f'inserted_window_dims {inserted} must together cover the '
                     f'{s.rank} dimensions of {s}')
  scalar = s.as_scalar()
  computation = _computation(name, kwargs['computation'], [scalar, scalar],
                             'computation')
  if computation.result_shape != scalar:
    raise ValueError(f'xla_builder.{name}: the computation returns '
                     f'{computation.result_shape}, expected {scalar}')
  attrs = {
      'window': sorted(window),
      'inserted': sorted(inserted),
      'to_operand': to_operand,
      'index_vector_dim': index_vector_dim,
      'sorted': bool(kwargs.get('indices_are_sorted')),
      'unique': bool(kwargs.get('unique_indices')),
      'computation': computation,
  }
  return operands, s, attrs


def _lower_scatter(block, node, values):
  a = node.attrs
  region = block.region(a['computation'])
  attrs = ('scatter_dimension_numbers = #stablehlo.scatter<' +
           _dims_field('update_window_dims', a['window']) +
           _dims_field('inserted_window_dims', a['inserted']) +
           _dims_field('scatter_dims_to_operand_dims', a['to_operand']) +
           f'index_vector_dim = {a["index_vector_dim"]}>, indices_are_sorted = '
           f'{"true" if a["sorted"] else "false"}, unique_indices = '
           f'{"true" if a["unique"] else "false"}')
  return block.op('stablehlo.scatter', [v[0] for v in values], [node.shape],
                  attrs,
                  regions=[region])


define('Scatter', _infer_scatter, _lower_scatter)

# ---- convolutions


def _infer_conv(name, builder, operands, kwargs):
  _count(name, operands, 2)
  x, k = (_array(name, o) for o in operands)
  _same_type(name, (x, k))
  if x.rank != k.rank or x.rank < 3:
    raise ValueError(f'xla_builder.{name}: input {x} and kernel {k} must have '
                     'one equal rank of at least 3')
  n = x.rank - 2
  if name in ('Conv', 'ConvWithGeneralPadding'):
    # The default dimension order: [batch, feature, spatial...] for the input and
    # output, [output feature, input feature, spatial...] for the kernel.
    spatial = list(range(2, x.rank))
    numbers = dict(
        input_batch_dimension=0,
        input_feature_dimension=1,
        input_spatial_dimensions=spatial,
        kernel_output_feature_dimension=0,
        kernel_input_feature_dimension=1,
        kernel_spatial_dimensions=spatial,
        output_batch_dimension=0,
        output_feature_dimension=1,
        output_spatial_dimensions=spatial)
  else:
    numbers = {
        key: kwargs[key] for key in
        ('input_batch_dimension', 'input_feature_dimension',
         'input_spatial_dimensions', 'kernel_input_feature_dimension',
         'kernel_output_feature_dimension', 'kernel_spatial_dimensions',
         'output_batch_dimension', 'output_feature_dimension',
         'output_spatial_dimensions')
    }
  input_dims = _dims(name, [numbers['input_batch_dimension'],
                            numbers['input_feature_dimension']] +
                     list(numbers['input_spatial_dimensions']), x.rank,
                     'input dimensions')
  kernel_dims = _dims(name, [numbers['kernel_output_feature_dimension'],
                             numbers['kernel_input_feature_dimension']] +
                      list(numbers['kernel_spatial_dimensions']), k.rank,
                      'kernel dimensions')
  output_dims = _dims(name, [numbers['output_batch_dimension'],
                             numbers['output_feature_dimension']] +
                      list(numbers['output_spatial_dimensions']), x.rank,
                      'output dimensions')
  if len(input_dims) != x.rank or len(kernel_dims) != k.rank or len(
      output_dims) != x.rank:
    raise ValueError(f'xla_builder.{name}: the dimension numbers must name each '
                     f'of the {x.rank} dimensions once')
  strides = [int(v) for v in kwargs['window_strides']]
  lhs_dilation = [int(v) for v in kwargs.get('lhs_dilation') or [1] * n]
  rhs_dilation = [int(v) for v in kwargs.get('rhs_dilation') or [1] * n]
  for what, values in (('window_strides', strides), ('lhs_dilation',
                                                     lhs_dilation),
                       ('rhs_dilation', rhs_dilation)):
    if len(values) != n or any(v < 1 for v in values):
      raise ValueError(f'xla_builder.{name}: {what} {values} must have {n} '
                       'positive entries')
  in_spatial = [x.sizes[d] for d in input_dims[2:]]
  k_spatial = [k.sizes[d] for d in kernel_dims[2:]]
  dilated_in = [(s - 1) * d + 1 for s, d in zip(in_spatial, lhs_dilation)]
  dilated_k = [(s - 1) * d + 1 for s, d in zip(k_spatial, rhs_dilation)]
  padding = _window_padding(name, kwargs.get('padding', 'valid'), dilated_in,
                            dilated_k, strides)
  feature_groups = int(kwargs.get('feature_group_count') or 1)
  batch_groups = int(kwargs.get('batch_group_count') or 1)
  in_features = x.sizes[input_dims[1]]
  out_features = k.sizes[kernel_dims[0]]
  if (in_features % feature_groups or
      k.sizes[kernel_dims[1]] * feature_groups != in_features):
    raise ValueError(f'xla_builder.{name}: input features {in_features} do not '
                     f'match kernel input features {k.sizes[kernel_dims[1]]} '
                     f'times feature_group_count {feature_groups}')
  batch = x.sizes[input_dims[0]]
  if batch % batch_groups or out_features % batch_groups:
    raise ValueError(f'xla_builder.{name}: batch_group_count {batch_groups} '
                     'divides neither the batch nor the output features')
  out_spatial = []
  for d, (n_in, n_k, s, (lo, hi)) in enumerate(
      zip(dilated_in, dilated_k, strides, padding)):
    if n_in + lo + hi < n_k:
      raise ValueError(f'xla_builder.{name}: the kernel {k} does not fit spatial '
                       f'dimension {d} of the input {x}')
    out_spatial.append((n_in + lo + hi - n_k) // s + 1)
  sizes = [0] * x.rank
  sizes[output_dims[0]] = batch // batch_groups
  sizes[output_dims[1]] = out_features
  for d, v in zip(output_dims[2:], out_spatial):
    sizes[d] = v
  attrs = {
      'input_dims': input_dims,
      'kernel_dims': kernel_dims,
      'output_dims': output_dims,
      'strides': strides,
      'padding': padding,
      'lhs_dilation': lhs_dilation,
      'rhs_dilation': rhs_dilation,
      'feature_groups': feature_groups,
      'batch_groups': batch_groups,
      'precision': _precision(name, kwargs),
  }
  return operands, Shape.create(x.dtype, sizes), attrs


def _conv_layout(dims, first, second):
  labels = [''] * len(dims)
  labels[dims[0]], labels[dims[1]] = first, second
  for i, d in enumerate(dims[2:]):
    labels[d] = str(i)
  return '[' + ', '.join(labels) + ']'


def _lower_conv(block, node, values):
  a = node.attrs
  p = a['precision']
  layout = (_conv_layout(a['input_dims'], 'b', 'f') + 'x' +
            _conv_layout(a['kernel_dims'], 'o', 'i') + '->' +
            _conv_layout(a['output_dims'], 'b', 'f'))
  attrs = (f'window_strides = {i64_array(a["strides"])}, padding = '
           f'{_padding_attr(a["padding"])}, lhs_dilation = '
           f'{i64_array(a["lhs_dilation"])}, rhs_dilation = '
           f'{i64_array(a["rhs_dilation"])}, dimension_numbers = '
           f'#stablehlo.conv<{layout}>, feature_group_count = '
           f'{a["feature_groups"]} : i64, batch_group_count = '
           f'{a["batch_groups"]} : i64, precision_config = '
           f'[#stablehlo<precision {p}>, #stablehlo<precision {p}>]')
  return block.op('stablehlo.convolution', [values[0][0], values[1][0]],
                  [node.shape], attrs)


for _name in ('Conv', 'ConvWithGeneralPadding', 'ConvWithGeneralDimensions',
              'ConvGeneral', 'ConvGeneralDilated'):
  define(_name, _infer_conv, _lower_conv)

# ---- sizes


def _infer_get_dimension_size(name, builder, operands, kwargs):
  _count(name, operands, 1)
  s = _array(name, operands[0])
  dim = _dims(name, [kwargs['dimension']], s.rank, 'dimension')[0]
  return operands, Shape.create(types.Type.S32, ()), {'size': s.sizes[dim]}


def _lower_get_dimension_size(block, node, values):
  return [_constant(block, node.shape, node.attrs['size'])]


define('GetDimensionSize', _infer_get_dimension_size, _lower_get_dimension_size)
