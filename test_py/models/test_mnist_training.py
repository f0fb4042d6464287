"""The guides' MNIST training loop on the XLA device matches eager PyTorch on the CPU."""
import copy
import os
import sys

import torch
import torch.nn as nn
import torch.optim as optim

sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'examples'))
import torch_xla  # noqa: E402
import torch_xla.core.xla_model as xm  # noqa: E402
from mnist_model import MNIST  # noqa: E402


def train(model, device, batches):
  model = model.to(device)
  opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
  loss_fn = nn.NLLLoss()
  losses = []
  for data, target in batches:
    opt.zero_grad()
    loss = loss_fn(model(data.to(device)), target.to(device))
    loss.backward()
    opt.step()
    if device != 'cpu':
      xm.mark_step()
    losses.append(loss.item())
  return losses, {k: v.cpu() for k, v in model.state_dict().items()}


def test_mnist_steps_match_eager():
  torch.manual_seed(0)
  batches = [(torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,))) for _ in range(4)]
  model = MNIST().train()
  cpu_losses, cpu_state = train(copy.deepcopy(model), 'cpu', batches)
  xla_losses, xla_state = train(copy.deepcopy(model), xm.xla_device(), batches)
  assert len(xla_losses) == 4
  for a, b in zip(xla_losses, cpu_losses):
    assert abs(a - b) < 1e-3 * max(1.0, abs(b)), (xla_losses, cpu_losses)
  for name, value in cpu_state.items():
    torch.testing.assert_close(xla_state[name], value, atol=2e-4, rtol=1e-3, msg=name)


def test_second_step_reuses_compiled_graph():
  import torch_xla.debug.metrics as met
  torch.manual_seed(0)
  batches = [(torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,))) for _ in range(4)]
  model = MNIST().train().to(xm.xla_device())
  opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
  loss_fn = nn.NLLLoss()
  compiles = []
  for data, target in batches:
    opt.zero_grad()
    loss_fn(model(data.to(xm.xla_device())), target.to(xm.xla_device())).backward()
    opt.step()
    xm.mark_step()
    compiles.append(met.counter_value('UncachedCompile') or 0)
  # Step 1 has no momentum buffers yet, so steps 1 and 2 differ; from step 3 on the
  # graph repeats and compiles nothing.
  assert compiles[3] == compiles[2], compiles
