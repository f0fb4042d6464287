"""torch_xla.distributed.fsdp.utils: XLAPatchedLinear and apply_xla_patch_to_nn_linear
give nn.Linear's values and gradients (on the XLA device, against eager CPU), for 1-D
to 3-D inputs with and without bias; the spmd forward is the same; checkpoint_module
keeps a module's values and gradients."""

import copy

import pytest
import torch
import torch.nn as nn

import torch_xla.distributed.spmd as xs
from torch_xla.distributed.fsdp import checkpoint_module
from torch_xla.distributed.fsdp.utils import XLAPatchedLinear, apply_xla_patch_to_nn_linear

DEV = torch.device('xla')
TOL = dict(rtol=1e-5, atol=1e-5)


def linear_and_grads(linear, x):
  """The output of linear(x) and the gradients (input, weight, bias) of a weighted sum of
  it, whose weights differ per element."""
  x = x.clone().requires_grad_()
  out = linear(x)
  (out * torch.arange(out.numel(), dtype=out.dtype, device=out.device).view(out.shape)).sum().backward()
  grads = {'input': x.grad, 'weight': linear.weight.grad}
  if linear.bias is not None:
    grads['bias'] = linear.bias.grad
  return out, grads


@pytest.mark.parametrize('shape', [(5,), (4, 5), (3, 4, 5), (2, 3, 4, 5)], ids=['1d', '2d', '3d', '4d'])
@pytest.mark.parametrize('bias', [True, False], ids=['bias', 'nobias'])
@pytest.mark.parametrize('patched_forward', [None, xs.xla_patched_nn_linear_forward], ids=['default', 'spmd'])
def test_patched_linear_matches_nn_linear(shape, bias, patched_forward):
  torch.manual_seed(0)
  cpu = nn.Linear(5, 6, bias=bias)
  x = torch.randn(*shape)
  expected, expected_grads = linear_and_grads(cpu, x)

  xla = copy.deepcopy(cpu).to(DEV)
  if patched_forward is None:
    apply_xla_patch_to_nn_linear(xla)
  else:
    apply_xla_patch_to_nn_linear(xla, patched_forward)
  assert xla._nn_linear_forward_original.__func__ is nn.Linear.forward
  out, grads = linear_and_grads(xla, x.to(DEV))
  assert out.grad_fn is not None and 'XLAPatchedLinear' in type(out.grad_fn).__name__
  torch.testing.assert_close(out.cpu(), expected, **TOL)
  assert grads.keys() == expected_grads.keys()
  for name, grad in expected_grads.items():
    torch.testing.assert_close(grads[name].cpu(), grad, **TOL, msg=lambda m: f'{name}: {m}')


def test_patched_linear_function_on_cpu_tensors():
  torch.manual_seed(1)
  x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
  w = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
  b = torch.randn(2, dtype=torch.float64, requires_grad=True)
  assert torch.autograd.gradcheck(XLAPatchedLinear.apply, (x, w, b))
  assert torch.autograd.gradcheck(XLAPatchedLinear.apply, (x, w))


def test_patch_reaches_nested_linears_and_skips_replaced_forwards():
  model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 2)))
  custom = model[2][0]
  custom.forward = lambda x: x  # replaced by other means: left alone
  returned = apply_xla_patch_to_nn_linear(model)
  assert returned is model
  assert model[0].forward.__func__ is not nn.Linear.forward
  assert not hasattr(custom, '_nn_linear_forward_original')


def outputs_and_grads(model, x):
  """The output of model(x) and the gradients of (output ** 2).sum(): of each parameter
  by name, and of the input."""
  model.zero_grad()
  x = x.clone().requires_grad_()
  out = model(x)
  (out * out).sum().backward()
  grads = {name: p.grad.clone() for name, p in model.named_parameters()}
  grads['input'] = x.grad
  return out.detach(), grads


def test_patch_under_checkpoint_module():
  torch.manual_seed(2)
  cpu = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
  x = torch.randn(5, 4)
  expected, expected_grads = outputs_and_grads(cpu, x)
  wrapped = checkpoint_module(copy.deepcopy(cpu))
  for layer in (wrapped[0], wrapped[2]):
    checkpoint_module(layer)
  apply_xla_patch_to_nn_linear(wrapped)
  # The patch goes under the checkpointing: the checkpointed forward stays outermost.
  assert wrapped[0]._xla_checkpointed_forward_original.__func__ is not nn.Linear.forward
  out, grads = outputs_and_grads(wrapped, x)
  torch.testing.assert_close(out, expected, **TOL)
  for name, grad in expected_grads.items():
    torch.testing.assert_close(grads[name], grad, **TOL, msg=lambda m: f'{name}: {m}')


def test_checkpoint_module_keeps_values_and_gradients_on_cpu():
  torch.manual_seed(3)
  model = nn.Sequential(nn.Linear(6, 6), nn.GELU(), nn.Linear(6, 2))
  expected, expected_grads = outputs_and_grads(model, torch.randn(3, 6))
  torch.manual_seed(3)
  checkpointed = checkpoint_module(nn.Sequential(nn.Linear(6, 6), nn.GELU(), nn.Linear(6, 2)))
  out, grads = outputs_and_grads(checkpointed, torch.randn(3, 6))
  torch.testing.assert_close(out, expected)
  for name, grad in expected_grads.items():
    torch.testing.assert_close(grads[name], grad, msg=lambda m: f'{name}: {m}')


def test_checkpoint_module_passes_keyword_arguments_and_runs_plainly_without_grad():

  class Scaled(nn.Module):

    def __init__(self):
      super().__init__()
      self.linear = nn.Linear(3, 3)

    def forward(self, x, scale=1.0):
      return self.linear(x) * scale

  torch.manual_seed(4)
  model = Scaled()
  x = torch.randn(2, 3)
  expected = model(x, scale=3.0)
  checkpoint_module(model)
  torch.testing.assert_close(model(x, scale=3.0), expected)
  with torch.no_grad():
    torch.testing.assert_close(model(x, scale=3.0), expected)


def test_checkpoint_module_refuses_what_is_not_a_module():
  with pytest.raises(TypeError, match='checkpoint_module: expected a torch.nn.Module'):
    checkpoint_module(lambda x: x)


def test_checkpoint_module_on_the_xla_device():
  pytest.importorskip('torch_xla.utils.checkpoint')
  torch.manual_seed(5)
  cpu = nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 2))
  x = torch.randn(3, 6)
  expected, expected_grads = outputs_and_grads(cpu, x)
  xla = checkpoint_module(copy.deepcopy(cpu).to(DEV))
  out, grads = outputs_and_grads(xla, x.to(DEV))
  torch.testing.assert_close(out.cpu(), expected, **TOL)
  for name, grad in expected_grads.items():
    torch.testing.assert_close(grads[name].cpu(), grad, **TOL, msg=lambda m: f'{name}: {m}')


def test_patched_linear_under_autocast_matches_nn_linear():
  torch.manual_seed(6)
  plain = nn.Linear(8, 4).to(DEV)
  patched = apply_xla_patch_to_nn_linear(copy.deepcopy(plain))
  x = torch.randn(3, 8)
  results = []
  for layer in (plain, patched):
    with torch.autocast('xla', dtype=torch.bfloat16):
      out, grads = linear_and_grads(layer, x.to(DEV))
    results.append((out, grads))
  (out, grads), (patched_out, patched_grads) = results
  assert patched_out.dtype == out.dtype == torch.bfloat16
  torch.testing.assert_close(patched_out.cpu(), out.cpu())
  for name, grad in grads.items():
    assert patched_grads[name].dtype == grad.dtype, name
    torch.testing.assert_close(patched_grads[name].cpu(), grad.cpu(), rtol=1e-2, atol=1e-2,
                               msg=lambda m: f'{name}: {m}')
