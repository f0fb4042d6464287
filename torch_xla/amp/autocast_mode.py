"""torch_xla.amp.autocast: torch.autocast('xla') with the XLA device's default dtype."""
import warnings

import torch

import torch_xla.core.xla_model as xm

# The dtypes each kind of device computes in under autocast. TPUs and the CPU device
# have no fast float16 arithmetic; GPUs have both.
_SUPPORTED_DTYPES = {
    'GPU': (torch.bfloat16, torch.float16),
}
_DEFAULT_SUPPORTED = (torch.bfloat16,)


class autocast(torch.amp.autocast_mode.autocast):
  """`torch.autocast('xla', ...)` for the hardware of `device`.

  Inside the region, matrix products, linear layers and convolutions run in `dtype`
  (bfloat16 by default), softmax, norms, losses and reductions in float32, and
  mixed-input ops promote, by PyTorch's op lists (see docs/precision.md). A dtype the
  device does not compute in (float16 outside GPUs) disables the region with a warning,
  as torch_xla does on TPU. Usable as a context manager or decorator, like
  torch.autocast.
  """

  def __init__(self,
               device,
               enabled: bool = True,
               dtype: torch.dtype = None,
               cache_enabled: bool = True):
    if 'xla' not in str(device):
      raise ValueError(f"torch_xla.amp.autocast: expected an XLA device, got {device!r}; "
                       f"use torch.autocast({str(device)!r}) for other devices")
    self._xla_device = xm.xla_device_hw(device)
    if dtype is None:
      dtype = torch.bfloat16
    supported = _SUPPORTED_DTYPES.get(self._xla_device, _DEFAULT_SUPPORTED)
    if dtype not in supported:
      warnings.warn(f"torch_xla.amp.autocast: XLA:{self._xla_device} autocast supports "
                    f"{', '.join(str(d) for d in supported)}, not {dtype}; autocast is disabled")
      enabled = False
    self._dtype = dtype
    super().__init__('xla', enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
