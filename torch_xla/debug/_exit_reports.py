"""Reports written when the process exits, as environment variables ask:

- XLA_METRICS_FILE=<path>: the metrics report (torch_xla.debug.metrics), written to it;
- PT_XLA_DEBUG_LEVEL >= 1 (or PT_XLA_DEBUG=1): a short report on stderr: how many graphs
  compiled and how long that took, the compile cache's hits, and the ops that ran on the
  CPU fallback with the user's lines that called them.
"""

import atexit
import os
import sys

from torch_xla.debug import _sync_cause


def debug_report():
  """The short report of PT_XLA_DEBUG_LEVEL, as text."""
  from torch_xla import _XLAC
  from torch_xla.debug import metrics as met
  compiles = met.counter_value('UncachedCompile') or 0
  hits = met.counter_value('CachedCompile') or 0
  compile_time = met.metric_data('CompileTime')
  seconds = compile_time[1] / 1e9 if compile_time else 0.0
  lines = [f'pt-xla-debug: report: {compiles} compilation(s) ({seconds:.2f} s compiling), '
           f'{hits} compile cache hit(s)']
  callers = _XLAC._xla_fallback_callers()
  if not callers:
    lines.append('pt-xla-debug:   no op ran on the CPU fallback')
  for op, caller, count in callers:
    lines.append(f'pt-xla-debug:   {op} ran on the CPU fallback {count} time(s), called from '
                 f'{caller or "an unknown line"}')
  return '\n'.join(lines) + '\n'


def _write_metrics(path):
  from torch_xla.debug import metrics as met
  with open(path, 'w') as f:
    f.write(met.metrics_report())


def install():
  path = os.environ.get('XLA_METRICS_FILE')
  if path:
    atexit.register(_write_metrics, path)
  if _sync_cause.debug_level() >= 1:
    atexit.register(lambda: sys.stderr.write(debug_report()))
