"""The counters and metrics that torch_xla 2.x reports and tests read, with the values
they should hold."""
import time

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

DEV = xm.xla_device()


def test_cleared_counter_reads_none_and_comes_back():
  t = torch.tensor(100, device=DEV)
  t += 2
  assert met.counter_value('xla::add') >= 1
  met.clear_counters()
  assert met.counter_value('xla::add') is None
  assert met.counter_names() == []
  t += 2
  assert met.counter_value('xla::add') == 1


def test_tensor_lifetime_counters():
  met.clear_all()
  t = torch.tensor(2077, device=DEV)
  assert met.counter_value('CreateXlaTensor') == 1
  del t
  assert met.counter_value('DestroyXlaTensor') == 1


def test_increment_counter_from_python():
  met.clear_all()
  torch_xla._XLAC._xla_increment_counter('SomeNewCounter', 2)
  torch_xla._XLAC._xla_increment_counter('SomeNewCounter', 3)
  assert met.counter_value('SomeNewCounter') == 5


def test_step_and_compile_counters():
  met.clear_all()
  # A scalar no other test uses: a graph parameter, uploaded once, then reused.
  t = torch.tensor(1456, device=DEV) * 90917
  torch_xla.sync()
  assert met.counter_value('MarkStep') == 1
  assert met.counter_value('CreateCompileHandles') in (None, 1)  # none on a disk hit
  misses = met.counter_value('DeviceDataCacheMiss')
  assert misses >= 1
  t2 = torch.tensor(1456, device=DEV) * 90917
  torch_xla.sync()
  assert met.counter_value('DeviceDataCacheMiss') == misses
  assert met.counter_value('MarkStep') == 2
  assert t2.item() == 1456 * 90917


def test_transfer_metrics_hold_bytes_and_times():
  met.clear_all()
  host = torch.arange(1000, dtype=torch.float32)
  t = host.to(DEV)
  count, total, _ = met.metric_data('OutboundData')
  assert (count, total) == (1, 4000)
  assert met.metric_data('TensorToData')[0] == 1
  t.cpu()
  assert met.metric_data('InboundData')[:2] == (1, 4000)
  assert 'OutboundData' in met.metrics_report()
  assert '3.91KB' in met.metrics_report()


def test_graph_size_alias_and_executor_metrics():
  met.clear_all()
  a = torch.ones(4, device=DEV)
  b = (a + 1) * 2 - a
  torch_xla.sync()
  graph_samples = met.metric_data('TensorsGraphSize')
  assert graph_samples[0] == 1 and graph_samples[1] >= 3
  # A new graph records how many inputs it donates, zero included.
  assert met.metric_data('InputOutputAliasCount')[0] == 1
  for name in ('UnwrapXlaData', 'WrapXlaData', 'DeviceLockWait'):
    assert met.metric_data(name)[0] >= 1, name
  assert torch.equal(b.cpu(), torch.full((4,), 3.0))


def test_in_place_update_is_an_alias():
  w = torch.ones(65, device=DEV)
  torch_xla.sync()
  met.clear_all()
  w.add_(1)
  torch_xla.sync()
  assert met.metric_data('InputOutputAliasCount')[:2] == (1, 1)
  # The same graph again: no new sample.
  w.add_(1)
  torch_xla.sync()
  assert met.metric_data('InputOutputAliasCount')[:2] == (1, 1)
  assert torch.equal(w.cpu(), torch.full((65,), 3.0))


def test_execute_time_covers_the_execution():
  a = torch.randn(1024, 1024, device=DEV)
  b = torch.randn(1024, 1024, device=DEV)
  torch_xla.sync(wait=True)
  met.clear_metrics()
  start = time.perf_counter_ns()
  c = a
  for _ in range(8):
    c = torch.tanh(c @ b)
  torch_xla.sync(wait=True)
  wall = time.perf_counter_ns() - start
  count, execute_ns, _ = met.metric_data('ExecuteTime')
  # The launch returns at once; the metric is taken when the execution completes.
  assert count == 1
  compile_ns = (met.metric_data('CompileTime') or (0, 0))[1]
  assert execute_ns > 0.5 * (wall - compile_ns), (execute_ns, wall, compile_ns)


def test_lazy_tracing_counts_ops_without_execution():
  t = torch.ones(8, device=DEV)
  torch_xla.sync()
  met.clear_all()
  u = t + 1
  u = u * 2
  count, total, _ = met.metric_data('LazyTracing')
  assert count == 2 and total > 0
  # item() runs the graph: the execution is not part of its tracing sample.
  start = time.perf_counter_ns()
  value = u.sum().item()
  elapsed = time.perf_counter_ns() - start
  assert value == 32
  count2, total2, _ = met.metric_data('LazyTracing')
  assert count2 == 4  # sum and _local_scalar_dense
  compile_ns = met.metric_data('CompileTime')[1] if met.metric_data('CompileTime') else 0
  assert total2 - total < elapsed - compile_ns


def test_fallback_ops_and_short_report():
  met.clear_all()
  assert met.executed_fallback_ops() == []
  x = torch.rand(10, 1, device=DEV)
  y = torch.cat((x, x + 1), dim=1)
  assert met.executed_fallback_ops() == []
  y[0, 0].item()
  assert met.executed_fallback_ops() == ['aten::_local_scalar_dense']
  torch.nonzero(y > 0.5)
  assert set(met.executed_fallback_ops()) == {'aten::_local_scalar_dense', 'aten::nonzero'}
  # Fallback counters are in every short report, whatever lists it is given.
  report = met.short_metrics_report(counter_names=['CreateCompileHandles'],
                                    metric_names=['InboundData'])
  assert 'aten::nonzero' in report and 'InboundData' in report
  assert 'CompileTime' not in report
  default = met.short_metrics_report()
  assert 'Metric: TransferToDeviceTime' in default and 'Mean:' in default
  met.clear_all()
  assert met.executed_fallback_ops() == []
