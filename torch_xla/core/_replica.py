"""Replication state: which replica this process (or thread) is, out of how many.

Unset in a plain single-process run, where callers fall back to their defaults.
A multiprocessing layer sets it for the whole process; a thread-based one for
each of its threads (a thread's own setting wins over the process one).
"""

import contextlib
import dataclasses
import threading
from typing import Optional


@dataclasses.dataclass(frozen=True)
class ReplicaInfo:
  ordinal: int  # global replica ordinal, 0 .. world_size - 1
  world_size: int
  local_ordinal: int  # ordinal among the replicas on this host
  local_world_size: int


_process_info: Optional[ReplicaInfo] = None
_thread_state = threading.local()


def get() -> Optional[ReplicaInfo]:
  """The replica info of the calling thread, or None when not replicated."""
  info = getattr(_thread_state, 'info', None)
  return info if info is not None else _process_info


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
