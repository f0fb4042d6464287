"""Why torch_xla's own syncs run graphs, for PT_XLA_DEBUG's analysis.

The runtime names a user's sync ("user torch_xla.sync") and a value read before one; the
syncs torch_xla makes on the user's behalf (torch_xla.compile, the parallel loader, a
profiler StepTrace, torch.compile) name themselves around the sync:

    with sync_cause('torch_xla.sync in parallel loader at step end'):
      torch_xla.sync()

Costs one cached check when PT_XLA_DEBUG is off.
"""

import contextlib
import threading

from torch_xla._extension import xlac as _xlac

_level = None
_local = threading.local()


def debug_level():
  """PT_XLA_DEBUG_LEVEL as the runtime reads it (100 for PT_XLA_DEBUG=1; 0 when off)."""
  global _level
  if _level is None:
    _level = _xlac()._xla_debug_level()
  return _level


@contextlib.contextmanager
def sync_cause(compilation, execution=None, graph_name=''):
  """The calling thread's syncs inside name this cause (`execution` for executions, by
  default the same) and graph name; an enclosing cause is restored after."""
  if debug_level() <= 0:
    yield
    return
  stack = getattr(_local, 'stack', None)
  if stack is None:
    stack = _local.stack = []
  cause = (compilation, compilation if execution is None else execution, graph_name or '')
  stack.append(cause)
  _xlac()._xla_set_sync_cause(*cause)
  try:
    yield
  finally:
    stack.pop()
    _xlac()._xla_set_sync_cause(*(stack[-1] if stack else ('', '', '')))
