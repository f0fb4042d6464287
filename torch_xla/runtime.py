"""The runtime's view of the devices and replicas (torch_xla.runtime).

Every replica is a thread of a process (xmp.spawn, torch_xla.launch), one per
device; several processes (torchrun) number their replicas process by process.
Outside replication a process is one replica: the only one, or the one of its
rank.
"""

import os

from torch_xla.core import _processes
from torch_xla.core import _replica
from torch_xla.core import xla_model as xm
from torch_xla._extension import xlac as _xlac

__all__ = [
    'addressable_device_count', 'device_type', 'global_device_count',
    'global_ordinal', 'global_runtime_device_count', 'local_device_count',
    'initialize_cache', 'local_ordinal', 'local_process_count', 'process_count',
    'process_index', 'world_size', 'xla_device'
]


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
  """Number of XLA devices of this process."""
  return _xlac()._xla_device_count()


def global_device_count():
  """Number of XLA devices of every process of the run."""
  processes = _processes.get()
  if processes is None:
    return _xlac()._xla_device_count()
  return sum(processes.device_counts())


def global_runtime_device_count():
  """The same as global_device_count()."""
  return global_device_count()


def process_index():
  """Index of this process among the processes of the run (torchrun's RANK)."""
  return _processes.index()


def process_count():
  """Number of processes of the run (torchrun's WORLD_SIZE)."""
  return _processes.count()


def local_process_count():
  """Number of processes of the run on this host (torchrun's LOCAL_WORLD_SIZE)."""
  return int(os.environ.get('LOCAL_WORLD_SIZE', '1')) if _processes.launched() else 1


def initialize_cache(path, readonly=False):
  """Keeps the compiled graphs in the folder `path`, where later processes load them
  instead of compiling again (readonly: only load). The cache is on by default, in
  $XLA_PERSISTENT_CACHE_PATH, else $XDG_CACHE_HOME/torch_xla or ~/.cache/torch_xla;
  initialize_cache(None) turns it off."""
  _xlac()._xla_set_persistent_cache('' if path is None else os.fspath(path), bool(readonly))
