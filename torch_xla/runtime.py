"""The runtime's view of the devices and replicas (torch_xla.runtime).

On one host every replica is a thread of this process (xmp.spawn,
torch_xla.launch): the world is the replicas of the running replication, and
a replica's ordinals follow its device. Outside replication the world is one
replica.
"""

from torch_xla.core import _replica
from torch_xla.core import xla_model as xm

__all__ = [
    'addressable_device_count', 'device_type', 'global_device_count',
    'global_ordinal', 'global_runtime_device_count', 'local_device_count',
    'local_ordinal', 'local_process_count', 'process_count', 'process_index',
    'world_size', 'xla_device'
]


def _xlac():
  from torch_xla import _XLAC
  return _XLAC


def device_type():
  """The kind of XLA device in use: 'CPU', 'CUDA' or 'TPU' (PJRT_DEVICE)."""
  return _xlac()._xla_device_kind()


def xla_device(n=None, devkind=None):
  """The same as xm.xla_device(): the calling replica's device when n is None."""
  return xm.xla_device(n, devkind=devkind)


def world_size():
  """Number of replicas taking part in the replication (1 outside it)."""
  info = _replica.get()
  return 1 if info is None else info.world_size


def global_ordinal():
  """The calling replica's ordinal among all replicas (0 outside replication)."""
  info = _replica.get()
  return 0 if info is None else info.ordinal


def local_ordinal():
  """The calling replica's ordinal among this host's replicas."""
  info = _replica.get()
  return 0 if info is None else info.local_ordinal


def addressable_device_count():
  """Number of XLA devices this process can use."""
  return _xlac()._xla_device_count()


def local_device_count():
  """Number of XLA devices on this host (all of them belong to this process)."""
  return _xlac()._xla_device_count()


def global_device_count():
  """Number of XLA devices of every process of the run (this one's, on one host)."""
  return _xlac()._xla_device_count()


def global_runtime_device_count():
  """The same as global_device_count()."""
  return global_device_count()


def process_index():
  """Index of this process among the processes of the run (0 on one host)."""
  return 0


def process_count():
  """Number of processes of the run (1 on one host)."""
  return 1


def local_process_count():
  """Number of processes of the run on this host (1)."""
  return 1
