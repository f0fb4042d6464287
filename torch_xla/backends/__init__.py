"""Settings of the XLA backend, as torch.backends.<device> has them for PyTorch's devices.

set_mat_mul_precision(precision): the precision of float32 matrix products and
convolutions on the device: 'highest' (full float32, the default, as PyTorch's float32
matmul on CUDA), 'high' or 'default' (the device's fastest float32 arithmetic: TF32 tensor
cores on NVIDIA GPUs). The CPU device computes float32 in full under every setting. Graphs
traced before a change are compiled again for the new precision.
"""
from typing import Literal

from torch_xla import _XLAC

__all__ = ['set_mat_mul_precision', 'get_mat_mul_precision']

_Precision = Literal['default', 'high', 'highest']


def set_mat_mul_precision(precision: _Precision) -> None:
  """Sets the precision of float32 matrix products and convolutions (see the module)."""
  if not isinstance(precision, str):
    raise TypeError(f'set_mat_mul_precision: precision must be a str, got {type(precision).__name__}')
  _XLAC._xla_set_mat_mul_precision(precision)


def get_mat_mul_precision() -> _Precision:
  """The current precision of float32 matrix products: 'default', 'high' or 'highest'."""
  return _XLAC._xla_get_mat_mul_precision()
