"""torch.optim's fused Adam, AdamW and SGD (fused=True) on XLA tensors, against the
same optimizers fused on the CPU: parameters, state and gradients after each step."""

import pytest
import torch

import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

DEV = xm.xla_device()

CASES = [
    (torch.optim.Adam, dict(lr=0.01)),
    (torch.optim.Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.05, maximize=True)),
    (torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1)),
    (torch.optim.AdamW, dict(lr=torch.tensor(0.02), amsgrad=True)),
    (torch.optim.SGD, dict(lr=0.1)),
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (torch.optim.SGD, dict(lr=0.05, momentum=0.5, dampening=0.1, maximize=True)),
]


def _train(opt_cls, kwargs, device, steps=2):
  torch.manual_seed(0)
  model = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).to(device)
  opt = opt_cls(model.parameters(), fused=True, **kwargs)
  x = torch.randn(8, 5, generator=torch.Generator().manual_seed(1)).to(device)
  for _ in range(steps):
    opt.zero_grad()
    model(x).square().sum().backward()
    opt.step()
    if device != 'cpu':
      xm.mark_step()
  state = [{k: v.cpu() for k, v in opt.state[p].items() if torch.is_tensor(v)} for p in model.parameters()]
  return [p.detach().cpu() for p in model.parameters()], [p.grad.cpu() for p in model.parameters()], state


@pytest.mark.parametrize('opt_cls,kwargs', CASES, ids=lambda v: getattr(v, '__name__', None) or str(sorted(v)))
def test_fused_optimizer_matches_cpu(opt_cls, kwargs):
  expected = _train(opt_cls, kwargs, 'cpu')
  actual = _train(opt_cls, kwargs, DEV)
  for want, got in zip(expected, actual):
    for a, b in zip(want, got):
      if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
          torch.testing.assert_close(b[k], a[k], rtol=1e-5, atol=1e-6)
      else:
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)


def test_fused_step_is_one_graph():
  model = torch.nn.Linear(6, 3).to(DEV)
  opt = torch.optim.AdamW(model.parameters(), lr=0.01, fused=True)
  x = torch.randn(4, 6).to(DEV)
  for _ in range(2):  # compiles the step
    model(x).sum().backward()
    opt.step()
    xm.mark_step()
  met.clear_all()
  model(x).sum().backward()
  opt.step()
  xm.mark_step()
  assert met.metric_data('ExecuteTime')[0] == 1
  assert met.metric_data('CompileTime') is None


@pytest.mark.parametrize('found_inf', [0.0, 1.0])
def test_grad_scale_and_found_inf(found_inf):
  """The gradient is unscaled (and stored back unscaled); a step with found_inf set
  changes nothing, as GradScaler relies on."""
  g = torch.Generator().manual_seed(2)
  tensors = [[torch.randn(3, 2, generator=g)] for _ in range(4)]
  tensors[3] = [tensors[3][0].abs()]  # exp_avg_sq >= 0
  steps = [torch.tensor(2.0)]
  kwargs = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.01, eps=1e-8, amsgrad=False, maximize=False)
  cpu = [[t.clone() for t in ts] for ts in tensors]
  torch._fused_adamw_(*cpu, [], [s.clone() for s in steps], grad_scale=torch.tensor(4.0),
                      found_inf=torch.tensor(found_inf), **kwargs)
  xla = [[t.to(DEV) for t in ts] for ts in tensors]
  torch._fused_adamw_(*xla, [], [s.to(DEV) for s in steps], grad_scale=torch.tensor(4.0, device=DEV),
                      found_inf=torch.tensor(found_inf, device=DEV), **kwargs)
  for want, got in zip(cpu, xla):
    torch.testing.assert_close(got[0].cpu(), want[0], rtol=1e-5, atol=1e-6)
  if found_inf:
    for original, got in zip(tensors, xla):
      assert torch.equal(got[0].cpu(), original[0])
