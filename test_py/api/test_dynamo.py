"""torch.compile(model, backend='openxla'): dynamo's forward and backward graphs
(AOTAutograd) run on the XLA device through the lazy IR, the lowering and the compile
cache; training steps agree with eager PyTorch; a graph break runs between the graphs;
later calls reuse the compiled graphs."""

import os
import sys

import torch
import torch.nn.functional as F

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'examples'))
from mnist_model import MNIST  # noqa: E402
from transformer_model import TransformerLM, lm_loss  # noqa: E402
from testing.op_testing import is_op_fallback  # noqa: E402

DEV = torch.device('xla')


def fallback_ops():
  return [name for name in met.counter_names() if is_op_fallback(name)]


def train(model, batches, loss_fn, device, compile_model):
  """SGD steps; the losses, the final parameters and each step's new compilations."""
  model = model.to(device)
  step_model = torch.compile(model, backend='openxla') if compile_model else model
  optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
  losses, compiles = [], []
  for inputs, targets in batches:
    before = met.counter_value('UncachedCompile') or 0
    optimizer.zero_grad()
    loss = loss_fn(step_model(inputs.to(device)), targets.to(device))
    loss.backward()
    optimizer.step()
    if device.type == 'xla':
      xm.mark_step()
    losses.append(loss.item())
    compiles.append((met.counter_value('UncachedCompile') or 0) - before)
  return losses, {n: p.detach().cpu() for n, p in model.named_parameters()}, compiles


def check_against_eager(make_model, batches, loss_fn, rtol, atol):
  torch.manual_seed(0)
  eager = make_model()
  compiled = make_model()
  compiled.load_state_dict(eager.state_dict())
  torch._dynamo.reset()
  met.clear_counters()
  losses, params, compiles = train(compiled, batches, loss_fn, DEV, compile_model=True)
  assert fallback_ops() == []
  eager_losses, eager_params, _ = train(eager, batches, loss_fn, torch.device('cpu'), compile_model=False)
  torch.testing.assert_close(losses, eager_losses, rtol=rtol, atol=atol)
  for name, value in eager_params.items():
    torch.testing.assert_close(params[name], value, rtol=rtol, atol=atol, msg=lambda m: f'{name}: {m}')
  return compiles


def test_mnist_training_matches_eager_and_reuses_graphs():
  torch.manual_seed(1)
  batches = [(torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,))) for _ in range(3)]
  compiles = check_against_eager(MNIST, batches, F.nll_loss, rtol=1e-4, atol=1e-5)
  # The first step compiles the forward and backward graphs (and the lazy loss and
  # optimizer); the second the optimizer's step with momentum buffers; the third nothing.
  assert compiles[0] >= 2 and compiles[2] == 0, compiles


def test_transformer_training_matches_eager():
  torch.manual_seed(2)
  batches = [(torch.randint(0, 50, (4, 12)), torch.randint(0, 50, (4, 12))) for _ in range(3)]

  def make_model():
    return TransformerLM(vocab=50, d_model=32, nhead=4, dim_feedforward=64, max_len=16, dropout=0.0)

  compiles = check_against_eager(make_model, batches, lm_loss, rtol=1e-4, atol=1e-5)
  assert compiles[2] == 0, compiles


def test_graph_break_runs_between_compiled_graphs():
  calls = []

  def scaled_by_norm(x, w):
    h = torch.tanh(x @ w)
    calls.append(h.sum().item())  # .item() and a Python side effect: a graph break
    return h * 2 + 1

  compiled = torch.compile(scaled_by_norm, backend='openxla')
  torch._dynamo.reset()
  x, w = torch.randn(5, 4), torch.randn(4, 3)
  out = compiled(x.to(DEV), w.to(DEV))
  expected = torch.tanh(x @ w) * 2 + 1
  torch.testing.assert_close(out.cpu(), expected, rtol=1e-5, atol=1e-5)
  assert len(calls) == 1 and abs(calls[0] - torch.tanh(x @ w).sum().item()) < 1e-4
  x2 = torch.randn(5, 4)
  torch.testing.assert_close(compiled(x2.to(DEV), w.to(DEV)).cpu(), torch.tanh(x2 @ w) * 2 + 1, rtol=1e-5,
                             atol=1e-5)
  assert len(calls) == 2


def test_inference_graph_outputs_are_computed_when_returned():
  model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).eval()
  x = torch.randn(3, 6)
  expected = model(x)
  compiled = torch.compile(model.to(DEV), backend='openxla')
  torch._dynamo.reset()
  with torch.no_grad():
    out = compiled(x.to(DEV))
    # The compiled graph ran: the output is device data, not a pending computation.
    assert 'device_data' in torch_xla._XLAC._get_xla_tensors_text([out])
  torch.testing.assert_close(out.cpu(), expected, rtol=1e-5, atol=1e-5)


def test_outputs_left_pending_with_dynamo_sync_off(monkeypatch):
  monkeypatch.setenv('XLA_DYNAMO_SYNC', '0')
  model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
  x = torch.randn(3, 6)
  expected = model(x).detach()
  torch._dynamo.reset()
  compiled = torch.compile(model.to(DEV), backend='openxla')
  with torch.no_grad():
    out = compiled(x.to(DEV))
  pending = torch_xla._XLAC._get_xla_tensors_text([out])
  assert 'stablehlo.tanh' in pending  # still to compute, at the step's mark_step
  xm.mark_step()
  torch.testing.assert_close(out.cpu(), expected, rtol=1e-5, atol=1e-5)
