"""Element types and shapes of torch_xla.core.xla_builder computations.

An array shape is a dict {'type': 'f32', 'sizes': (2, 3)}, a tuple shape a list of
shapes, as torch_xla's builder writes them; `Shape` wraps either. The MLIR spelling of
each type is what the builder's StableHLO text uses.
"""

import torch


class Type:
  F32 = 'f32'
  F64 = 'f64'
  BF16 = 'bf16'
  F16 = 'f16'
  U8 = 'u8'
  S8 = 's8'
  U16 = 'u16'
  S16 = 's16'
  U32 = 'u32'
  S32 = 's32'
  U64 = 'u64'
  S64 = 's64'
  C64 = 'c64'
  C128 = 'c128'
  PRED = 'pred'


XLA_PT_TYPE_MAP = {
    Type.F32: torch.float32,
    Type.F64: torch.float64,
    Type.BF16: torch.bfloat16,
    Type.F16: torch.float16,
    Type.U8: torch.uint8,
    Type.S8: torch.int8,
    Type.U16: torch.uint16,
    Type.S16: torch.int16,
    Type.U32: torch.uint32,
    Type.S32: torch.int32,
    Type.U64: torch.uint64,
    Type.S64: torch.int64,
    Type.C64: torch.complex64,
    Type.C128: torch.complex128,
    Type.PRED: torch.bool,
}

PT_XLA_TYPE_MAP = {v: k for k, v in XLA_PT_TYPE_MAP.items()}

MLIR_TYPE_NAMES = {
    Type.F32: 'f32',
    Type.F64: 'f64',
    Type.BF16: 'bf16',
    Type.F16: 'f16',
    Type.U8: 'ui8',
    Type.S8: 'i8',
    Type.U16: 'ui16',
    Type.S16: 'i16',
    Type.U32: 'ui32',
    Type.S32: 'i32',
    Type.U64: 'ui64',
    Type.S64: 'i64',
    Type.C64: 'complex<f32>',
    Type.C128: 'complex<f64>',
    Type.PRED: 'i1',
}

FLOATING = frozenset((Type.F16, Type.BF16, Type.F32, Type.F64))
COMPLEX = frozenset((Type.C64, Type.C128))
SIGNED = frozenset((Type.S8, Type.S16, Type.S32, Type.S64))
UNSIGNED = frozenset((Type.U8, Type.U16, Type.U32, Type.U64))
INTEGRAL = SIGNED | UNSIGNED

BIT_WIDTHS = {
    Type.PRED: 8,
    Type.S8: 8,
    Type.U8: 8,
    Type.S16: 16,
    Type.U16: 16,
    Type.F16: 16,
    Type.BF16: 16,
    Type.S32: 32,
    Type.U32: 32,
    Type.F32: 32,
    Type.S64: 64,
    Type.U64: 64,
    Type.F64: 64,
    Type.C64: 64,
    Type.C128: 128,
}

# The real type of a complex type's parts.
COMPLEX_PART = {Type.C64: Type.F32, Type.C128: Type.F64}


def type_name(dtype):
  """The XLA name of `dtype`: an XLA name itself, or a torch.dtype."""
  if isinstance(dtype, torch.dtype):
    if dtype not in PT_XLA_TYPE_MAP:
      raise TypeError(f'xla_builder: no XLA element type for {dtype}')
    return PT_XLA_TYPE_MAP[dtype]
  name = str(dtype)
  if name not in MLIR_TYPE_NAMES:
    raise TypeError(f'xla_builder: unknown element type {dtype!r} '
                    f'(expected one of {sorted(MLIR_TYPE_NAMES)})')
  return name


class Shape(object):
  """An array shape (element type and sizes) or a tuple of shapes."""

  def __init__(self, shape):
    self._shape = shape

  @classmethod
  def create(cls, dtype, sizes, dynamic_dimensions=None):
    if dynamic_dimensions is not None and any(dynamic_dimensions):
      raise NotImplementedError(
          'xla_builder: dynamic dimensions are not supported (every size is static)')
    sizes = tuple(int(s) for s in sizes)
    if any(s < 0 for s in sizes):
      raise ValueError(f'xla_builder: negative size in {sizes}')
    return Shape({'type': type_name(dtype), 'sizes': sizes})

  @classmethod
  def tuple_of(cls, shapes):
    return Shape([s.shape for s in shapes])

  @property
  def shape(self):
    return self._shape

  def is_tuple(self):
    return isinstance(self._shape, (list, tuple))

  def tuple_size(self):
    assert self.is_tuple()
    return len(self._shape)

  def tuple_shape(self, index):
    assert self.is_tuple()
    return self._shape[index]

  def element(self, index):
    """The shape of tuple element `index`, as a Shape."""
    return Shape(self.tuple_shape(index))

  def is_dynamic(self):
    assert not self.is_tuple()
    return False

  def as_scalar(self):
    return Shape.create(self.dtype, ())

  @property
  def rank(self):
    assert not self.is_tuple()
    return len(self._shape['sizes'])

  @property
  def sizes(self):
    assert not self.is_tuple()
    return self._shape['sizes']

  @property
  def dynamic_dimensions(self):
    assert not self.is_tuple()
    return None

  @property
  def dtype(self):
    assert not self.is_tuple()
    return self._shape['type']

  def leaves(self):
    """The array shapes of a tuple shape, flattened in order (the shape itself for an
    array): the values a computation passes for it."""
    if not self.is_tuple():
      return [self]
    out = []
    for s in self._shape:
      out.extend(Shape(s).leaves())
    return out

  def mlir(self):
    """'tensor<2x3xf32>' of an array shape."""
    dims = ''.join(f'{s}x' for s in self.sizes)
    return f'tensor<{dims}{MLIR_TYPE_NAMES[self.dtype]}>'

  def __eq__(self, other):
    return isinstance(other, Shape) and _canonical(self._shape) == _canonical(
        other._shape)

  def __hash__(self):
    return hash(repr(self))

  def __repr__(self):
    if self.is_tuple():
      return '(' + ', '.join(repr(Shape(s)) for s in self._shape) + ')'
    return f"{self.dtype}[{','.join(str(s) for s in self.sizes)}]"


def _canonical(shape):
  if isinstance(shape, (list, tuple)):
    return tuple(_canonical(s) for s in shape)
  return (shape['type'], tuple(shape['sizes']))
