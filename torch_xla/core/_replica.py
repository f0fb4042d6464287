"""Replication state: which replica the calling thread is, of which replication.

Replicas on one host are threads of this process, one per device (xmp.spawn,
DataParallel, or user threads that call xm.set_replication). A `Replication`
holds what they share: their devices, the host rendezvous of xm.rendezvous and
xm.mesh_reduce, and the runtime's replication, where their graphs with
collectives meet (torch_xla._XLAC._xla_replication_*).

Unset in a plain single-device run, where callers fall back to their defaults.
"""

import contextlib
import dataclasses
import threading
import time
from typing import Any, Optional

from torch_xla.core import _processes
from torch_xla.core._replication_error import ReplicationError
from torch_xla._extension import xlac as _xlac

_thread_state = threading.local()
_process_info = None
_active_lock = threading.Lock()
_active = None  # the running Replication
# How long a collective waits for the threads of an xm.set_replication replication
# that have not called it yet, before it fails.
_THREAD_JOIN_GRACE = 2.0


@dataclasses.dataclass(frozen=True)
class ReplicaInfo:
  ordinal: int  # global replica ordinal, 0 .. world_size - 1
  world_size: int
  local_ordinal: int  # ordinal among the replicas on this host
  local_world_size: int
  device: Optional[int] = None  # the replica's XLA device ordinal
  replication: Any = dataclasses.field(default=None, compare=False, repr=False)


class _Round:
  """One meeting of the replicas at a host rendezvous tag."""

  def __init__(self, participants):
    self.participants = participants  # replica ordinals, sorted
    self.payloads = {}
    self.complete = False


class Replication:
  """The replicas of one run over `devices` (replica r on devices[r]).

  Creating one starts the runtime's replication for those devices (one at a
  time per process); close() ends it.
  """

  def __init__(self, devices):
    self.devices = [int(d) for d in devices]
    self.timeout = _xlac()._xla_replica_timeout()
    # Across processes (torchrun) every process runs as many replicas; the processes
    # meet here to check that and to connect their replicas' rails.
    self.processes = _processes.get()
    if self.processes is not None:
      self.processes.start_replicas(len(self.devices))
    _xlac()._xla_replication_begin(self.devices)
    self._cond = threading.Condition()
    self._rounds = {}  # tag -> the _Round replicas are arriving at
    self._left = {}  # replica -> why it will not arrive any more
    self._broken = None  # why every meeting fails, once the replicas are out of step
    self._threads = 0  # threads that joined through xm.set_replication

  @property
  def size(self):
    return len(self.devices)

  def info(self, replica):
    first = 0 if self.processes is None else self.processes.index * self.size
    processes = 1 if self.processes is None else self.processes.count
    return ReplicaInfo(ordinal=first + replica, world_size=processes * self.size,
                       local_ordinal=replica, local_world_size=self.size,
                       device=self.devices[replica], replication=self)

  def replica_of_device(self, device):
    """The replica running on XLA device ordinal `device`, or None."""
    return self.devices.index(device) if device in self.devices else None

  def rendezvous(self, replica, tag, payload, replicas=()):
    """Waits for the replicas in `replicas` (default: all; global ordinals) at `tag`.

    Returns their payloads in ordinal order. Raises ReplicationError when one
    of them cannot come (it left, failed, or did not arrive within the
    replication's timeout).
    """
    if self.processes is not None:
      info = self.info(replica)
      return self.processes.rendezvous(info.ordinal, info.world_size, tag, payload, replicas,
                                       broken=lambda: self._broken)
    participants = sorted(set(int(r) for r in replicas)) or list(range(self.size))
    for r in participants:
      if not 0 <= r < self.size:
        raise ValueError(f'rendezvous {tag!r}: replica {r} does not exist; '
                         f'there are {self.size} replicas')
    if replica not in participants:
      raise ValueError(f'rendezvous {tag!r}: replica {replica} is not one of '
                       f'the participants {participants}')
    deadline = time.monotonic() + self.timeout
    with self._cond:
      self._check_broken()
      current = self._rounds.get(tag)
      if current is None:
        current = self._rounds[tag] = _Round(participants)
      if current.participants != participants:
        self._break(f'rendezvous {tag!r}: replica {replica} expects replicas '
                    f'{participants}, others expect {current.participants}')
      if replica in current.payloads:
        self._break(f'rendezvous {tag!r}: replica {replica} arrived twice '
                    'before the others arrived once')
      current.payloads[replica] = payload
      if len(current.payloads) == len(participants):
        current.complete = True
        del self._rounds[tag]
        self._cond.notify_all()
      self._check_left(tag, current)
      while not current.complete:
        self._check_broken()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
          missing = [r for r in participants if r not in current.payloads]
          self._break(f'rendezvous {tag!r}: replicas {missing} did not arrive '
                      f'within {self.timeout:g} s (XLA_REPLICA_TIMEOUT); '
                      f'replicas {sorted(current.payloads)} waited')
        self._cond.wait(min(remaining, 1.0))
      return [current.payloads[r] for r in participants]

  def leave(self, replica, why):
    """Replica `replica` will not arrive any more: meetings waiting for it fail."""
    with self._cond:
      self._left[replica] = why
      for tag, current in list(self._rounds.items()):
        if replica in current.participants and replica not in current.payloads:
          self._check_left(tag, current, throw=False)
    _xlac()._xla_replication_leave(replica, why)

  def abort(self, why):
    """Every replica waiting, now or later, fails with `why`."""
    with self._cond:
      self._break(why, throw=False)
    _xlac()._xla_replication_abort(why)

  def join_thread(self):
    """A thread of the caller's own joined as a replica (xm.set_replication)."""
    with self._cond:
      self._threads += 1
      self._cond.notify_all()

  def check_threads_joined(self, what):
    """For replicas that are threads of the caller's own (xm.set_replication): fails
    with ReplicationError, instead of waiting out the replication's timeout, when a
    collective starts while some device has no thread after a short grace (the others
    may still be on their way to xm.set_replication). A library that replicates over
    every listed device from one thread gets told so at once."""
    with self._cond:
      if self._threads == 0 or self._threads >= self.size:
        return  # replicas run by xmp.spawn / DataParallel, or every thread is in
      deadline = time.monotonic() + _THREAD_JOIN_GRACE
      while self._threads < self.size and self._broken is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
          self._break(f'{what}: the replication over XLA devices {self.devices} '
                      f'(xm.set_replication) has threads for {self._threads} of its '
                      f'{self.size} devices, so the collective would wait for '
                      'replicas that nobody runs. Run one thread per device, each '
                      'calling xm.set_replication(its device, devices), or use '
                      'xmp.spawn / torch_xla.launch; for a single replica pass '
                      'only its own device')
        self._cond.wait(min(remaining, 0.05))
      self._check_broken()

  def leave_thread(self):
    """Such a thread is done; the replication ends with the last of them."""
    with self._cond:
      self._threads -= 1
      last = self._threads == 0
    if last:
      self.close('every thread has left the replicas (xm.set_replication)')

  def close(self, why='the replication has ended'):
    global _active
    with self._cond:
      self._break(why, throw=False)
    with _active_lock:
      if _active is self:
        _active = None
    _xlac()._xla_replication_end(why)

  def _check_left(self, tag, current, throw=True):
    gone = [f'replica {r} {self._left[r]}' for r in current.participants
            if r in self._left and r not in current.payloads]
    if gone:
      self._break(f'rendezvous {tag!r}: replicas {sorted(current.payloads)} '
                  f'wait for replicas that will not come: {"; ".join(gone)}',
                  throw=throw)

  def _check_broken(self):
    if self._broken is not None:
      raise ReplicationError(self._broken)

  def _break(self, why, throw=True):
    if self._broken is None:
      self._broken = why
    self._cond.notify_all()
    if throw:
      raise ReplicationError(self._broken)


def start(devices):
  """Starts and returns the process's Replication over `devices`."""
  global _active
  with _active_lock:
    if _active is not None:
      raise RuntimeError(f'replicas over XLA devices {_active.devices} are '
                         'running already; xmp.spawn, torch_xla.launch and '
                         'DataParallel do not nest')
    _active = Replication(devices)
    return _active


def active():
  """The running Replication, or None."""
  return _active


def get() -> Optional[ReplicaInfo]:
  """The replica info of the calling thread, or None when not replicated.

  Threads PyTorch starts itself (autograd's per-device backward threads) run
  as the replica whose device is their current XLA device. A process of
  several (torchrun) that runs no replicas of its own is one replica, the one
  of its rank.
  """
  info = getattr(_thread_state, 'info', None)
  if info is not None:
    return info
  if _process_info is not None:
    return _process_info
  replication = _active
  if replication is not None and isinstance(threading.current_thread(),
                                            threading._DummyThread):
    return for_device(_xlac()._xla_current_device())
  return _process_replica()


def _process_replica():
  """The replica a process of several is when it runs no replicas of its own."""
  if not _processes.launched():
    return None
  return ReplicaInfo(ordinal=_processes.index(), world_size=_processes.count(),
                     local_ordinal=0, local_world_size=1)


def for_device(device):
  """The info of the replica running on XLA device ordinal `device`, or None."""
  replication = _active
  if replication is None:
    return _process_replica()
  replica = replication.replica_of_device(int(device))
  return None if replica is None else replication.info(replica)


def rendezvous(info, tag, payload, replicas=()):
  """The host rendezvous of the replica `info` (world_size > 1) at `tag`."""
  if info.replication is not None:
    return info.replication.rendezvous(info.local_ordinal, tag, payload, replicas)
  return _processes.get().rendezvous(info.ordinal, info.world_size, tag, payload, replicas)


def set_process(info: Optional[ReplicaInfo]) -> None:
  global _process_info
  _process_info = info


def set_thread(info: Optional[ReplicaInfo]) -> None:
  _thread_state.info = info


@contextlib.contextmanager
def replica(info: ReplicaInfo, thread_only: bool = False):
  """Runs the block as replica `info`, restoring the previous state after."""
  if thread_only:
    previous = getattr(_thread_state, 'info', None)
    set_thread(info)
    try:
      yield info
    finally:
      set_thread(previous)
  else:
    previous = _process_info
    set_process(info)
    try:
      yield info
    finally:
      set_process(previous)


# Replication devices recorded by xm.set_replication(), per thread since the
# thread-based DataParallel drives one device per thread.
def set_replication_devices(device: str, devices: list) -> None:
  _thread_state.replication = (device, list(devices))


def get_replication_devices():
  """(device, devices) recorded for this thread, or None."""
  return getattr(_thread_state, 'replication', None)
