"""Thread-based replication of the older API (DataParallel).

One thread per device runs the training loop on the device's copy of the
network; the replicas start from identical weights, and xm.optimizer_step in
the loop averages their gradients inside the step graph.
"""

import copy

import torch

from torch_xla.core import xla_model as xm
from torch_xla.distributed import parallel_loader as pl
from torch_xla.distributed._replica_threads import ReplicaThreads


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

  network: a torch.nn.Module, or a callable returning one (called once: every
  device gets a copy of that module, so all start from the same weights).
  device_ids: the XLA devices; None means all of them, an empty list the CPU.
  """

  def __init__(self, network, device_ids=None):
    if device_ids is None:
      device_ids = xm.get_xla_supported_devices()
    devices = [torch.device(d) for d in device_ids] or [torch.device('cpu')]
    if len(devices) > 1 or devices[0].type != 'cpu':
      bad = [str(d) for d in devices if d.type != 'xla']
      if bad:
        raise ValueError(f'DataParallel runs on XLA devices (or on the CPU with '
                         f'an empty device list), got {bad} in {device_ids}')
      devices = [torch.device('xla', 0 if d.index is None else d.index)
                 for d in devices]
      if len(set(devices)) != len(devices):
        raise ValueError(f'DataParallel: device_ids {device_ids} repeat a device')
    model = network if isinstance(network, torch.nn.Module) else network()
    copies = [copy.deepcopy(model) for _ in devices[1:]]
    self._devices = devices
    self._models = [m.to(d) for m, d in zip([model] + copies, devices)]
    self._contexts = [Context(d) for d in devices]

  @property
  def devices(self):
    return list(self._devices)

  @property
  def models(self):
    return list(self._models)

  def __call__(self, loop_fn, loader, fixed_batch_size=False, batchdim=0):
    """Runs one epoch: loop_fn(model, device_loader, device, context) per device.

    The loader's batches are dealt round robin to the devices (whole rounds
    only, so every replica runs the same number of steps). Returns the
    loop_fn results, one per device in device order. If a replica raises, the
    others are released and ReplicaError names it.
    """
    if self._devices[0].type == 'cpu':
      # Nothing to upload or mark on the CPU: iterate the loader as is.
      return [loop_fn(self._models[0], loader, self._devices[0],
                      self._contexts[0])]
    parallel_loader = pl.ParallelLoader(loader, self._devices,
                                        batchdim=batchdim,
                                        fixed_batch_size=fixed_batch_size)

    def replica_loop(index):
      device = self._devices[index]
      return loop_fn(self._models[index],
                     parallel_loader.per_device_loader(device), device,
                     self._contexts[index])

    try:
      if len(self._devices) == 1:
        return [replica_loop(0)]
      return ReplicaThreads([d.index for d in self._devices], replica_loop,
                            name='xla_data_parallel').run()
    finally:
      parallel_loader.close()
