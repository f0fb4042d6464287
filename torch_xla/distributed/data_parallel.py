"""Thread-based replication of the older API (DataParallel).

Only one device (or the CPU, for an empty device list) is supported so far.
"""

import torch

from torch_xla.core import xla_model as xm
from torch_xla.distributed import parallel_loader as pl


class Context:
  """Per-device state living as long as the DataParallel object.

  loop_fn can store objects on it (attributes) to keep them across epochs.
  """

  def __init__(self, device):
    self.device = device

  def getattr_or(self, name, defval):
    """Attribute `name`, first set to defval (called if callable) when missing."""
    if not hasattr(self, name):
      setattr(self, name, defval() if callable(defval) else defval)
    return getattr(self, name)


class DataParallel:
  """Runs a network replicated over devices, one thread per device.

  network: a torch.nn.Module, or a callable returning one.
  device_ids: the devices; None means all XLA devices, an empty list the CPU.
  """

  def __init__(self, network, device_ids=None):
    if device_ids is None:
      device_ids = xm.get_xla_supported_devices()
    devices = [torch.device(d) for d in device_ids] or [torch.device('cpu')]
    if len(devices) > 1:
      raise NotImplementedError(
          f'DataParallel over {len(devices)} devices is not supported yet; '
          'use a single device')
    model = network if isinstance(network, torch.nn.Module) else network()
    self._devices = devices
    self._models = [model.to(devices[0])]
    self._contexts = [Context(devices[0])]

  @property
  def devices(self):
    return list(self._devices)

  @property
  def models(self):
    return list(self._models)

  def __call__(self, loop_fn, loader, fixed_batch_size=False, batchdim=0):
    """Runs one epoch: loop_fn(model, device_loader, device, context) per device.

    Returns the list of the loop_fn results, one per device.
    """
    device, model, context = self._devices[0], self._models[0], self._contexts[0]
    if device.type == 'cpu':
      # Nothing to upload or mark on the CPU: iterate the loader as is.
      return [loop_fn(model, loader, device, context)]
    parallel_loader = pl.ParallelLoader(loader, [device], batchdim=batchdim,
                                        fixed_batch_size=fixed_batch_size)
    try:
      result = loop_fn(model, parallel_loader.per_device_loader(device),
                       device, context)
    finally:
      parallel_loader.close()
    return [result]
