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
    'addressable_device_count', 'addressable_runtime_device_count', 'device_type',
    'get_master_ip', 'get_num_cached_compilation_graph', 'global_device_count',
    'global_ordinal', 'global_runtime_device_attributes', 'global_runtime_device_count',
    'host_index', 'initialize_cache', 'is_bf16_supported', 'is_spmd', 'local_device_count',
    'local_ordinal', 'local_process_count', 'process_count', 'process_index',
    'runtime_device_attributes', 'set_device_type', 'use_spmd', 'world_size', 'xla_device'
]


def set_device_type(pjrt_device):
  """Sets the device kind ('CPU', 'CUDA', 'TPU'), as PJRT_DEVICE does; only before the
  runtime has started, unless it names the kind already in use."""
  if _xlac()._xla_runtime_is_initialized() and os.environ.get('PJRT_DEVICE') != pjrt_device:
    raise RuntimeError(
        f"set_device_type('{pjrt_device}'): the runtime has already started on "
        f"{os.environ.get('PJRT_DEVICE')}; the device kind can only be set before the "
        "first use of an XLA device")
  os.environ['PJRT_DEVICE'] = pjrt_device


def device_type():
  """The kind of XLA device in use: 'CPU', 'CUDA' or 'TPU' (PJRT_DEVICE, which
  importing torch_xla sets to CPU when unset, unless PJRT_SELECT_DEFAULT_DEVICE=0);
  None when no kind is set."""
  kind = os.environ.get('PJRT_DEVICE')
  return kind.split('_')[0].upper() if kind else None


def is_bf16_supported():
  """Whether the device holds bfloat16 tensors."""
  try:
    import torch
    torch.tensor([1.0], dtype=torch.bfloat16, device='xla')
    return True
  except Exception:
    return False


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


def addressable_runtime_device_count():
  """Number of the runtime's devices this process can use."""
  return _xlac()._xla_device_count()


def runtime_device_attributes(device):
  """The runtime's description of `device` ('xla:0' or 'CPU:0'): its name, kind and
  ordinal."""
  text = str(device)
  name = text if not text.startswith('xla') else _xlac()._xla_real_devices([text])[0]
  kind, ordinal = name.split(':')
  return {'name': name, 'kind': kind, 'id': int(ordinal)}


def global_runtime_device_attributes():
  """runtime_device_attributes of every device of this process, in order."""
  return [runtime_device_attributes(f'xla:{i}') for i in range(addressable_device_count())]


def host_index():
  """Index of this host among the hosts of the run (torchrun's GROUP_RANK; 0 alone)."""
  return int(os.environ.get('GROUP_RANK', '0')) if _processes.launched() else 0


def get_master_ip():
  """The address of the run's first host (torchrun's MASTER_ADDR; 127.0.0.1 alone)."""
  return os.environ.get('MASTER_ADDR', '127.0.0.1')


def get_num_cached_compilation_graph():
  """Number of compiled graphs held in this process's in-memory cache."""
  return _xlac()._xla_cached_computation_count()


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


def use_spmd(auto=False):
  """Turns SPMD mode on for this process: from then on the XLA device (xla:0) stands
  for every device of the run, and torch_xla.distributed.spmd.mark_sharding splits
  tensors over them. Call it at the start of the program. It cannot be turned off, and
  it cannot be used inside a replication (xmp.spawn): RuntimeError. Sets XLA_USE_SPMD=1,
  as torch_xla does, so that processes started from this one run in SPMD mode too.

  auto=True (torch_xla's auto-sharding, where XLA picks the shardings) is not
  supported: NotImplementedError."""
  if auto:
    raise NotImplementedError('torch_xla.runtime.use_spmd(auto=True): auto-sharding is not supported; '
                              'call use_spmd() and shard tensors with '
                              'torch_xla.distributed.spmd.mark_sharding')
  _xlac()._xla_use_spmd()
  os.environ['XLA_USE_SPMD'] = '1'


def is_spmd():
  """Whether SPMD mode is on for this process (use_spmd(), or XLA_USE_SPMD=1 when
  torch_xla was imported)."""
  return bool(_xlac()._xla_is_spmd())
