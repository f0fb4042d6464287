"""Access to the runtime's counters and metrics (compile/execute/transfer stats)."""
from torch_xla._extension import xlac as _xlac

# Metrics and counters the short report shows by default.
_SHORT_METRICS = ('CompileTime', 'ExecuteTime', 'ExecuteReplicatedTime',
                  'TransferToDeviceTime', 'TransferFromDeviceTime')
_SHORT_COUNTERS = ('CachedCompile', 'MarkStep', 'DynamoSyncInputExecuteTime')


def counter_names():
  """Names of the counters that have been incremented."""
  return list(_xlac()._xla_counter_names())


def counter_value(name):
  """Value of counter `name`; None if it was never bumped or was cleared since."""
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


def short_metrics_report(counter_names=None, metric_names=None):
  """A short report of key metrics and counters, as text.

  Each named metric that has samples (count, total and mean) and each named counter
  that is non-zero, followed by every aten:: counter (ops that ran on the CPU
  fallback), which are always shown. Defaults: the compile, execute and transfer
  times, and the CachedCompile, MarkStep and DynamoSyncInputExecuteTime counters.
  """
  if not counter_names:
    counter_names = list(_SHORT_COUNTERS)
  if not metric_names:
    metric_names = list(_SHORT_METRICS)
  return _xlac()._short_xla_metrics_report(list(counter_names), list(metric_names))


def executed_fallback_ops():
  """The ops that ran on the CPU fallback ("aten::nonzero", ...) since the counters
  were last cleared."""
  return list(_xlac()._get_executed_fallback_ops())
