"""Replication over the XLA devices of this process (xmp).

Replicas are threads of this process, one per device, as in torch_xla on the
CPU and on TPU v2/v3: they share one runtime, so a graph with collectives is
compiled once for all of them and launched as one replicated computation.
"""

import copy
import threading

import torch

from torch_xla.core import _processes
from torch_xla.core import _replica
from torch_xla.distributed._replica_threads import ReplicaError, ReplicaThreads
from torch_xla._extension import xlac as _xlac

__all__ = ['spawn', 'MpModelWrapper', 'MpSerialExecutor', 'ReplicaError']


def spawn(fn, args=(), nprocs=None, join=True, daemon=False,
          start_method='spawn'):
  """Runs fn(index, *args) once per replica, replica `index` on xla:index.

  nprocs: None for every XLA device of this process, N for the first N. With
  one replica fn(0, *args) runs directly on the calling thread. Under torchrun
  every process runs its replicas this way (the same number in each), and the
  replicas of all processes form one world, numbered process by process. Otherwise
  each replica runs on a thread of its own, where xm.xla_device() is its
  device; join=True waits for all of them and returns None. If a replica
  raises, the others are released from whatever they wait for and spawn
  raises ReplicaError naming the replica, with its traceback (the original
  exception is its __cause__). join=False returns the running replicas: call
  .join() on it. start_method is accepted for compatibility; replicas are
  threads whatever it says.
  """
  count = _xlac()._xla_device_count()
  n = count if nprocs is None else int(nprocs)
  if not 1 <= n <= count:
    raise ValueError(f'spawn: nprocs={nprocs}, but this process has {count} '
                     'XLA device(s) (CPU_NUM_DEVICES sets the number of CPU '
                     'devices)')
  if n == 1:
    # One replica per process: across processes (torchrun) it is the one of its rank.
    processes = _processes.get()
    if processes is not None:
      processes.start_replicas(1)
    info = _replica.ReplicaInfo(ordinal=_processes.index(), world_size=_processes.count(),
                                local_ordinal=0, local_world_size=1, device=0)
    with _replica.replica(info):
      fn(0, *args)
    return None
  replicas = ReplicaThreads(range(n), lambda index: fn(index, *args),
                            daemon=daemon or join, name='xmp_replica')
  replicas.start()
  if not join:
    return replicas
  replicas.join()
  return None


class MpModelWrapper:
  """Holds a model created once at global scope, moved to a device on demand.

  The model's weights stay in one host copy; to(device) gives each device
  its own module with the same weights (the same module again on later calls
  for that device), without copying the host weights first.
  """

  def __init__(self, model):
    self._model = model
    self._lock = threading.Lock()
    self._moved = {}

  def to(self, device):
    """The model's copy on `device`."""
    device = torch.device(device)
    if device.type == 'xla' and device.index is None:
      device = torch.device('xla', _xlac()._xla_current_device())
    with self._lock:
      if device not in self._moved:
        self._moved[device] = self._copy_to(device)
      return self._moved[device]

  def _copy_to(self, device):
    # deepcopy with each parameter and buffer replaced by its copy on `device`
    # (the memo), so only the module structure is copied on the host.
    memo = {}
    for tensor in list(self._model.parameters()) + list(self._model.buffers()):
      moved = tensor.detach().to(device)
      if isinstance(tensor, torch.nn.Parameter):
        moved = torch.nn.Parameter(moved, requires_grad=tensor.requires_grad)
      memo[id(tensor)] = moved
    return copy.deepcopy(self._model, memo)


class MpSerialExecutor:
  """Runs functions one at a time among the replicas (e.g. dataset downloads).

  With in-process replicas a lock is all the serialization needed.
  """

  def __init__(self):
    self._lock = threading.Lock()

  def run(self, fn):
    """fn() run while holding the lock; returns its value."""
    with self._lock:
      return fn()
