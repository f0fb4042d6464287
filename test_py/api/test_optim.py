"""Optimizer steps on the XLA device against the same steps on the CPU.

A small model is copied to the device; three steps of each optimizer/option set run on
both; parameters and optimizer state must match and no CPU fallback may run (the
foreach=True path decomposes into the same per-tensor ops: PyTorch's _foreach_* kernels
are CompositeExplicitAutograd loops). clip_grad_norm_ is checked the same way.
"""

import copy

import pytest
import torch

import torch_xla.core.xla_model as xm
from testing.op_testing import DEV, fallbacks, lowered, make
import torch_xla.debug.metrics as met

OPTIMIZERS = {
    'sgd': lambda p, f: torch.optim.SGD(p, lr=0.1, foreach=f),
    'sgd_wd': lambda p, f: torch.optim.SGD(p, lr=0.1, weight_decay=0.05, foreach=f),
    'sgd_momentum': lambda p, f: torch.optim.SGD(p, lr=0.1, momentum=0.9, foreach=f),
    'sgd_dampening_wd': lambda p, f: torch.optim.SGD(p, lr=0.1, momentum=0.8, dampening=0.3, weight_decay=0.01,
                                                     foreach=f),
    'sgd_nesterov': lambda p, f: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01,
                                                 foreach=f),
    'sgd_maximize': lambda p, f: torch.optim.SGD(p, lr=0.05, momentum=0.5, maximize=True, foreach=f),
    'adam': lambda p, f: torch.optim.Adam(p, lr=0.01, foreach=f),
    'adam_wd': lambda p, f: torch.optim.Adam(p, lr=0.01, weight_decay=0.1, foreach=f),
    'adam_amsgrad': lambda p, f: torch.optim.Adam(p, lr=0.01, amsgrad=True, foreach=f),
    'adam_amsgrad_wd': lambda p, f: torch.optim.Adam(p, lr=0.02, betas=(0.8, 0.9), eps=1e-6, amsgrad=True,
                                                     weight_decay=0.05, foreach=f),
    'adamw': lambda p, f: torch.optim.AdamW(p, lr=0.01, foreach=f),
    'adamw_wd': lambda p, f: torch.optim.AdamW(p, lr=0.01, weight_decay=0.3, foreach=f),
    'adamw_amsgrad': lambda p, f: torch.optim.AdamW(p, lr=0.01, amsgrad=True, weight_decay=0.1, foreach=f),
}


def _model(dtype=torch.float32):
  torch.manual_seed(0)
  return torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3)).to(dtype)


def _run(model, opt, steps, device, dtype, allow=()):
  for i in range(steps):
    x = make((6, 5), dtype, seed=10 + i).to(device)
    y = make((6, 3), dtype, seed=20 + i).to(device)
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    if device != 'cpu':
      xm.mark_step()


def _state_tensors(opt):
  out = []
  for group in opt.param_groups:
    for p in group['params']:
      for k, v in sorted(opt.state[p].items()):
        if isinstance(v, torch.Tensor):
          out.append((k, v))
  return out


@pytest.mark.parametrize('foreach', [False, True], ids=['single', 'foreach'])
@pytest.mark.parametrize('name', list(OPTIMIZERS))
@pytest.mark.parametrize('dtype', [torch.float32, torch.float64], ids=['f32', 'f64'])
def test_optimizer_matches_cpu(name, foreach, dtype):
  cpu_model = _model(dtype)
  dev_model = copy.deepcopy(cpu_model).to(DEV)
  cpu_opt = OPTIMIZERS[name](cpu_model.parameters(), foreach)
  dev_opt = OPTIMIZERS[name](dev_model.parameters(), foreach)
  _run(cpu_model, cpu_opt, 3, 'cpu', dtype)
  met.clear_counters()
  _run(dev_model, dev_opt, 3, DEV, dtype)
  assert not fallbacks(), f'CPU fallbacks: {fallbacks()}'
  for pc, pd in zip(cpu_model.parameters(), dev_model.parameters()):
    assert pd.device.type == 'xla' and pd.dtype == pc.dtype
    torch.testing.assert_close(pd.cpu(), pc.detach(), rtol=1e-5, atol=1e-6)
  sc, sd = _state_tensors(cpu_opt), _state_tensors(dev_opt)
  assert [k for k, _ in sc] == [k for k, _ in sd]
  for (k, vc), (_, vd) in zip(sc, sd):
    assert vd.dtype == vc.dtype and vd.shape == vc.shape, k
    torch.testing.assert_close(vd.cpu(), vc, rtol=1e-5, atol=1e-6, msg=lambda m: f'state {k}: {m}')


def test_bfloat16_adamw_step():
  cpu_model = _model(torch.bfloat16)
  dev_model = copy.deepcopy(cpu_model).to(DEV)
  cpu_opt = torch.optim.AdamW(cpu_model.parameters(), lr=0.01, weight_decay=0.1)
  dev_opt = torch.optim.AdamW(dev_model.parameters(), lr=0.01, weight_decay=0.1)
  _run(cpu_model, cpu_opt, 2, 'cpu', torch.bfloat16)
  met.clear_counters()
  _run(dev_model, dev_opt, 2, DEV, torch.bfloat16)
  assert not fallbacks(), fallbacks()
  for pc, pd in zip(cpu_model.parameters(), dev_model.parameters()):
    torch.testing.assert_close(pd.cpu().float(), pc.detach().float(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize('norm_type', [2.0, 1.0, float('inf')])
@pytest.mark.parametrize('max_norm', [0.05, 100.0])
def test_clip_grad_norm(norm_type, max_norm):
  cpu_model = _model()
  dev_model = copy.deepcopy(cpu_model).to(DEV)
  norms = []
  for model, device in ((cpu_model, 'cpu'), (dev_model, DEV)):
    x = make((6, 5), torch.float32, seed=3).to(device)
    model(x).pow(2).sum().backward()
    if device == 'cpu':
      norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm, norm_type))
    else:
      with lowered('mul', 'linalg_vector_norm'):
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm, norm_type))
        xm.mark_step()
  torch.testing.assert_close(norms[1].cpu(), norms[0], rtol=1e-5, atol=1e-6)
  for pc, pd in zip(cpu_model.parameters(), dev_model.parameters()):
    torch.testing.assert_close(pd.grad.cpu(), pc.grad, rtol=1e-5, atol=1e-6)


def test_clip_grad_value():
  cpu_model = _model()
  dev_model = copy.deepcopy(cpu_model).to(DEV)
  for model, device in ((cpu_model, 'cpu'), (dev_model, DEV)):
    model(make((6, 5), torch.float32, seed=3).to(device)).pow(2).sum().backward()
    with lowered():
      torch.nn.utils.clip_grad_value_(model.parameters(), 0.1)
  for pc, pd in zip(cpu_model.parameters(), dev_model.parameters()):
    torch.testing.assert_close(pd.grad.cpu(), pc.grad)
