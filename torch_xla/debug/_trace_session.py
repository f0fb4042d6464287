"""The process's trace recording: one at a time, whoever asks for it (start_trace in
the process, or a profiler server on behalf of `trace` from another process)."""
import os
import threading
import time

from torch_xla._extension import xlac as _xlac
from torch_xla.debug import _trace_files

_ALREADY_RUNNING = 'Profile has already been started. Only one profile may be run at a time.'


def _thread_names(threads):
  """Names of the recording threads: Python's for Python threads, the kernel's (the
  runtime's and the plugin's threads) for the others."""
  names = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
  for tid in threads:
    if tid in names:
      continue
    try:
      with open(f'/proc/self/task/{tid}/comm') as f:
        names[tid] = f.read().strip()
    except OSError:
      pass
  return names


class Recording:
  """A trace being recorded: the runtime's spans (compilations, executions, transfers)
  and the annotations (profiler.Trace) of every thread, until stop()."""

  def __init__(self):
    if not _xlac()._xla_trace_start():
      raise RuntimeError(_ALREADY_RUNNING)
    self._stopped = False

  def stop(self) -> _trace_files.Trace:
    """Ends the recording; returns its spans, on the wall clock."""
    if self._stopped:
      raise RuntimeError('this trace was stopped already')
    self._stopped = True
    # Both clocks read together: the spans' steady clock to the wall clock.
    offset = time.time_ns() - _xlac()._xla_trace_now_ns()
    events, dropped = _xlac()._xla_trace_stop()
    spans = [
        _trace_files.Span(name, start + offset, end + offset, thread, track, args)
        for name, start, end, thread, track, args in events
    ]
    return _trace_files.Trace(spans, _thread_names({s.thread for s in spans if not s.track}), dropped)


def host_name():
  """The name of this host's files in a run folder."""
  return os.uname().nodename or 'localhost'
