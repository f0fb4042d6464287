"""Computations built from Python and run on XLA tensors.

    import torch_xla.core.xla_builder as xb

    def scaled_sum(a, b):
      return (a + b) * xb.Op.scalar(a.builder(), 0.5, dtype=a.shape().dtype)

    shape = xb.mkshape(xb.Type.F32, (2, 3))
    computation = xb.create_computation('scaled_sum', scaled_sum, (shape, shape))
    result, = torch_xla._XLAC._xla_user_computation('xla::scaled_sum', [a, b],
                                                   computation)

An `Op` is a symbolic value of a computation being built: operators (+, -, *, /, **, %,
&, |, ^, <<, >>, comparisons, @) and methods (reshape, broadcast, slice, dot, reduce,
conditional, while_loop...) build new ones, each with its shape checked and inferred on
the spot; a wrong combination raises ValueError or TypeError naming the op. A built
computation is one StableHLO function; calling it on XLA tensors adds a call of that
function to the lazy graph, so it fuses and compiles with the ops around it.
torch_xla.core.xla_op_registry wraps this in a callable op. See docs/adding_ops.md.
"""

import torch
from torch.utils import _pytree as pytree

from torch_xla._extension import xlac
from torch_xla.core import _builder_ops
from torch_xla.core._builder_graph import Builder, Computation
from torch_xla.core._builder_types import (Shape, Type, XLA_PT_TYPE_MAP,
                                           PT_XLA_TYPE_MAP)

# The names torch_xla gives these maps.
_XLA_PT_TYPE_MAP = XLA_PT_TYPE_MAP
_PT_XLA_TYPE_MAP = PT_XLA_TYPE_MAP


class Op(object):
  """A value of a computation being built (an array or a tuple of values).

  The methods follow XLA's operation semantics
  (https://openxla.org/xla/operation_semantics). `op` is the graph node.
  """

  def __init__(self, op):
    self.op = op

  def shape(self):
    return self.op.shape

  def builder(self):
    return self.op.builder

  def build(self, name):
    """The computation whose result is this value."""
    return Computation(name, self.op.builder, self.op)

  def __add__(self, rhs):
    return mkop('Add', (self.op, rhs.op))

  def __sub__(self, rhs):
    return mkop('Sub', (self.op, rhs.op))

  def __mul__(self, rhs):
    return mkop('Mul', (self.op, rhs.op))

  def __matmul__(self, rhs):
    return mkop('Dot', (self.op, rhs.op))

  def __truediv__(self, rhs):
    return mkop('Div', (self.op, rhs.op))

  def __pow__(self, rhs):
    return mkop('Pow', (self.op, rhs.op))

  def __mod__(self, rhs):
    return mkop('Rem', (self.op, rhs.op))

  def __neg__(self):
    return mkop('Neg', (self.op,))

  def __invert__(self):
    return mkop('Not', (self.op,))

  def __not__(self):
    return mkop('Not', (self.op,))

  def __and__(self, rhs):
    return mkop('And', (self.op, rhs.op))

  def __or__(self, rhs):
    return mkop('Or', (self.op, rhs.op))

  def __xor__(self, rhs):
    return mkop('Xor', (self.op, rhs.op))

  def __eq__(self, rhs):
    return mkop('Eq', (self.op, rhs.op))

  def __ne__(self, rhs):
    return mkop('Ne', (self.op, rhs.op))

  def __le__(self, rhs):
    return mkop('Le', (self.op, rhs.op))

  def __lt__(self, rhs):
    return mkop('Lt', (self.op, rhs.op))

  def __ge__(self, rhs):
    return mkop('Ge', (self.op, rhs.op))

  def __gt__(self, rhs):
    return mkop('Gt', (self.op, rhs.op))

  def __lshift__(self, rhs):
    return mkop('ShiftLeft', (self.op, rhs.op))

  def __rshift__(self, rhs):
    return mkop('ShiftRight', (self.op, rhs.op))

  # An Op compares into a new Op, so it cannot be a dict key by value.
  __hash__ = object.__hash__

  def __repr__(self):
    return f'Op({self.op.kind}: {self.op.shape})'

  def reshape(self, sizes, dimensions=None, inferred_dimension=None):
    """`sizes` (one may be -1); with `dimensions`, transposed by that permutation first."""
    return mkop(
        'Reshape', (self.op,),
        sizes=sizes,
        dimensions=dimensions,
        inferred_dimension=inferred_dimension)

  def dynamic_reshape(self, sizes):
    raise NotImplementedError(
        'xla_builder.DynamicReshape: dynamic shapes are not supported')

  def broadcast(self, sizes):
    """New leading dimensions of `sizes`, the operand's after them."""
    return mkop('Broadcast', (self.op,), sizes=sizes)

  def broadcast_in_dim(self, sizes, dimensions):
    return mkop(
        'BroadcastInDim', (self.op,), sizes=sizes, dimensions=dimensions)

  def slice(self, start_indices, limit_indices, strides=None):
    if strides is None:
      strides = [1] * len(start_indices)
    return mkop(
        'Slice', (self.op,),
        start_indices=start_indices,
        limit_indices=limit_indices,
        strides=strides)

  def slice_in_dim(self, start_index, limit_index, dimno, stride=1):
    return mkop(
        'SliceInDim', (self.op,),
        start_index=start_index,
        limit_index=limit_index,
        dimno=dimno,
        stride=stride)

  def dynamic_slice(self, start_indices, slice_sizes):
    start_indices = [x.op for x in start_indices]
    return mkop(
        'DynamicSlice', (self.op,),
        start_indices=start_indices,
        slice_sizes=slice_sizes)

  def dynamic_update_slice(self, update, start_indices):
    start_indices = [x.op for x in start_indices]
    return mkop(
        'DynamicUpdateSlice', (self.op, update.op), start_indices=start_indices)

  def gather(self,
             start_indices,
             offset_dims,
             collapsed_slice_dims,
             start_index_map,
             index_vector_dim,
             indices_are_sorted=None,
             slice_sizes=None):
    return mkop(
        'Gather', (self.op, start_indices.op),
        offset_dims=offset_dims,
        collapsed_slice_dims=collapsed_slice_dims,
        start_index_map=start_index_map,
        index_vector_dim=index_vector_dim,
        indices_are_sorted=indices_are_sorted,
        slice_sizes=slice_sizes)

  def scatter(self,
              scatter_indices,
              updates,
              computation,
              update_window_dims,
              inserted_window_dims,
              scatter_dims_to_operand_dims,
              index_vector_dim,
              indices_are_sorted=None,
              unique_indices=None):
    return mkop(
        'Scatter', (self.op, scatter_indices.op, updates.op),
        computation=computation,
        update_window_dims=update_window_dims,
        inserted_window_dims=inserted_window_dims,
        scatter_dims_to_operand_dims=scatter_dims_to_operand_dims,
        index_vector_dim=index_vector_dim,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices)

  def conv(self,
           kernel,
           window_strides,
           feature_group_count=1,
           batch_group_count=1,
           padding='valid',
           precision_config=None):
    return mkop(
        'Conv', (self.op, kernel.op),
        window_strides=window_strides,
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        padding=padding,
        precision_config=precision_config)

  def conv_with_general_padding(self,
                                kernel,
                                window_strides,
                                padding,
                                feature_group_count=1,
                                batch_group_count=1,
                                precision_config=None):
    return mkop(
        'ConvWithGeneralPadding', (self.op, kernel.op),
        window_strides=window_strides,
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        padding=padding,
        precision_config=precision_config)

  def conv_with_general_dimensions(self,
                                   kernel,
                                   window_strides,
                                   input_batch_dimension,
                                   input_feature_dimension,
                                   kernel_input_feature_dimension,
                                   kernel_output_feature_dimension,
                                   output_batch_dimension,
                                   output_feature_dimension,
                                   input_spatial_dimensions,
                                   kernel_spatial_dimensions,
                                   output_spatial_dimensions,
                                   padding='valid',
                                   feature_group_count=1,
                                   batch_group_count=1,
                                   precision_config=None):
    return mkop(
        'ConvWithGeneralDimensions', (self.op, kernel.op),
        window_strides=window_strides,
        input_batch_dimension=input_batch_dimension,
        input_feature_dimension=input_feature_dimension,
        kernel_input_feature_dimension=kernel_input_feature_dimension,
        kernel_output_feature_dimension=kernel_output_feature_dimension,
        output_batch_dimension=output_batch_dimension,
        output_feature_dimension=output_feature_dimension,
        input_spatial_dimensions=input_spatial_dimensions,
        kernel_spatial_dimensions=kernel_spatial_dimensions,
        output_spatial_dimensions=output_spatial_dimensions,
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        padding=padding,
        precision_config=precision_config)

  def conv_general(self,
                   kernel,
                   window_strides,
                   padding,
                   input_batch_dimension,
                   input_feature_dimension,
                   kernel_input_feature_dimension,
                   kernel_output_feature_dimension,
                   output_batch_dimension,
                   output_feature_dimension,
                   input_spatial_dimensions,
                   kernel_spatial_dimensions,
                   output_spatial_dimensions,
                   feature_group_count=1,
                   batch_group_count=1,
                   precision_config=None):
    return mkop(
        'ConvGeneral', (self.op, kernel.op),
        window_strides=window_strides,
        padding=padding,
        input_batch_dimension=input_batch_dimension,
        input_feature_dimension=input_feature_dimension,
        kernel_input_feature_dimension=kernel_input_feature_dimension,
        kernel_output_feature_dimension=kernel_output_feature_dimension,
        output_batch_dimension=output_batch_dimension,
        output_feature_dimension=output_feature_dimension,
        input_spatial_dimensions=input_spatial_dimensions,
        kernel_spatial_dimensions=kernel_spatial_dimensions,
        output_spatial_dimensions=output_spatial_dimensions,
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        precision_config=precision_config)

  def conv_general_dilated(self,
                           kernel,
                           window_strides,
                           padding,
                           lhs_dilation,
                           rhs_dilation,
                           input_batch_dimension,
                           input_feature_dimension,
                           kernel_input_feature_dimension,
                           kernel_output_feature_dimension,
                           output_batch_dimension,
                           output_feature_dimension,
                           input_spatial_dimensions,
                           kernel_spatial_dimensions,
                           output_spatial_dimensions,
                           feature_group_count=1,
                           batch_group_count=1,
                           precision_config=None):
    return mkop(
        'ConvGeneralDilated', (self.op, kernel.op),
        window_strides=window_strides,
        padding=padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        input_batch_dimension=input_batch_dimension,
        input_feature_dimension=input_feature_dimension,
        kernel_input_feature_dimension=kernel_input_feature_dimension,
        kernel_output_feature_dimension=kernel_output_feature_dimension,
        output_batch_dimension=output_batch_dimension,
        output_feature_dimension=output_feature_dimension,
        input_spatial_dimensions=input_spatial_dimensions,
        kernel_spatial_dimensions=kernel_spatial_dimensions,
        output_spatial_dimensions=output_spatial_dimensions,
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        precision_config=precision_config)

  def dot_general(self,
                  rhs,
                  lhs_contracting_dimensions,
                  rhs_contracting_dimensions,
                  lhs_batch_dimensions=(),
                  rhs_batch_dimensions=(),
                  precision_config=None):
    """The product contracting the given dimensions; the result's dimensions are the
    batch dimensions, then lhs's free ones, then rhs's."""
    return mkop(
        'DotGeneral', (self.op, rhs.op),
        lhs_contracting_dimensions=lhs_contracting_dimensions,
        rhs_contracting_dimensions=rhs_contracting_dimensions,
        lhs_batch_dimensions=lhs_batch_dimensions,
        rhs_batch_dimensions=rhs_batch_dimensions,
        precision_config=precision_config)

  def cast(self, to_type):
    return mkop('Convert', (self.op,), to_type=to_type)

  def bitcast(self, to_type):
    return mkop('BitcastConvert', (self.op,), to_type=to_type)

  def pad(self, value, config):
    """`config`: one (low, high, interior) triple per dimension."""
    return mkop('Pad', (self.op, value.op), config=config)

  def select_and_scatter(self, *args, **kwargs):
    raise NotImplementedError(
        'xla_builder.SelectAndScatter is not supported')

  def select_and_scatter_with_general_padding(self, *args, **kwargs):
    raise NotImplementedError(
        'xla_builder.SelectAndScatterWithGeneralPadding is not supported')

  def max_pool(self,
               kernel_size,
               stride,
               batch_dimension,
               feature_dimension,
               spatial_dimensions,
               padding='valid'):
    return mkop(
        'MaxPool', (self.op,),
        kernel_size=kernel_size,
        stride=stride,
        batch_dimension=batch_dimension,
        feature_dimension=feature_dimension,
        spatial_dimensions=spatial_dimensions,
        padding=padding)

  def reduce(self, init_value, computation, dimensions):
    """Reduces `dimensions` with `computation` (a function of two scalar Ops, or a
    built computation) from `init_value`."""
    scalar_shape = self.shape().as_scalar()
    computation = Op.make_computation('Reduce', computation,
                                      (scalar_shape, scalar_shape))
    return mkop(
        'Reduce', (self.op, init_value.op),
        computation=computation,
        dimensions=dimensions)

  def reduce_all(self, init_value, computation):
    scalar_shape = self.shape().as_scalar()
    computation = Op.make_computation('ReduceAll', computation,
                                      (scalar_shape, scalar_shape))
    return mkop('ReduceAll', (self.op, init_value.op), computation=computation)

  def reduce_window(self,
                    init_value,
                    computation,
                    window_dimensions,
                    window_strides,
                    padding='valid'):
    scalar_shape = self.shape().as_scalar()
    computation = Op.make_computation('ReduceWindow', computation,
                                      (scalar_shape, scalar_shape))
    return mkop(
        'ReduceWindow', (self.op, init_value.op),
        computation=computation,
        window_dimensions=window_dimensions,
        window_strides=window_strides,
        padding=padding)

  def select(self, true_value, false_value):
    """Where this predicate holds, true_value's element, else false_value's."""
    return mkop('Select', (self.op, true_value.op, false_value.op))

  def transpose(self, permutation):
    return mkop('Transpose', (self.op,), permutation=permutation)

  def triangular_solve(self,
                       b,
                       left_side=None,
                       lower=None,
                       unit_diagonal=None,
                       transpose_a=None):
    """Solves a x = b (left_side) or x a = b for x, this Op being the triangular a."""
    return mkop(
        'TriangularSolve', (self.op, b.op),
        left_side=left_side,
        lower=lower,
        unit_diagonal=unit_diagonal,
        transpose_a=transpose_a)

  # torch_xla's spelling.
  triangualr_solve = triangular_solve

  def clamp(self, min_value, max_value):
    return mkop('Clamp', (self.op, min_value.op, max_value.op))

  def get_tuple_element(self, index):
    return mkop('GetTupleElement', (self.op,), index=index)

  def conditional(self, true_operand, false_operand, true_computation,
                  false_computation):
    """true_computation(true_operand) where this pred[] scalar holds, else
    false_computation(false_operand)."""
    true_computation = Op.make_computation('CondTrue', true_computation,
                                           (true_operand,))
    false_computation = Op.make_computation('CondFalse', false_computation,
                                            (false_operand,))
    return mkop(
        'Conditional', (self.op, true_operand.op, false_operand.op),
        true_computation=true_computation,
        false_computation=false_computation)

  @classmethod
  def wrap_function(cls, fn):
    """`fn` taking a tuple parameter as its elements, and returning a tuple for a list
    or tuple of Ops."""

    def wrapper(*args, **kwargs):
      if len(args) == 1:
        arg = args[0]
        shape = arg.shape()
        if shape.is_tuple():
          args = [
              arg.get_tuple_element(i) for i in range(0, shape.tuple_size())
          ]
      result = fn(*args, **kwargs)
      return Op.tuple(result) if isinstance(result, (tuple, list)) else result

    return wrapper

  @classmethod
  def make_computation(cls, name, computation, args_or_shapes, **kwargs):
    """`computation` itself when built, else the computation of the function over
    parameters of these shapes (or the shapes of these Ops)."""
    if not callable(computation):
      return computation
    shapes = []
    for arg in args_or_shapes:
      shapes.append(arg if isinstance(arg, Shape) else arg.shape())
    return create_computation(name, Op.wrap_function(computation), shapes,
                              **kwargs)

  def mkconditional(self, ops, true_fn, false_fn, **kwargs):
    """true_fn(*ops) where this predicate holds, else false_fn(*ops)."""
    input_tuple = Op.tuple(ops)
    return self.conditional(input_tuple, input_tuple, true_fn, false_fn)

  def while_loop(self, condition_computation, body_computation):
    """Repeats `body_computation` on this value while `condition_computation` holds."""
    condition_computation = Op.make_computation('Condition',
                                                condition_computation, (self,))
    body_computation = Op.make_computation('Body', body_computation, (self,))
    return mkop(
        'While', (self.op,),
        condition_computation=condition_computation,
        body_computation=body_computation)

  @classmethod
  def mkwhile(cls, ops, condition_fn, body_fn, **kwargs):
    """The tuple of the final values of `ops`, carried through body_fn(*values) while
    condition_fn(*values) holds."""
    input_tuple = Op.tuple(ops)
    return input_tuple.while_loop(
        condition_computation=condition_fn, body_computation=body_fn)

  def get_dimension_size(self, dimension):
    return mkop('GetDimensionSize', (self.op,), dimension=dimension)

  def set_dimension_size(self, size, dimension):
    raise NotImplementedError(
        'xla_builder.SetDimensionSize: dynamic shapes are not supported')

  def rev(self, dimensions):
    return mkop('Rev', (self.op,), dimensions=dimensions)

  def acos(self):
    return mkop('Acos', (self.op,))

  def asin(self):
    return mkop('Asin', (self.op,))

  def atan(self):
    return mkop('Atan', (self.op,))

  def ceil(self):
    return mkop('Ceil', (self.op,))

  def cos(self):
    return mkop('Cos', (self.op,))

  def cosh(self):
    return mkop('Cosh', (self.op,))

  def erf(self):
    return mkop('Erf', (self.op,))

  def erfc(self):
    return mkop('Erfc', (self.op,))

  def erfinf(self):
    return mkop('ErfInv', (self.op,))

  erfinv = erfinf

  def exp(self):
    return mkop('Exp', (self.op,))

  def expm1(self):
    return mkop('Expm1', (self.op,))

  def floor(self):
    return mkop('Floor', (self.op,))

  def log(self):
    return mkop('Log', (self.op,))

  def log1p(self):
    return mkop('Log1p', (self.op,))

  def sqrt(self):
    return mkop('Sqrt', (self.op,))

  def real(self):
    return mkop('Real', (self.op,))

  def imag(self):
    return mkop('Imag', (self.op,))

  def clz(self):
    return mkop('Clz', (self.op,))

  def conj(self):
    return mkop('Conj', (self.op,))

  def rsqrt(self):
    return mkop('Rsqrt', (self.op,))

  def sin(self):
    return mkop('Sin', (self.op,))

  def sinh(self):
    return mkop('Sinh', (self.op,))

  def tan(self):
    return mkop('Tan', (self.op,))

  def tanh(self):
    return mkop('Tanh', (self.op,))

  def abs(self):
    return mkop('Abs', (self.op,))

  def sign(self):
    return mkop('Sign', (self.op,))

  def square(self):
    return mkop('Square', (self.op,))

  def sigmoid(self):
    return mkop('Logistic', (self.op,))

  def atan2(self, other):
    return mkop('Atan2', (self.op, other.op))

  def max(self, other):
    return mkop('Max', (self.op, other.op))

  def min(self, other):
    return mkop('Min', (self.op, other.op))

  def scalar_like(self, value):
    """`value` broadcast to this array's shape and type."""
    shape = self.shape()
    v = Op.scalar(self.builder(), value, dtype=shape.dtype)
    return v.broadcast(shape.sizes)

  def zeros_like(self):
    return self.scalar_like(0)

  def ones_like(self):
    return self.scalar_like(1)

  @classmethod
  def _extract_xla_ops(cls, ops):
    return [x.op for x in ops]

  @classmethod
  def tuple(cls, ops, builder=None):
    return mkop('Tuple', Op._extract_xla_ops(ops), builder=builder)

  @classmethod
  def concat_in_dim(cls, ops, dimension, builder=None):
    return mkop(
        'ConcatInDim',
        Op._extract_xla_ops(ops),
        builder=builder,
        dimension=dimension)

  @classmethod
  def call(cls, computation, ops, builder=None):
    computation = Op.make_computation('Call', computation, ops)
    return mkop(
        'Call',
        Op._extract_xla_ops(ops),
        computation=computation,
        builder=builder)

  @classmethod
  def constant(cls, builder, value):
    """A constant holding `value` (a tensor, array or number) in its own type."""
    return mkleaf('Constant', builder, value=value)

  @classmethod
  def scalar(cls, builder, value, dtype=None):
    return mkleaf(
        'Constant',
        builder,
        value=torch.tensor(value, dtype=cls.to_torch_type(dtype)))

  @classmethod
  def zero(cls, builder, dtype=None):
    return cls.scalar(builder, 0, dtype=dtype)

  @classmethod
  def one(cls, builder, dtype=None):
    return cls.scalar(builder, 1, dtype=dtype)

  @classmethod
  def iota(cls, builder, shape, iota_dimension):
    return mkleaf(
        'Iota', builder, shape=shape.shape, iota_dimension=iota_dimension)

  @classmethod
  def sort(cls, ops, comparator, dimension=None, is_stable=None):
    """`ops` sorted together along `dimension` by comparator(a0, b0, a1, b1, ...),
    which says whether a goes before b."""
    return mkop(
        'Sort',
        Op._extract_xla_ops(ops),
        comparator=comparator,
        dimension=dimension,
        is_stable=is_stable)

  @classmethod
  def map(cls, ops, computation, dimensions, static_operands=(), builder=None):
    return mkop(
        'Map',
        Op._extract_xla_ops(ops),
        builder=builder,
        computation=computation,
        dimensions=dimensions,
        static_operands=Op._extract_xla_ops(static_operands))

  @classmethod
  def to_torch_type(cls, dtype):
    return XLA_PT_TYPE_MAP[dtype] if dtype else torch.float32

  @classmethod
  def from_torch_type(cls, dtype):
    return PT_XLA_TYPE_MAP[dtype]


def create_builder(name):
  return Builder(name)


def mkshape(dtype, sizes, dynamic_dimensions=None):
  return Shape.create(dtype, sizes, dynamic_dimensions=dynamic_dimensions)


def mkop(name, ops, **kwargs):
  """The Op `name` (Add, Reshape, Reduce...) of the nodes `ops`, with the op's
  arguments as keywords."""
  builder = kwargs.pop('builder', None)
  if builder is None:
    if not ops:
      raise ValueError(f'xla_builder.{name}: no operands, and no builder given')
    builder = ops[0].builder
  return Op(_builder_ops.make_node(builder, name, ops, kwargs))


def mkleaf(name, builder, **kwargs):
  return Op(_builder_ops.make_node(builder, name, (), kwargs))


def mkparam(builder, param_no, shape):
  """Parameter `param_no` of the computation `builder` builds, of `shape`."""
  param_no = int(param_no)
  if param_no in builder.parameters:
    raise ValueError(f'xla_builder: builder {builder.name!r} has a parameter '
                     f'{param_no} already')
  op = mkleaf('Parameter', builder, number=param_no, shape=shape)
  builder.parameters[param_no] = op.op
  return op


def tensor_shape(tensor, device=''):
  """The Shape of a tensor (a list of them for a list) as the device holds it."""
  if isinstance(tensor, (list, tuple)):
    return [tensor_shape(t, device) for t in tensor]
  return Shape(xlac()._xla_op_tensor_shape(tensor, device))


def create_computation(name, fn, shapes, **kwargs):
  """The computation fn(*parameters, **kwargs), a parameter of each shape."""
  builder = create_builder(name)
  params = []
  for shape in shapes:
    p = mkparam(builder, len(params), shape)
    params.append(p)
  root = fn(*params, **kwargs)
  if not isinstance(root, Op):
    raise TypeError(f'xla_builder computation {name!r}: the function returned a '
                    f'{type(root).__name__}, not an Op')
  return root.build(name)


def computation_from_module_proto(name, proto):
  raise NotImplementedError(
      'xla_builder.computation_from_module_proto: HLO module protos are not '
      'supported; computations are StableHLO text built by xla_builder')


def get_computation_hlo(computation):
  """The computation as a StableHLO module (MLIR text) whose @main it is."""
  return computation.module_text()


def xla_computation_as_func(computation, name=None):
  """A function of a list of XLA tensors that returns the list of the computation's
  results."""
  name = name or 'xla::computation'
  if not '::' in name:
    name = 'xla::' + name

  def fn(input_tensors):
    return xlac()._xla_user_computation(name, input_tensors, computation)

  return fn


class FlattenedInputFunc:
  """A function of nested arguments (pytrees) called with the flat list of its tensors.

  preprocess(args, kwargs) keeps the non-tensor leaves and the structure and returns
  the tensors; flat_call(tensors) calls the function with the arguments rebuilt and
  returns its flattened results; postprocess(flat results) rebuilds their structure.
  """

  def __init__(self, orig_func):
    self.orig_func = orig_func
    self.non_tensors = None
    self.in_spec = None
    self.out_spec = None
    # Marks the places of the tensors among the flattened arguments.
    self._sentinel = object()

  def preprocess(self, args, kwargs=None):
    kwargs = kwargs or {}
    flattened_inputs, spec = self.flatten((args, kwargs))
    tensors = tuple(a for a in flattened_inputs if isinstance(a, torch.Tensor))
    self.non_tensors = tuple(
        self._sentinel if isinstance(a, torch.Tensor) else a
        for a in flattened_inputs)
    self.in_spec = spec
    return tensors

  def flat_call(self, flat_input):
    assert self.in_spec is not None, 'flat_call needs preprocess first'
    new_flattened = list(self.non_tensors)
    tensor_args_iter = iter(flat_input)
    for i in range(len(new_flattened)):
      if new_flattened[i] is self._sentinel:
        new_flattened[i] = next(tensor_args_iter)
    args, kwargs = self.unflatten(new_flattened, self.in_spec)
    res = self.orig_func(*args, **kwargs)
    flattened_out, spec = self.flatten(res)
    self.out_spec = spec
    return flattened_out

  def postprocess(self, res_flattened):
    assert self.out_spec is not None, 'postprocess needs flat_call first'
    return self.unflatten(res_flattened, self.out_spec)

  def flatten(self, inputs):
    return pytree.tree_flatten(inputs)

  def unflatten(self, flattened, spec):
    return pytree.tree_unflatten(flattened, spec)


class CompiledCallableWithCache(object):
  """A callable of tensors specialized (by `specialize`, in a subclass) once per input
  shapes and non-tensor arguments."""

  def __init__(self, flat_input_func):
    self._cache = {}
    self._flat_input_func = flat_input_func

  def __call__(self, *args, **kwargs):
    tensor_input_flattened = self._flat_input_func.preprocess(args, kwargs)
    abstract_inputs = tuple((a.shape, a.dtype) if a is not None else a
                            for a in tensor_input_flattened)
    cache_key = (abstract_inputs, tuple(self._flat_input_func.non_tensors),
                 self._flat_input_func.in_spec)
    if cache_key not in self._cache:
      self._cache[cache_key] = self.specialize(tensor_input_flattened)
    output = self._cache[cache_key](tensor_input_flattened)
    return self._flat_input_func.postprocess(output)

  def specialize(self, sample_flat_args):
    raise NotImplementedError


class XlaCallable(CompiledCallableWithCache):
  """A function written with Ops (one per tensor argument) called on XLA tensors: built
  into a computation once per input shapes."""

  def __init__(self, xla_func):
    super().__init__(FlattenedInputFunc(xla_func))

  def specialize(self, sample_flat_args):
    name = 'xla::computation'
    builder = create_builder(name)
    params = []
    for a in sample_flat_args:
      p = mkparam(builder, len(params),
                  mkshape(Op.from_torch_type(a.dtype), a.shape))
      params.append(p)
    root = Op.tuple(self._flat_input_func.flat_call(params))
    computation = root.build(name)
    return xla_computation_as_func(computation, name)


def call_jax(jax_func, args, kwargs=None, name=None, override_hash=None):
  raise NotImplementedError(
      'xla_builder.call_jax: calling JAX functions is not supported')
