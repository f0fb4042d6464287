"""One Python thread per replica device: the engine of xmp.spawn and DataParallel.

Each thread runs as its replica (xm.xla_device(), xm.get_ordinal(), the
default 'xla' device). A replica that raises releases the others at once:
whatever they wait for (a graph with collectives, xm.rendezvous) fails with a
message naming it, so join() ends in bounded time and raises ReplicaError for
the replica that failed first.
"""

import threading
import time
import traceback

from torch_xla.core import _replica
from torch_xla._extension import xlac as _xlac


class ReplicaError(RuntimeError):
  """A replica raised. `replica`, `device`, `error` (the exception raised) and
  `traceback` (its text) describe the first replica that failed."""

  def __init__(self, message, replica, device, error, traceback_text):
    super().__init__(message)
    self.replica = replica
    self.device = device
    self.error = error
    self.traceback = traceback_text


class ReplicaThreads:
  """Runs target(replica) on one thread per device of `devices`.

  start() starts the threads, join() waits for them and returns the targets'
  results by replica, or raises ReplicaError.
  """

  def __init__(self, devices, target, daemon=True, name='xla_replica'):
    self._devices = [int(d) for d in devices]
    self._target = target
    self._daemon = daemon
    self._name = name
    self._lock = threading.Lock()
    self._results = [None] * len(self._devices)
    self._failures = []  # (replica, exception, traceback text), first failure first
    self._threads = []
    self._replication = None

  @property
  def devices(self):
    return list(self._devices)

  def start(self):
    self._replication = _replica.start(self._devices)
    self._threads = [
        threading.Thread(target=self._run, args=(r,), daemon=self._daemon,
                         name=f'{self._name}_{r}')
        for r in range(len(self._devices))
    ]
    for thread in self._threads:
      thread.start()
    return self

  def join(self, timeout=None):
    """Waits for every replica; returns their results by replica.

    Raises ReplicaError if one raised. With `timeout` (seconds), replicas
    still running then are released from their waits and TimeoutError names
    them (a replica busy in Python code of its own cannot be stopped).
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
      for thread in self._threads:
        # Short joins keep the waiting thread responsive to KeyboardInterrupt.
        while thread.is_alive():
          if deadline is not None and time.monotonic() >= deadline:
            running = [r for r, t in enumerate(self._threads) if t.is_alive()]
            self._replication.abort(f'replicas {running} did not finish '
                                    f'within {timeout:g} s')
            raise TimeoutError(f'replicas {running} did not finish within '
                               f'{timeout:g} s')
          thread.join(0.1)
    except BaseException:
      self._replication.abort('the replicas were interrupted')
      raise
    finally:
      # Replicas still running (after a timeout or an interrupt) fail at their
      # next wait; a new replication may start.
      self._replication.close()
    if self._failures:
      raise self._error()
    return list(self._results)

  def run(self):
    """start() and join()."""
    return self.start().join()

  def _run(self, replica):
    device = self._devices[replica]
    _xlac()._xla_set_current_device(device)
    _replica.set_thread(self._replication.info(replica))
    try:
      self._results[replica] = self._target(replica)
    except BaseException as e:  # reported by join(), with every replica released
      with self._lock:
        first = not self._failures
        self._failures.append((replica, e, traceback.format_exc()))
      if first:
        why = f'replica {replica} (xla:{device}) failed: {type(e).__name__}: {e}'
        if self._replication.processes is not None:
          self._replication.processes.report_failure(why)
        self._replication.abort(why)
      else:
        self._replication.leave(replica, 'failed')
    else:
      self._replication.leave(replica, 'has returned from its function')
    finally:
      _replica.set_thread(None)

  def _error(self):
    replica, error, text = self._failures[0]
    device = self._devices[replica]
    message = (f'replica {replica} (xla:{device}) raised '
               f'{type(error).__name__}: {error}')
    processes = self._replication.processes
    named = getattr(error, 'lost_ranks', None)  # the error names them already
    lost = processes.lost_ranks() if processes is not None and not named else {}
    if lost:
      message = f'{processes.describe_lost(lost)}. Here, {message}'

    others = sorted(r for r, _, _ in self._failures[1:])
    if others:
      message += (f'\n(replicas {others} stopped with errors after it; '
                  'the first failure is the cause)')
    message += f'\n\n-- replica {replica} traceback:\n{text}'
    err = ReplicaError(message, replica, device, error, text)
    err.__cause__ = error
    return err
