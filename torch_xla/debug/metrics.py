"""Access to the runtime's counters and metrics (compile/execute/transfer stats)."""
from torch_xla._extension import xlac as _xlac

# Metrics and counters the short report shows by default.
_SHORT_METRICS = ('CompileTime', 'ExecuteTime', 'TransferToDeviceTime',
                  'TransferFromDeviceTime')
_SHORT_COUNTERS = ('CachedCompile', 'UncachedCompile')


def counter_names():
  """Names of the counters that have been incremented."""
  return list(_xlac()._xla_counter_names())


def counter_value(name):
  """Value of counter `name`, None if it does not exist."""
  return _xlac()._xla_counter_value(name)


def metric_names():
  """Names of the metrics that have samples."""
  return list(_xlac()._xla_metric_names())


def metric_data(name):
  """(total sample count, accumulated value, recent samples) of `name`, or None."""
  return _xlac()._xla_metric_data(name)


def clear_counters():
  _xlac()._xla_clear_counters()


def clear_metrics():
  _xlac()._xla_clear_metrics()


def clear_all():
  """Clears both counters and metrics."""
  clear_counters()
  clear_metrics()


def metrics_report():
  """The runtime's full report of every metric and counter, as text."""
  return _xlac()._xla_metrics_report()


def _format_ns(ns):
  for unit, scale in (('s', 1e9), ('ms', 1e6), ('us', 1e3)):
    if ns >= scale:
      return f'{ns / scale:.3f}{unit}'
  return f'{ns:.0f}ns'


def short_metrics_report(counter_names=None, metric_names=None):
  """A short report of the key metrics and counters, as text.

  Defaults: the compile/execute/transfer time metrics, the CachedCompile and
  UncachedCompile counters and every aten:: counter (ops that fell back to
  CPU). Missing entries are left out.
  """
  if counter_names is None:
    counter_names = list(_SHORT_COUNTERS) + sorted(
        n for n in _xlac()._xla_counter_names() if n.startswith('aten::'))
  if metric_names is None:
    metric_names = _SHORT_METRICS
  lines = []
  for name in metric_names:
    data = metric_data(name)
    if data is None:
      continue
    count, total, _ = data
    mean = total / count if count else 0.0
    # Metrics named *Time hold nanoseconds.
    fmt = _format_ns if name.endswith('Time') else (lambda v: f'{v:g}')
    lines += [f'Metric: {name}', f'  TotalSamples: {count}',
              f'  Accumulator: {fmt(total)}', f'  Mean: {fmt(mean)}']
  for name in counter_names:
    value = counter_value(name)
    if value is None:
      continue
    lines += [f'Counter: {name}', f'  Value: {value}']
  return '\n'.join(lines) + ('\n' if lines else '')
