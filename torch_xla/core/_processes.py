"""The processes of a run launched by torchrun, and what they share.

torchrun starts the processes and tells each its RANK among WORLD_SIZE processes and
where the rendezvous store is (MASTER_ADDR, MASTER_PORT). Each process keeps its own
devices and replica threads (xmp.spawn); across processes replicas are numbered process
by process: replica r of process p has the global ordinal p * L + r, where L, the
replicas per process, is the same in every process.

What crosses processes goes through torch.distributed, not through networking of our own:
- the launcher's store (torch.distributed.rendezvous('env://')), under the prefix
  'torch_xla/': the host rendezvous of xm.rendezvous and xm.mesh_reduce, each process's
  device count, heartbeats and failure reports;
- gloo process groups over that store, one per local replica index ("rails": replica r
  of every process), registered with c10d's group registry: the cross-process part of the
  collectives inside graphs runs on them (cpp/distributed/cross_process.h).

A process that dies, raises or stops answering is named in the errors of the others:
every process counts a heartbeat in the store every second and records its own failure
there; lost_ranks() reads them.
"""

import atexit
import datetime
import os
import pickle
import threading
import time

from torch_xla.core._replication_error import ReplicationError
from torch_xla.utils._daemon_threads import join_before_exit
from torch_xla._extension import xlac as _xlac

_lock = threading.Lock()
_processes = None

HEARTBEAT_SECONDS = 1.0
# How long exit waits for the heartbeat's store call in flight to return.
HEARTBEAT_STOP_SECONDS = 10.0


def launched():
  """Whether this process is one of several that torchrun (or the like) started."""
  return int(os.environ.get('WORLD_SIZE', '1')) > 1 and 'RANK' in os.environ


def index():
  """This process's index among the processes (RANK), 0 when alone."""
  return int(os.environ.get('RANK', '0')) if launched() else 0


def count():
  """The number of processes (WORLD_SIZE), 1 when alone."""
  return int(os.environ.get('WORLD_SIZE', '1')) if launched() else 1


class Processes:
  """This process's membership in the run: the store, the rails, the heartbeat."""

  def __init__(self):
    import torch.distributed as dist
    self.index = index()
    self.count = count()
    self.timeout = _xlac()._xla_replica_timeout()
    store, _, _ = next(dist.rendezvous('env://', timeout=datetime.timedelta(seconds=self.timeout)))
    self.store = dist.PrefixStore('torch_xla', store)
    self._rails = []
    self._rails_lock = threading.Lock()
    self._starts = 0  # replica starts (xmp.spawn) so far
    self._calls = {}  # (replica ordinal, tag) -> how many rendezvous it joined
    self._calls_lock = threading.Lock()
    self.store.set(f'devices/{self.index}', str(_xlac()._xla_device_count()))
    _xlac()._xla_set_process_layout(self.index, self.count)
    self._stopping = threading.Event()
    self._heartbeat = threading.Thread(target=self._beat, name='xla_process_heartbeat', daemon=True)
    self._heartbeat.start()
    atexit.register(self._stop_heartbeat)
    _report_uncaught_exceptions(self)

  # ------------------------------------------------------------------ devices

  def device_counts(self):
    """Every process's number of XLA devices, by process."""
    keys = [f'devices/{p}' for p in range(self.count)]
    self._wait(keys, 'the device counts of the processes')
    return [int(self.store.get(k)) for k in keys]

  # -------------------------------------------------------------------- rails

  def start_replicas(self, local):
    """Every process starts `local` replicas (xmp.spawn): checks that they all run the
    same number, and connects their rails."""
    with self._rails_lock:
      generation = self._starts
      self._starts += 1
    counts = self.exchange(f'replicas/{generation}', local)
    if len(set(counts)) != 1:
      raise RuntimeError(f'every process must run the same number of replicas; by process: {counts}')
    self.ensure_rails(local)

  def ensure_rails(self, local):
    """Creates the rails of `local` replicas per process, if missing (creating a rail
    is a step every process takes)."""
    with self._rails_lock:
      for replica in range(len(self._rails), local):
        self._rails.append(self._gloo_group(f'torch_xla_rail_{replica}'))

  def _gloo_group(self, name):
    """A gloo group of every process, registered with c10d under `name`."""
    import torch
    import torch.distributed as dist
    from torch._C._distributed_c10d import _register_process_group, _unregister_process_group
    prefix = dist.PrefixStore(f'groups/{name}', self.store)
    backend = dist.ProcessGroupGloo(prefix, self.index, self.count,
                                    timeout=datetime.timedelta(seconds=self.timeout))
    group = dist.ProcessGroup(prefix, self.index, self.count)
    group._set_default_backend(dist.ProcessGroup.BackendType.GLOO)
    group._register_backend(torch.device('cpu'), dist.ProcessGroup.BackendType.GLOO, backend)
    group._set_group_name(name)
    try:
      _unregister_process_group(name)
    except Exception:  # not registered yet
      pass
    _register_process_group(name, group)
    return group

  # ---------------------------------------------------------------- meetings

  def exchange(self, tag, value):
    """Every process's `value` (picklable) at `tag`, by process; each tag once."""
    self.store.set(f'exchange/{tag}/{self.index}', pickle.dumps(value))
    keys = [f'exchange/{tag}/{p}' for p in range(self.count)]
    self._wait(keys, f'the exchange {tag!r}')
    return [pickle.loads(self.store.get(k)) for k in keys]

  def rendezvous(self, ordinal, world, tag, payload, replicas=(), broken=lambda: None):
    """The host rendezvous of replica `ordinal` (of `world` global replicas) at `tag`.

    Returns the payloads of the participants (`replicas`, default all) in ordinal order.
    Every participant counts its own meetings at a tag, so the k-th meeting of each
    uses the same keys. broken() returns why the caller's own replicas are out of step
    (the wait ends with that), or None.
    """
    participants = sorted(set(int(r) for r in replicas)) or list(range(world))
    for r in participants:
      if not 0 <= r < world:
        raise ValueError(f'rendezvous {tag!r}: replica {r} does not exist; there are '
                         f'{world} replicas')
    if ordinal not in participants:
      raise ValueError(f'rendezvous {tag!r}: replica {ordinal} is not one of the '
                       f'participants {participants}')
    with self._calls_lock:
      k = self._calls.get((ordinal, tag), 0)
      self._calls[(ordinal, tag)] = k + 1
    base = f'rendezvous/{tag}/{k}'
    self.store.set(f'{base}/{ordinal}', pickle.dumps(payload))
    keys = [f'{base}/{r}' for r in participants]
    self._wait(keys, f'rendezvous {tag!r}', participants, broken)
    payloads = [pickle.loads(self.store.get(k)) for k in keys]
    # The last reader of the meeting removes its keys.
    if self.store.add(f'{base}/read', 1) == len(participants):
      for key in keys + [f'{base}/read']:
        self.store.delete_key(key)
    return payloads

  def _wait(self, keys, what, participants=None, broken=lambda: None):
    """Waits for `keys`, at most the replica timeout; names who is missing otherwise."""
    deadline = time.monotonic() + self.timeout
    pause = 0.001
    while True:
      missing = [i for i, k in enumerate(keys) if not self.store.check([k])]
      if not missing:
        return
      why = broken()
      if why is not None:
        raise ReplicationError(why)
      lost = self.lost_ranks(wait=0)
      if lost or time.monotonic() >= deadline:
        who = [participants[i] if participants else i for i in missing]
        kind = 'replicas' if participants else 'processes'
        cause = (f'; {self.describe_lost(lost)}' if lost else
                 f' within {self.timeout:g} s (XLA_REPLICA_TIMEOUT)')
        raise ReplicationError(f'{what}: {kind} {who} did not arrive{cause}')
      time.sleep(pause)
      pause = min(2 * pause, 0.1)  # quick for the usual short waits, light for long ones

  # --------------------------------------------------------------- liveness

  def _beat(self):
    while not self._stopping.is_set():
      try:
        self.store.add(f'heartbeat/{self.index}', 1)
      except Exception:  # the store is gone: nothing left to tell
        return
      self._stopping.wait(HEARTBEAT_SECONDS)

  def _stop_heartbeat(self):
    """Stops the heartbeat at exit (torch_xla/utils/_daemon_threads.py says why)."""
    self._stopping.set()
    join_before_exit([self._heartbeat], HEARTBEAT_STOP_SECONDS)

  def report_failure(self, message):
    """Tells the other processes that this one failed, and why."""
    try:
      self.store.set(f'failed/{self.index}', message)
    except Exception:  # the store is gone: the others see it too
      pass

  def lost_ranks(self, wait=3 * HEARTBEAT_SECONDS):
    """{rank: why} of the other processes known to be lost: those that reported a
    failure, or else (when `wait` > 0) those whose heartbeat did not move for `wait` s."""
    lost = {}
    try:
      others = [p for p in range(self.count) if p != self.index]
      for p in others:
        if self.store.check([f'failed/{p}']):
          lost[p] = 'it failed (' + self.store.get(f'failed/{p}').decode(errors='replace') + ')'
      # A process that reported its failure is enough of an answer; otherwise the ones
      # whose heartbeat stopped are.
      if wait > 0 and not lost:
        before = {p: self.store.add(f'heartbeat/{p}', 0) for p in others}
        time.sleep(wait)
        for p in others:
          if p not in lost and self.store.add(f'heartbeat/{p}', 0) == before[p]:
            lost[p] = f'it stopped answering (no heartbeat for {wait:g} s; killed or hung)'
    except Exception as e:  # the store itself is gone (its host process died)
      lost[-1] = f'the rendezvous store is unreachable ({type(e).__name__}: {e})'
    return lost

  @staticmethod
  def describe_lost(lost):
    parts = []
    for p, why in sorted(lost.items()):
      parts.append(why if p < 0 else f'rank {p} is lost: {why}')
    return '; '.join(parts)


def explain(error):
  """`error` as raised in a run of several processes: when other processes are lost,
  a ReplicationError that names them first (the original as its cause); else `error`."""
  processes = _processes
  if processes is None:
    return error
  lost = processes.lost_ranks()
  if not lost:
    return error
  explained = ReplicationError(f'{processes.describe_lost(lost)}. {error}')
  explained.lost_ranks = lost
  explained.__cause__ = error
  return explained


def _report_uncaught_exceptions(processes):
  """An exception that ends this process is reported to the others first, and the
  processes known to be lost are named before its traceback."""
  import sys
  previous = sys.excepthook

  def hook(kind, value, traceback):
    processes.report_failure(f'{kind.__name__}: {value}')
    lost = processes.lost_ranks()
    if lost:
      sys.stderr.write(f'torch_xla: {processes.describe_lost(lost)}\n')
    previous(kind, value, traceback)

  sys.excepthook = hook


def get():
  """This process's Processes (created on first use), or None when it runs alone."""
  global _processes
  if not launched():
    return None
  with _lock:
    if _processes is None:
      _processes = Processes()
    return _processes
