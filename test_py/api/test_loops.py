"""Device loops: while_loop, fori_loop, torch.while_loop on XLA tensors, scan and
scan_layers run as one stablehlo.while and agree with the Python loops they stand for,
values and (scan) gradients; what the bodies read from outside, random ops and nested
loops work; bad bodies raise clear errors."""

import pytest
import torch
from torch._higher_order_ops.while_loop import while_loop as torch_while_loop

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from torch_xla.experimental import eager_mode
from torch_xla.experimental.fori_loop import fori_loop, while_loop
from torch_xla.experimental.scan import scan
from torch_xla.experimental.scan_layers import scan_layers

DEV = torch.device('xla')
TOL = dict(rtol=1e-5, atol=1e-5)


def is_device_loop(tensors):
  return 'stablehlo.while' in torch_xla._get_stablehlo(list(tensors))


def python_while(cond_fn, body_fn, carried):
  while cond_fn(*carried):
    carried = body_fn(*carried)
  return carried


def test_while_loop_agrees_with_python():

  def cond_fn(i, x):
    return i > 0

  def body_fn(i, x):
    return i - 1, x * 1.5 + 1

  i, x = torch.tensor(6, dtype=torch.int32), torch.tensor([1.0, -2.0])
  out = while_loop(cond_fn, body_fn, (i.to(DEV), x.to(DEV)))
  assert is_device_loop(out)
  expected = python_while(cond_fn, body_fn, (i, x))
  assert out[0].item() == 0
  torch.testing.assert_close(out[1].cpu(), expected[1], **TOL)


def test_torch_while_loop_runs_on_the_device():
  torch.manual_seed(0)
  linear_cpu = torch.nn.Linear(3, 3)
  linear = torch.nn.Linear(3, 3).to(DEV)
  linear.load_state_dict(linear_cpu.state_dict())
  x = torch.randn(2, 3)

  def run(layer, start, value):

    def cond_fn(i, v):
      return i < 4

    def body_fn(i, v):
      return i + 1, torch.tanh(layer(v))

    return torch_while_loop(cond_fn, body_fn, (start, value))

  with torch.no_grad():
    out = run(linear, torch.tensor(0, device=DEV), x.to(DEV))
    expected = run(linear_cpu, torch.tensor(0), x)
  assert is_device_loop(out)
  torch.testing.assert_close(out[1].cpu(), expected[1], **TOL)


def test_body_reads_outside_values_and_constants():
  w_cpu = torch.tensor([[0.5, -1.0], [2.0, 0.25]])
  w = w_cpu.to(DEV)

  def body(x):
    bias = torch.tensor([1.0, 2.0], device=x.device)  # device data made inside
    return torch.relu(x @ w + bias) * 0.5

  start = torch.tensor([1.0, 3.0])
  out = fori_loop(0, 5, body, start.to(DEV))
  expected = start
  for _ in range(5):
    expected = torch.relu(expected @ w_cpu + torch.tensor([1.0, 2.0])) * 0.5
  assert out[0].item() == 5
  torch.testing.assert_close(out[1].cpu(), expected, **TOL)


def test_fori_loop_trip_count_on_the_device_compiles_once():
  start = torch.zeros(3, device=DEV)
  results = []
  for upper in (3, 7):
    xm.mark_step()
    met.clear_all()
    _, value = fori_loop(torch.tensor(0, device=DEV), torch.tensor(upper, device=DEV), lambda v: v + 2, start)
    results.append(value.cpu())
    compiled = met.metric_data('CompileTime')
    # The second count is the same graph with other data: no new compile.
    if upper == 7:
      assert compiled is None or compiled[0] == 0
  torch.testing.assert_close(results[0], torch.full((3,), 6.0))
  torch.testing.assert_close(results[1], torch.full((3,), 14.0))


def test_nested_loops():

  def outer(v):
    return fori_loop(0, 3, lambda w: w * 2, v + 1)[1]

  _, value = fori_loop(0, 2, outer, torch.ones(2, device=DEV))
  # ((1 + 1) * 8 + 1) * 8 = 136
  torch.testing.assert_close(value.cpu(), torch.full((2,), 136.0))


def test_loop_errors():
  x = torch.ones(2, device=DEV)
  with pytest.raises(ValueError, match='for carried value 0'):
    while_loop(lambda v: v.sum() > 0, lambda v: v.sum(), (x,))
  with pytest.raises(ValueError, match='bool scalar'):
    while_loop(lambda v: v, lambda v: v - 1, (x,))
  with pytest.raises(ValueError, match='XLA tensors'):
    while_loop(lambda v: v.sum() > 0, lambda v: v - 1, (torch.ones(2),))
  outside = torch.zeros(2, device=DEV)

  def mutating(v):
    outside.add_(1)
    return v - 1

  with pytest.raises(ValueError, match='updated a tensor from outside in place'):
    while_loop(lambda v: v.sum() > 0, mutating, (x,))
  kept = []

  def keeping(v):
    kept.append(v * 2)
    return v - 1

  with pytest.raises(ValueError, match='kept one of its own tensors'):
    while_loop(lambda v: v.sum() > 0, keeping, (x,))
  # A step runs what else is pending; the kept tensor itself cannot be computed.
  y = x + 1
  xm.mark_step()
  torch.testing.assert_close(y.cpu(), torch.full((2,), 2.0))
  with pytest.raises(RuntimeError, match='inside a loop body'):
    kept[0].cpu()


def python_scan(fn, init, xs):
  carry, ys = init, []
  for i in range(xs.shape[0]):
    carry, y = fn(carry, xs[i])
    ys.append(y)
  return carry, torch.stack(ys)


def cumulative(carry, x):
  new = carry * 0.9 + torch.sin(x)
  return new, new * x


def test_scan_values_and_gradients_agree_with_python():
  init_cpu = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
  xs_cpu = torch.linspace(-1, 1, 12).reshape(4, 3).requires_grad_()
  init = init_cpu.detach().to(DEV).requires_grad_()
  xs = xs_cpu.detach().to(DEV).requires_grad_()
  carry, ys = scan(cumulative, init, xs)
  assert is_device_loop([carry, ys])
  carry_cpu, ys_cpu = python_scan(cumulative, init_cpu, xs_cpu)
  torch.testing.assert_close(carry.cpu(), carry_cpu.detach(), **TOL)
  torch.testing.assert_close(ys.cpu(), ys_cpu.detach(), **TOL)
  (carry.square().sum() + ys.sum()).backward()
  (carry_cpu.square().sum() + ys_cpu.sum()).backward()
  torch.testing.assert_close(init.grad.cpu(), init_cpu.grad, **TOL)
  torch.testing.assert_close(xs.grad.cpu(), xs_cpu.grad, **TOL)


def test_scan_gradients_reach_parameters_fn_reads():
  torch.manual_seed(0)
  layer_cpu = torch.nn.Linear(3, 3)
  layer = torch.nn.Linear(3, 3).to(DEV)
  layer.load_state_dict(layer_cpu.state_dict())
  xs_cpu = torch.randn(5, 2, 3)

  def make_fn(module):
    return lambda carry, x: (torch.tanh(module(carry) + x), carry.sum())

  init_cpu = torch.zeros(2, 3)
  carry, ys = scan(make_fn(layer), init_cpu.to(DEV), xs_cpu.to(DEV))
  carry_cpu, ys_cpu = python_scan(make_fn(layer_cpu), init_cpu, xs_cpu)
  (carry.sum() + ys.sum()).backward()
  (carry_cpu.sum() + ys_cpu.sum()).backward()
  torch.testing.assert_close(carry.detach().cpu(), carry_cpu.detach(), **TOL)
  torch.testing.assert_close(layer.weight.grad.cpu(), layer_cpu.weight.grad, **TOL)
  torch.testing.assert_close(layer.bias.grad.cpu(), layer_cpu.bias.grad, **TOL)


def test_scan_pytrees_and_no_output():

  def fn(carry, x):
    total, count = carry
    return (total + x['a'] * x['b'], count + 1), None

  xs_cpu = {'a': torch.arange(8.0).reshape(4, 2), 'b': torch.full((4, 2), 0.5)}
  init_cpu = (torch.zeros(2), torch.tensor(0))
  xs = {k: v.to(DEV) for k, v in xs_cpu.items()}
  (total, count), ys = scan(fn, tuple(t.to(DEV) for t in init_cpu), xs)
  assert ys is None
  torch.testing.assert_close(total.cpu(), (xs_cpu['a'] * 0.5).sum(0))
  assert count.item() == 4


def test_scan_random_numbers_differ_per_step():
  xm.set_rng_state(3)
  _, ys = scan(lambda c, x: (c, x + torch.rand(2, device=DEV)), torch.zeros(2, device=DEV), torch.zeros(3, 2, device=DEV))
  ys = ys.cpu()
  assert ys.shape == (3, 2)
  assert not torch.equal(ys[0], ys[1]) and not torch.equal(ys[1], ys[2])


def test_scan_gradient_of_random_ops_follows_the_forward():

  def fn(carry, x):
    dropped = torch.nn.functional.dropout(x, p=0.5, training=True)
    return carry + dropped, dropped * 3

  xs = torch.ones(4, 32, device=DEV, requires_grad=True)
  carry, ys = scan(fn, torch.zeros(32, device=DEV), xs)
  (carry.sum() + ys.sum()).backward()
  kept = ys.detach().cpu() != 0
  # d/dx of (dropout(x) + 3 dropout(x)) is 4 * 2 where the forward kept x, 0 elsewhere.
  torch.testing.assert_close(xs.grad.cpu(), kept.float() * 8)
  assert 0 < kept.sum() < kept.numel()


def test_scan_in_eager_mode():
  eager_mode(True)
  try:
    xs_cpu = torch.linspace(0, 1, 6).reshape(3, 2)
    carry, ys = scan(cumulative, torch.ones(2, device=DEV), xs_cpu.to(DEV))
    carry_cpu, ys_cpu = python_scan(cumulative, torch.ones(2), xs_cpu)
    torch.testing.assert_close(ys.cpu(), ys_cpu, **TOL)
  finally:
    eager_mode(False)


def test_scan_errors():
  with pytest.raises(ValueError, match='callable'):
    scan(1000, torch.zeros(1, device=DEV), torch.zeros(2, 1, device=DEV))
  with pytest.raises(ValueError, match='same leading dimension'):
    scan(lambda c, x: (c, x), torch.zeros(1, device=DEV), (torch.zeros(2, 1, device=DEV), torch.zeros(3, 1, device=DEV)))
  with pytest.raises(ValueError, match='keep its shapes'):
    scan(lambda c, x: (c.sum(), x), torch.zeros(2, device=DEV), torch.zeros(3, 2, device=DEV))


def test_scan_layers_agrees_with_sequential():
  torch.manual_seed(0)
  layers_cpu = [torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU()) for _ in range(3)]
  layers = [torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU()).to(DEV) for _ in range(3)]
  for l, c in zip(layers, layers_cpu):
    l.load_state_dict(c.state_dict())
  x = torch.randn(2, 4)
  out = scan_layers(layers, x.to(DEV))
  expected = torch.nn.Sequential(*layers_cpu)(x)
  torch.testing.assert_close(out.detach().cpu(), expected.detach(), **TOL)
  out.sum().backward()
  expected.sum().backward()
  for l, c in zip(layers, layers_cpu):
    torch.testing.assert_close(l[0].weight.grad.cpu(), c[0].weight.grad, **TOL)
