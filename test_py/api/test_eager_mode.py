"""Eager mode (torch_xla.experimental.eager_mode): each op on the device is compiled and
run when it is called; results agree with eager CPU; an op repeated with the same shapes
compiles once; in-place ops, views and autograd work; multi-output ops run as one graph;
the metrics count eager ops apart from graphs; torch.compile and torch_xla.compile still
trace their graphs."""

import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from torch_xla.experimental import eager_mode, eager_mode_context, is_eager_mode

DEV = torch.device('xla')


@pytest.fixture(autouse=True)
def eager():
  """Every test runs in eager mode, and leaves it off."""
  xm.mark_step()
  eager_mode(True)
  yield
  eager_mode(False)


def eager_executions():
  return (met.metric_data('EagerOpExecuteTime') or (0,))[0]


def eager_compiles():
  return (met.metric_data('EagerOpCompileTime') or (0,))[0]


def holds_data(t):
  return 'Data Shape:' in torch_xla._XLAC._get_xla_tensor_debug_info(t)


def test_mode_switches_and_context_restores():
  assert is_eager_mode()
  with eager_mode_context(False) as before:
    assert before is True
    assert not is_eager_mode()
  assert is_eager_mode()
  eager_mode(False)
  assert not is_eager_mode()


def test_each_op_runs_at_once_and_agrees_with_cpu():
  a_cpu = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 7
  a = a_cpu.to(DEV)
  met.clear_all()
  b = torch.sin(a) * 3 + a
  assert holds_data(b)
  # sin, mul, add: three ops, three executions, no graph of lazy mode.
  assert eager_executions() == 3
  assert 'ExecuteTime' not in met.metric_names()
  torch.testing.assert_close(b.cpu(), torch.sin(a_cpu) * 3 + a_cpu, rtol=1e-6, atol=1e-6)
  # Nothing is pending: a sync runs nothing.
  torch_xla.sync()
  assert 'ExecuteTime' not in met.metric_names()


def test_repeated_op_compiles_once():
  x = torch.linspace(-2, 2, 30).reshape(5, 6).to(DEV)
  xm.wait_device_ops()
  met.clear_all()
  first = torch.logsumexp(x, 1)
  compiles = eager_compiles()
  assert compiles >= 1
  second = torch.logsumexp(x, 1)
  assert eager_compiles() == compiles
  assert eager_executions() == 2
  torch.testing.assert_close(first.cpu(), second.cpu())
  torch.testing.assert_close(first.cpu(), torch.logsumexp(x.cpu(), 1))


def test_in_place_ops_and_views():
  base_cpu = torch.arange(6, dtype=torch.float32).reshape(2, 3)
  base = base_cpu.to(DEV)
  base.mul_(2)
  row = base[1]
  row.add_(10)
  base_cpu.mul_(2)
  base_cpu[1].add_(10)
  torch.testing.assert_close(base.cpu(), base_cpu)
  torch.testing.assert_close(row.cpu(), base_cpu[1])
  assert holds_data(base)


def test_multi_output_op_is_one_execution():
  x = torch.randn(4, 7).to(DEV)
  xm.wait_device_ops()
  met.clear_all()
  values, indices = torch.sort(x, dim=1)
  assert eager_executions() == 1
  expected_values, expected_indices = torch.sort(x.cpu(), dim=1)
  torch.testing.assert_close(values.cpu(), expected_values)
  assert torch.equal(indices.cpu(), expected_indices)


def test_batch_norm_updates_running_stats_as_data():
  torch.manual_seed(0)
  cpu = torch.nn.BatchNorm2d(3)
  dev = torch.nn.BatchNorm2d(3).to(DEV)
  x = torch.randn(4, 3, 5, 5)
  out = dev(x.to(DEV))
  expected = cpu(x)
  assert holds_data(dev.running_mean)
  torch.testing.assert_close(out.cpu(), expected, rtol=1e-4, atol=1e-5)
  torch.testing.assert_close(dev.running_mean.cpu(), cpu.running_mean, rtol=1e-5, atol=1e-6)
  torch.testing.assert_close(dev.running_var.cpu(), cpu.running_var, rtol=1e-5, atol=1e-6)


def test_training_step_agrees_with_cpu():
  torch.manual_seed(0)
  cpu = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
  dev = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).to(DEV)
  dev.load_state_dict(cpu.state_dict())
  x, y = torch.randn(6, 5), torch.randn(6, 2)
  for model, device in ((cpu, 'cpu'), (dev, DEV)):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
      optimizer.zero_grad()
      loss = torch.nn.functional.mse_loss(model(x.to(device)), y.to(device))
      loss.backward()
      optimizer.step()
  for p_cpu, p_dev in zip(cpu.parameters(), dev.parameters()):
    assert holds_data(p_dev)
    torch.testing.assert_close(p_dev.cpu(), p_cpu, rtol=1e-5, atol=1e-6)


def test_random_ops_compile_once_and_advance_the_seed():
  xm.set_rng_state(1234)
  first = torch.randn(6, 7, device=DEV)
  compiles = eager_compiles()
  second = torch.randn(6, 7, device=DEV)
  assert eager_compiles() == compiles
  assert not torch.equal(first.cpu(), second.cpu())
  seed = xm.get_rng_state()
  assert seed != 1234
  xm.set_rng_state(1234)
  torch.testing.assert_close(torch.randn(6, 7, device=DEV).cpu(), first.cpu())
  xm.set_rng_state(seed)
  third = torch.randn(6, 7, device=DEV)
  xm.set_rng_state(seed)
  torch.testing.assert_close(torch.randn(6, 7, device=DEV).cpu(), third.cpu())


def test_optimization_barrier_is_one_execution():
  t = torch.ones(3, 3, device=DEV)
  xm.wait_device_ops()
  met.clear_all()
  xm.optimization_barrier_([t])
  assert eager_executions() == 1
  torch.testing.assert_close(t.cpu(), torch.ones(3, 3))


def test_torch_compile_runs_its_graph_as_one():
  x = torch.randn(5, 5).to(DEV)

  def fn(t):
    return torch.cos(torch.sin(t)) * 2

  compiled = torch.compile(fn, backend='openxla')
  compiled(x)  # compiles
  xm.wait_device_ops()
  met.clear_all()
  out = compiled(x)
  assert met.metric_data('ExecuteTime')[0] == 1
  assert eager_executions() == 0
  torch.testing.assert_close(out.cpu(), fn(x.cpu()), rtol=1e-5, atol=1e-6)
  assert is_eager_mode()
