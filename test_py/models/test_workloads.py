"""Full training steps of the workloads run entirely lowered: no aten:: CPU-fallback
counter appears, and the losses and parameters match eager PyTorch on the CPU.

Workloads: the guides' MNIST network (SGD with momentum), a ResNet-style network
(strided, grouped and dilated convs, batch norm, average and adaptive pooling; SGD
with nesterov momentum and weight decay) and a transformer encoder language model
(embedding, layer norm, attention, gelu, dropout, cross-entropy with label
smoothing; AdamW).
"""
import copy
import os
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'examples'))
import torch_xla  # noqa: E402
import torch_xla.core.xla_model as xm  # noqa: E402
import torch_xla.debug.metrics as met  # noqa: E402
from mnist_model import MNIST  # noqa: E402
from resnet_model import SmallResNet  # noqa: E402
from transformer_model import TransformerLM, lm_loss  # noqa: E402
from testing.op_testing import is_op_fallback  # noqa: E402

DEV = xm.xla_device()


def mnist_case(seed):
  g = torch.Generator().manual_seed(seed)
  model = MNIST()
  batches = [(torch.randn(8, 1, 28, 28, generator=g), torch.randint(0, 10, (8,), generator=g)) for _ in range(3)]
  return model, lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.5), batches, F.nll_loss


def resnet_case(seed):
  g = torch.Generator().manual_seed(seed)
  model = SmallResNet()
  batches = [(torch.randn(4, 3, 16, 16, generator=g), torch.randint(0, 10, (4,), generator=g)) for _ in range(3)]
  return model, lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4), batches, \
      F.nll_loss


TRANSFORMER_LR = 1e-3


def transformer_case(seed, dropout=0.0):
  g = torch.Generator().manual_seed(seed)
  model = TransformerLM(vocab=50, d_model=32, nhead=4, dim_feedforward=64, max_len=16, dropout=dropout)
  batches = []
  for _ in range(3):
    tokens = torch.randint(0, 50, (2, 9), generator=g)
    batches.append((tokens[:, :-1], tokens[:, 1:]))
  return model, lambda p: torch.optim.AdamW(p, lr=TRANSFORMER_LR), batches, lm_loss


CASES = {'mnist': mnist_case, 'resnet': resnet_case, 'transformer': transformer_case}


def train(model, make_opt, batches, loss_fn, device):
  model = model.to(device).train()
  opt = make_opt(model.parameters())
  losses = []
  for data, target in batches:
    opt.zero_grad()
    loss = loss_fn(model(data.to(device)), target.to(device))
    loss.backward()
    opt.step()
    if device != 'cpu':
      xm.mark_step()
    losses.append(loss.item())
  return losses, {k: v.detach().cpu() for k, v in model.state_dict().items()}


@pytest.mark.parametrize('name', list(CASES))
def test_training_steps_match_eager_without_fallback(name):
  torch.manual_seed(0)
  model, make_opt, batches, loss_fn = CASES[name](0)
  cpu_losses, cpu_state = train(copy.deepcopy(model), make_opt, batches, loss_fn, 'cpu')
  met.clear_counters()
  xla_losses, xla_state = train(copy.deepcopy(model), make_opt, batches, loss_fn, DEV)
  fallbacks = sorted(n for n in met.counter_names() if is_op_fallback(n))
  assert not fallbacks, f'{name}: CPU fallbacks {fallbacks}'
  torch.testing.assert_close(torch.tensor(xla_losses), torch.tensor(cpu_losses), rtol=1e-3, atol=1e-4)
  for key, value in cpu_state.items():
    got = xla_state[key]
    if key.endswith('self_attn.in_proj_bias'):
      # The key bias cannot change attention (softmax is invariant to adding q.b to
      # every score), so its gradient is zero up to rounding, and Adam scales rounding
      # noise up to steps of about lr: on either device it moves by up to lr a step.
      d = value.shape[0] // 3
      torch.testing.assert_close(got[d:2 * d], value[d:2 * d], rtol=0, atol=2 * TRANSFORMER_LR * len(batches),
                                 msg=f'{name}: {key} (key part)')
      got, value = torch.cat([got[:d], got[2 * d:]]), torch.cat([value[:d], value[2 * d:]])
    torch.testing.assert_close(got, value, rtol=2e-3, atol=2e-4, msg=f'{name}: {key}')


def test_transformer_with_dropout_runs_without_fallback():
  torch.manual_seed(0)
  model, make_opt, batches, loss_fn = transformer_case(0, dropout=0.1)
  met.clear_counters()
  losses, _ = train(model, make_opt, batches, loss_fn, DEV)
  fallbacks = sorted(n for n in met.counter_names() if is_op_fallback(n))
  assert not fallbacks, f'CPU fallbacks {fallbacks}'
  assert all(torch.isfinite(torch.tensor(losses)))


@pytest.mark.parametrize('optimizer', ['sgd', 'adam', 'adamw'])
@pytest.mark.parametrize('foreach', [False, True])
def test_optimizer_steps_without_fallback(optimizer, foreach):
  make = {
      'sgd': lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01, foreach=foreach),
      'adam': lambda p: torch.optim.Adam(p, lr=1e-2, weight_decay=0.01, amsgrad=True, foreach=foreach),
      'adamw': lambda p: torch.optim.AdamW(p, lr=1e-2, foreach=foreach),
  }[optimizer]
  torch.manual_seed(0)
  model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
  g = torch.Generator().manual_seed(1)
  batches = [(torch.randn(5, 6, generator=g), torch.randint(0, 3, (5,), generator=g)) for _ in range(3)]
  loss_fn = lambda out, t: F.cross_entropy(out, t)
  cpu_losses, cpu_state = train(copy.deepcopy(model), make, batches, loss_fn, 'cpu')
  met.clear_counters()
  xla_losses, xla_state = train(copy.deepcopy(model), make, batches, loss_fn, DEV)
  fallbacks = sorted(n for n in met.counter_names() if is_op_fallback(n))
  assert not fallbacks, f'{optimizer} foreach={foreach}: CPU fallbacks {fallbacks}'
  torch.testing.assert_close(torch.tensor(xla_losses), torch.tensor(cpu_losses), rtol=1e-4, atol=1e-5)
  for key, value in cpu_state.items():
    torch.testing.assert_close(xla_state[key], value, rtol=1e-4, atol=1e-5, msg=key)
