"""torch_xla.compile and torch_xla.step: a function or block traced as one graph (run
once, at its end), as a decorator, a call and a context manager; eager mode is off
inside and back after; full_graph=True raises on a host read inside; max_different_graphs
bounds the graphs a function traces; manual_seed; the optimization barrier."""

import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from torch_xla.experimental import eager_mode, is_eager_mode

DEV = torch.device('xla')


def executions():
  return (met.metric_data('ExecuteTime') or (0,))[0]


def cos_sin(t):
  return torch.cos(torch.sin(t)) * 2 + t


@torch_xla.compile
def decorated(t):
  return cos_sin(t)


@pytest.fixture
def x_cpu():
  return torch.linspace(-3, 3, 20).reshape(4, 5)


@pytest.mark.parametrize('form', ['decorator', 'call', 'context'])
def test_function_is_one_graph(form, x_cpu):
  x = x_cpu.to(DEV)
  pending = x * 1  # work from before the function
  xm.mark_step()
  met.clear_all()
  if form == 'decorator':
    out = decorated(x)
  elif form == 'call':
    out = torch_xla.compile(cos_sin)(x)
  else:
    with torch_xla.compile():
      out = cos_sin(x)
  # The graph ran at the end: out holds data, and one execution did it.
  assert executions() == 1
  assert 'Data Shape:' in torch_xla._XLAC._get_xla_tensor_debug_info(out)
  torch.testing.assert_close(out.cpu(), cos_sin(x_cpu), rtol=1e-5, atol=1e-6)
  torch.testing.assert_close(pending.cpu(), x_cpu)


def test_pending_work_runs_before_the_function(x_cpu):
  x = x_cpu.to(DEV)
  xm.mark_step()
  before = x + 1
  met.clear_all()
  out = decorated(before)
  # The work from before is its own graph, then the function's.
  assert executions() == 2
  torch.testing.assert_close(out.cpu(), cos_sin(x_cpu + 1), rtol=1e-5, atol=1e-6)


def test_method_decorator_and_module(x_cpu):

  class Box:

    @torch_xla.compile
    def run(self, t):
      return cos_sin(t)

  torch.testing.assert_close(Box().run(x_cpu.to(DEV)).cpu(), cos_sin(x_cpu), rtol=1e-5, atol=1e-6)
  torch.manual_seed(0)
  model = torch.nn.Linear(5, 3)
  compiled = torch_xla.compile(model.to(DEV))
  torch.testing.assert_close(compiled(x_cpu.to(DEV)).cpu(), model.cpu()(x_cpu), rtol=1e-5, atol=1e-6)


def test_eager_mode_is_off_inside_and_restored(x_cpu):
  eager_mode(True)
  try:
    seen = []

    def fn(t):
      seen.append(is_eager_mode())
      return cos_sin(t)

    xm.mark_step()
    x = x_cpu.to(DEV)
    met.clear_all()
    out = torch_xla.compile(fn)(x)
    assert seen == [False]
    assert is_eager_mode()
    assert executions() == 1
    assert 'EagerOpExecuteTime' not in met.metric_names()
    torch.testing.assert_close(out.cpu(), cos_sin(x_cpu), rtol=1e-5, atol=1e-6)
  finally:
    eager_mode(False)


def test_full_graph_raises_on_a_host_read(x_cpu):

  def branchy(t):
    if t[0][0] > 0:
      return torch.sin(t)
    return torch.cos(t)

  x = x_cpu.to(DEV)
  with pytest.raises(RuntimeError, match='Unexpected execution happens inside the compiled function'):
    torch_xla.compile(branchy, full_graph=True)(x)
  # Execution is allowed again afterwards; without full_graph the function runs.
  torch.testing.assert_close(torch_xla.compile(branchy)(x).cpu(), torch.cos(x_cpu))
  torch.testing.assert_close((x + 1).cpu(), x_cpu + 1)


def test_max_different_graphs():
  fn = torch_xla.compile(cos_sin, max_different_graphs=1)
  fn(torch.ones(3, device=DEV))
  fn(torch.zeros(3, device=DEV))  # the same graph again
  with pytest.raises(RuntimeError, match='different graphs'):
    fn(torch.ones(4, device=DEV))
  older_name = torch_xla.compile(cos_sin, num_different_graphs_allowed=2)
  older_name(torch.ones(5, device=DEV))
  older_name(torch.ones(6, device=DEV))
  with pytest.raises(RuntimeError, match='max_different_graphs=2'):
    older_name(torch.ones(7, device=DEV))


def test_step_trains_as_one_graph():
  torch.manual_seed(0)
  cpu = torch.nn.Linear(4, 2)
  dev = torch.nn.Linear(4, 2).to(DEV)
  dev.load_state_dict(cpu.state_dict())
  x = torch.randn(3, 4)
  opt_cpu = torch.optim.SGD(cpu.parameters(), lr=0.5)
  opt_dev = torch.optim.SGD(dev.parameters(), lr=0.5)
  xm.mark_step()
  met.clear_all()
  with torch_xla.step():
    opt_dev.zero_grad()
    dev(x.to(DEV)).square().sum().backward()
    opt_dev.step()
  assert executions() == 1
  opt_cpu.zero_grad()
  cpu(x).square().sum().backward()
  opt_cpu.step()
  torch.testing.assert_close(dev.weight.cpu(), cpu.weight, rtol=1e-5, atol=1e-6)


def test_step_runs_its_graph_when_the_block_raises():
  xm.mark_step()
  met.clear_all()
  with pytest.raises(ValueError, match='in the step'):
    with torch_xla.step():
      t = torch.ones(3, device=DEV) * 4
      raise ValueError('in the step')
  # One sync before the block, one after it, as torch_xla runs them; the value is computed.
  assert met.counter_value('MarkStep') == 2
  assert executions() == 1
  assert torch.equal(t.cpu(), torch.full((3,), 4.0))


def test_manual_seed_repeats_random_numbers():
  torch_xla.manual_seed(7)
  a = torch.rand(5, device=DEV).cpu()
  torch_xla.manual_seed(7)
  b = torch.rand(5, device=DEV).cpu()
  torch_xla.manual_seed(8)
  c = torch.rand(5, device=DEV).cpu()
  assert torch.equal(a, b)
  assert not torch.equal(a, c)


def test_optimization_barrier_keeps_values(x_cpu):
  x = x_cpu.to(DEV)
  y = x * 2
  xm.optimization_barrier_([x, y])
  assert 'stablehlo.optimization_barrier' in torch_xla._get_stablehlo([y])
  torch.testing.assert_close((x + y).cpu(), x_cpu * 3)
  with pytest.raises(TypeError, match='XLA tensors'):
    xm.optimization_barrier_([x_cpu])
