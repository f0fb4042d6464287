"""Process-based replication (xmp). Only a single replica is supported so far."""

import threading

from torch_xla.core import _replica


def spawn(fn, args=(), nprocs=None, join=True, daemon=False,
          start_method='spawn'):
  """Runs fn(index, *args) on every replica.

  With nprocs None or 1, fn(0, *args) runs directly in this process as the
  only replica; returns None.
  """
  if nprocs not in (None, 1):
    raise NotImplementedError('multi-device spawn is not supported yet')
  info = _replica.ReplicaInfo(ordinal=0, world_size=1, local_ordinal=0,
                              local_world_size=1)
  with _replica.replica(info):
    fn(0, *args)


class MpModelWrapper:
  """Holds a model created once at global scope, moved to a device on demand.

  Moves are serialized, so replicas do not all copy weights at once.
  """

  def __init__(self, model):
    self._model = model
    self._lock = threading.Lock()

  def to(self, device):
    """The model moved onto `device`."""
    with self._lock:
      return self._model.to(device)


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
