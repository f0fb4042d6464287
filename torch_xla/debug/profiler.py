"""torch_xla.debug.profiler: traces of what a process does on its XLA devices.

A trace holds the user's annotations (Trace, StepTrace, trace_me) and the runtime's own
spans: each graph's sync, lowering and compilation, its launch and its execution on the
device ("xla:N" timelines), and the transfers between host and device. It is written as
`<logdir>/plugins/profile/<run>/<host>.xplane.pb` (TensorBoard's profile plugin, xprof)
and `<host>.trace.json.gz` (Chrome trace JSON: Perfetto, chrome://tracing).

Take one from inside the process with start_trace/stop_trace, or start a server in the
process (start_server) and ask it from any process on the host, or another host, with
trace('localhost:PORT', logdir, duration_ms). See docs/debugging.md.
"""
import functools
import os
import threading
from typing import Union

import torch_xla
from torch_xla._extension import xlac as _xlac
from torch_xla.debug import _profiler_service, _sync_cause, _trace_files, _trace_session
from torch_xla.debug._profiler_service import ProfilerServer  # noqa: F401

_TRACER_MARKED_STEP = False


def set_tracer_marked_step(value: bool):
  """Records that the script marks its steps with StepTrace."""
  global _TRACER_MARKED_STEP
  _TRACER_MARKED_STEP = value


def get_tracer_marked_step() -> bool:
  return _TRACER_MARKED_STEP


def start_server(port: int, only_on_master: bool = True):
  """Starts this process's profiler server on `port` (every interface), which `trace`
  asks for profiles.

  Returns the ProfilerServer, which serves until it is garbage collected (keep a
  reference) or shut down; None in the replicas other than the host's first when
  only_on_master. Raises RuntimeError when the port is invalid or taken.
  """
  from torch_xla.core import xla_model as xm
  if only_on_master and not xm.is_master_ordinal():
    return None
  return ProfilerServer(port)


def trace(service_addr: str,
          logdir: str,
          duration_ms: int = 1000,
          num_tracing_attempts: int = 3,
          host_tracer_level: int = 2,
          device_tracer_level: int = 1,
          delay_ms: int = 0,
          timeout_s: int = 120,
          interval_s: int = 5):
  """Profiles the processes whose servers listen at `service_addr` for duration_ms.

  Blocks until each server has written its profile into `logdir` (which the servers
  must be able to write: the same host, or a shared file system), all in one run folder
  `<logdir>/plugins/profile/<run>/`.

  Args:
    service_addr: comma-separated 'host:port' of the servers (start_server), e.g.
      'localhost:9012'.
    logdir: the folder to write the profiles into (a TensorBoard log folder).
    duration_ms: how long to record.
    num_tracing_attempts: connection attempts per server, interval_s apart, within
      timeout_s.
    host_tracer_level, device_tracer_level: accepted as torch_xla accepts them; every
      span is recorded at any level.
    delay_ms: the servers start recording this long after the request arrives.
    timeout_s: the time to keep retrying connections.
    interval_s: the wait between attempts.

  Raises RuntimeError naming each server that did not profile, and why.
  """
  del host_tracer_level, device_tracer_level
  _profiler_service.request_trace(service_addr, str(logdir), duration_ms, delay_ms, num_tracing_attempts, timeout_s,
                                  interval_s)


def trace_detached(*args, **kwargs):
  """`trace` on a background thread (same arguments); returns the thread."""
  thread = threading.Thread(target=trace, args=args, kwargs=kwargs, name='ProfilerTrace', daemon=True)
  thread.start()
  return thread


_XLAC = None


def _core():
  """The compiled extension, looked up once: an annotation outside a trace costs two
  calls into it."""
  global _XLAC
  if _XLAC is None:
    _XLAC = _xlac()
  return _XLAC


# The annotations (Trace) open on each thread, innermost last, as "name.N" (N counts the
# annotations opened since the thread's last sync). A sync inside one is an error, as in
# torch_xla: the annotation is a scope of the traced ops, which a sync would end midway.
_scopes = threading.local()


def _check_no_open_scope():
  """Raises if the calling thread is inside a Trace; otherwise restarts the scope count
  (torch_xla.sync calls it)."""
  names = getattr(_scopes, 'names', None)
  if names:
    raise RuntimeError(f'Expecting scope to be empty but it is {names[-1]}: torch_xla.sync() inside the '
                       f'profiler annotation xp.Trace({names[-1].rsplit(".", 1)[0]!r}); end the annotation '
                       'before the sync, or annotate the whole step with xp.StepTrace, which syncs at its end')
  _scopes.next_id = 0


class Trace:
  """Annotates a region of the calling thread in the traces being recorded: a span
  named `name`, with the keyword arguments as its arguments. Free when no trace runs.

      with xp.Trace('forward'):
        loss = model(x)

  The region may not contain a sync (torch_xla.sync() raises there).
  """

  _is_scope = True

  def __init__(self, name: str, **kwargs):
    self.name = name
    self._args = kwargs or None
    self._starts = []

  def __enter__(self):
    if self._is_scope:
      names = getattr(_scopes, 'names', None)
      if names is None:
        names = _scopes.names = []
      _scopes.next_id = getattr(_scopes, 'next_id', 0) + 1
      names.append(f'{self.name}.{_scopes.next_id}')
    core = _core()
    self._starts.append(core._xla_trace_now_ns() if core._xla_trace_recording() else None)
    return self

  def __exit__(self, type, value, traceback):
    if self._is_scope:
      _scopes.names.pop()
    start = self._starts.pop()
    if start is not None:
      core = _core()
      core._xla_trace_record(self.name, start, core._xla_trace_now_ns(), self._args)
    return False


class StepTrace(Trace):
  """A Trace of one training step (`step_num=...` names it), which ends by running the
  step's graph (torch_xla.sync()), so that its compilation and execution fall inside.

      for step, (x, y) in enumerate(loader):
        with xp.StepTrace('train_step', step_num=step):
          ...
  """

  # Not a scope of ops: it ends with the step's sync.
  _is_scope = False

  def __init__(self, name: str, **kwargs):
    super().__init__(name, _r=1, **kwargs)

  def __enter__(self):
    set_tracer_marked_step(True)
    return super().__enter__()

  def __exit__(self, type, value, traceback):
    if type is None:
      with _sync_cause.sync_cause('torch_xla.sync when exiting a profiler StepTrace region'):
        torch_xla.sync()
    return super().__exit__(type, value, traceback)


def trace_me(scope: str):
  """A decorator: each call of the function is a Trace named `scope`."""

  def decorator_trace_me(func):

    @functools.wraps(func)
    def wrapper_trace_me(*args, **kwargs):
      with Trace(scope):
        return func(*args, **kwargs)

    return wrapper_trace_me

  return decorator_trace_me


class _ProgrammaticTrace:
  """The trace of start_trace, until stop_trace."""

  def __init__(self):
    self.lock = threading.Lock()
    self.recording = None
    self.log_dir = None


_programmatic = _ProgrammaticTrace()


def start_trace(log_dir: Union[os.PathLike, str]) -> None:
  """Starts recording a trace of this process, which stop_trace writes into log_dir
  (as `<log_dir>/plugins/profile/<run>/<host>.xplane.pb` and `.trace.json.gz`).

  One trace at a time: RuntimeError when one is being recorded (by start_trace, or by
  the profiler server).
  """
  with _programmatic.lock:
    if _programmatic.recording is not None:
      raise RuntimeError(_trace_session._ALREADY_RUNNING)
    _programmatic.recording = _trace_session.Recording()
    _programmatic.log_dir = str(log_dir)


def stop_trace() -> None:
  """Stops the trace of start_trace and writes it; RuntimeError when none was started."""
  with _programmatic.lock:
    if _programmatic.recording is None:
      raise RuntimeError('No profile started')
    recording, log_dir = _programmatic.recording, _programmatic.log_dir
    _programmatic.recording = _programmatic.log_dir = None
    _trace_files.write_profile(recording.stop(), log_dir, _fresh_run(log_dir), _trace_session.host_name())


def _fresh_run(log_dir):
  """A run folder name not used yet in log_dir (two traces within a second)."""
  run = _trace_files.run_name()
  candidate, n = run, 1
  while os.path.exists(os.path.join(log_dir, 'plugins', 'profile', candidate)):
    n += 1
    candidate = f'{run}_{n}'
  return candidate
