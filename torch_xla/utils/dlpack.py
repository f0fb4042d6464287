"""DLPack exchange of XLA tensors with other frameworks (torch CPU tensors, NumPy...).

On the CPU device an XLA tensor's buffer is host memory. `to_dlpack` shares it: a
consumer's tensor (torch.from_dlpack, numpy.from_dlpack) reads and writes the buffer
itself, so writes through either side are seen by the other while the XLA tensor keeps
that buffer (an in-place op on the XLA tensor gives it a new buffer; the consumer then
keeps the old one). `from_dlpack` builds an XLA tensor over the producer's memory when
the plugin can (a contiguous tensor of a dtype the device holds as is, whose memory is
aligned as the plugin requires: 64 bytes on the CPU plugin), else copies it.
Other devices' buffers are not host memory: there `to_dlpack` raises
NotImplementedError and `from_dlpack` copies. See docs/data.md.
"""

from typing import Any

import torch
from torch.utils.dlpack import DLDeviceType

from torch_xla._extension import xlac


def to_dlpack(xla_tensor: Any):
  """A DLPack capsule over the XLA tensor's buffer (computing the tensor first when it
  is pending)."""
  return xlac()._to_dlpack(xla_tensor)


def from_dlpack(ext_tensor: Any):
  """An XLA tensor (on the current XLA device) holding the data of a DLPack capsule or
  of an object with __dlpack__ (a CPU torch tensor, a NumPy array...)."""
  if hasattr(ext_tensor, '__dlpack_device__') and hasattr(
      ext_tensor, '__dlpack__'):
    device_type, _ = ext_tensor.__dlpack_device__()
    if device_type != DLDeviceType.kDLCPU:
      raise ValueError(
          'from_dlpack: only tensors in host memory (kDLCPU) can be taken, got '
          f'device type {device_type}')
    dlpack = ext_tensor.__dlpack__()
  elif type(ext_tensor).__name__ == 'PyCapsule':
    dlpack = ext_tensor
  else:
    raise TypeError('from_dlpack: expected a DLPack capsule or an object with '
                    f'__dlpack__, got a {type(ext_tensor).__name__}')
  return xlac()._from_dlpack(dlpack)


def shares_memory(xla_tensor: Any, cpu_tensor: torch.Tensor) -> bool:
  """Whether the XLA tensor's buffer is the memory of `cpu_tensor` (a view from
  to_dlpack, or the tensor from_dlpack took)."""
  if cpu_tensor.device.type != 'cpu' or cpu_tensor.numel() == 0:
    return False
  return xlac()._unsafe_buffer_pointer(xla_tensor) == cpu_tensor.data_ptr()
