"""Autograd on the XLA device: gradients and optimizer steps match eager CPU PyTorch."""

import copy

import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from testing.op_testing import is_op_fallback  # noqa: E402

DEV = xm.xla_device()
TOL = dict(rtol=1e-5, atol=1e-5)


class MLP(torch.nn.Module):

  def __init__(self, act):
    super().__init__()
    self.l1 = torch.nn.Linear(6, 16)
    self.l2 = torch.nn.Linear(16, 8)
    self.l3 = torch.nn.Linear(8, 3)
    self.act = act

  def forward(self, x):
    h = self.act(self.l1(x))
    h = torch.tanh(self.l2(h))
    return torch.sigmoid(self.l3(h))


ACTS = {'relu': torch.relu, 'sigmoid': torch.sigmoid, 'tanh': torch.tanh}
LOSSES = {
    'sum': lambda out, y: out.sum(),
    'mean': lambda out, y: out.mean(),
    'mse': lambda out, y: ((out - y)**2).mean(),
    'weighted': lambda out, y: (out * y).sum(1).mean() * 0.5 - out.sum(0)[1],
}


def _data(seed=0, n=5):
  g = torch.Generator().manual_seed(seed)
  return torch.randn(n, 6, generator=g), torch.rand(n, 3, generator=g)


def _grads(model, x, y, loss_fn, device):
  m = copy.deepcopy(model).to(device)
  xd = x.detach().clone().to(device).requires_grad_(True)
  loss = loss_fn(m(xd), y.to(device))
  loss.backward()
  return loss.detach().cpu(), xd.grad.cpu(), {n: p.grad.cpu() for n, p in m.named_parameters()}


@pytest.mark.parametrize('act', list(ACTS))
@pytest.mark.parametrize('loss', list(LOSSES))
def test_mlp_gradients_match_eager(act, loss):
  torch.manual_seed(0)
  model = MLP(ACTS[act])
  x, y = _data()
  x[0, :3] = 0  # relu's boundary: relu'(0) is 0 in both
  expected = _grads(model, x, y, LOSSES[loss], 'cpu')
  met.clear_counters()
  actual = _grads(model, x, y, LOSSES[loss], DEV)
  torch.testing.assert_close(actual[0], expected[0], **TOL)
  torch.testing.assert_close(actual[1], expected[1], **TOL)
  assert actual[2].keys() == expected[2].keys()
  for name in expected[2]:
    torch.testing.assert_close(actual[2][name], expected[2][name], **TOL, msg=name)
  # The backward formulas are lowered, not run on the CPU.
  fallbacks = [n for n in met.counter_names() if is_op_fallback(n)]
  assert not fallbacks, fallbacks
  assert (met.counter_value('xla::mm') or 0) > 0
  assert (met.counter_value('xla::tanh_backward') or 0) > 0
  assert (met.counter_value('xla::sigmoid_backward') or 0) > 0
  if act == 'relu':
    assert (met.counter_value('xla::threshold_backward') or 0) > 0


def test_gradient_accumulation_and_zero_grad():
  torch.manual_seed(1)
  model = MLP(torch.relu)
  x, y = _data(3)
  m_cpu, m_dev = copy.deepcopy(model), copy.deepcopy(model).to(DEV)
  for m, dev in [(m_cpu, 'cpu'), (m_dev, DEV)]:
    for i in range(2):
      ((m(x.to(dev)) - y.to(dev))**2).sum().backward()
  for (n, a), (_, e) in zip(m_dev.named_parameters(), m_cpu.named_parameters()):
    torch.testing.assert_close(a.grad.cpu(), e.grad, **TOL, msg=n)
  m_dev.zero_grad()
  assert all(p.grad is None for p in m_dev.parameters())


def test_elementwise_grads():
  x = torch.tensor([[0.5, -1.5, 2.0], [1.0, 3.0, -0.25]])
  fns = [
      lambda t: (t * t * 3 - t / 2).sum(),
      lambda t: (t.exp() + t.abs().sqrt() + t.sin() * t.cos()).mean(),
      lambda t: torch.maximum(t, t.t().reshape(2, 3) * 0.5).sum(),
      lambda t: t.clamp(-1, 1).pow(3).sum(),
      lambda t: torch.where(t > 0, t.log1p() if False else t * 2, -t).sum(),
      lambda t: (t.unsqueeze(0).expand(4, 2, 3) * torch.arange(4.0, device=t.device).view(4, 1, 1)).sum(),
      lambda t: (t.t() @ t).sum() - t[0].sum() * 3,
      lambda t: torch.rsqrt(t.abs() + 1).sum() + t.permute(1, 0).mean(0).sum(),
  ]
  for i, fn in enumerate(fns):
    xc = x.clone().requires_grad_(True)
    fn(xc).backward()
    xd = x.to(DEV).requires_grad_(True)
    fn(xd).backward()
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, **TOL, msg=f'fn {i}')


def _sgd_run(device, steps, **sgd_kwargs):
  torch.manual_seed(0)
  model = MLP(torch.relu).to(device)
  opt = torch.optim.SGD(model.parameters(), **sgd_kwargs)
  losses = []
  for step in range(steps):
    x, y = _data(10 + step, n=8)
    opt.zero_grad()
    loss = ((model(x.to(device)) - y.to(device))**2).mean()
    loss.backward()
    opt.step()
    if device != 'cpu':
      xm.mark_step()
    losses.append(loss.detach().cpu())
  return torch.stack(losses), [p.detach().cpu() for p in model.parameters()]


@pytest.mark.parametrize('kwargs', [
    dict(lr=0.5),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.1, momentum=0.9, weight_decay=0.01),
    dict(lr=0.05, momentum=0.5, nesterov=True, weight_decay=0.1),
    dict(lr=0.1, momentum=0.9, dampening=0.1),
], ids=lambda k: ','.join(f'{a}={b}' for a, b in k.items()))
def test_sgd_steps_match_eager(kwargs):
  exp_losses, exp_params = _sgd_run('cpu', 4, **kwargs)
  act_losses, act_params = _sgd_run(DEV, 4, **kwargs)
  torch.testing.assert_close(act_losses, exp_losses, **TOL)
  for a, e in zip(act_params, exp_params):
    torch.testing.assert_close(a, e, **TOL)
  assert not torch.equal(exp_params[0], MLP(torch.relu).l1.weight.detach())  # it trained


def test_sgd_steady_state_does_not_recompile():
  torch.manual_seed(0)
  model = MLP(torch.tanh).to(DEV)
  opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)
  uncached = []
  for step in range(5):
    x, y = _data(step, n=8)
    met.clear_counters()
    opt.zero_grad()
    loss = ((model(x.to(DEV)) - y.to(DEV))**2).mean()
    loss.backward()
    xm.optimizer_step(opt, barrier=True)
    uncached.append(met.counter_value('UncachedCompile') or 0)
  # The first steps differ (no momentum buffer yet, then its creation); later ones reuse graphs.
  assert uncached[-2:] == [0, 0], uncached


def test_no_grad_and_detach():
  w = torch.ones(3, device=DEV, requires_grad=True)
  with torch.no_grad():
    y = w * 2
  assert not y.requires_grad
  z = (w.detach() * 3).sum() + (w * w).sum()
  z.backward()
  assert torch.equal(w.grad.cpu(), torch.full((3,), 2.0))



def _slice_loss(t):
  return (t[:, 1:]**2).sum() + t[1:, ::2].sum() * 3


def test_slice_gradient_values():
  x = torch.tensor([[0.5, -1.5, 2.0], [1.0, 3.0, -0.25]])
  xc = x.clone().requires_grad_(True)
  _slice_loss(xc).backward()
  xd = x.to(DEV).requires_grad_(True)
  _slice_loss(xd).backward()
  torch.testing.assert_close(xd.grad.cpu(), xc.grad, **TOL)


def test_select_gradient_values():
  x = torch.tensor([[0.5, -1.5, 2.0], [1.0, 3.0, -0.25]])
  fn = lambda t: (t[1] * t[0]).sum() + t[:, 2].sum()
  xc = x.clone().requires_grad_(True)
  fn(xc).backward()
  xd = x.to(DEV).requires_grad_(True)
  fn(xd).backward()
  torch.testing.assert_close(xd.grad.cpu(), xc.grad, **TOL)
