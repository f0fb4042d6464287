"""Activation checkpointing (torch_xla.utils.checkpoint): the values and gradients of a
checkpointed block equal the plain block's (and eager CPU's), with use_reentrant True and
False; the backward graph recomputes behind an optimization barrier; random ops repeat
their numbers in the recomputation."""

import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
from torch_xla.utils.checkpoint import checkpoint

DEV = torch.device('xla')
TOL = dict(rtol=1e-5, atol=1e-6)


def make_block():
  torch.manual_seed(0)
  return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 6), torch.nn.Tanh())


def grads(model, x, checkpointed, **kwargs):
  model.zero_grad()
  x = x.detach().clone().requires_grad_()
  h = x * 2
  out = checkpoint(model, h, **kwargs) if checkpointed else model(h)
  loss = (out * torch.arange(6.0, device=out.device)).sum()
  loss.backward()
  return out.detach().cpu(), x.grad.cpu(), [p.grad.cpu() for p in model.parameters()]


@pytest.mark.parametrize('use_reentrant', [True, False])
def test_values_and_gradients_equal_the_plain_block(use_reentrant):
  x = torch.randn(5, 6)
  cpu_out, cpu_x_grad, cpu_grads = grads(make_block(), x, checkpointed=False)
  dev_block = make_block().to(DEV)
  plain = grads(dev_block, x.to(DEV), checkpointed=False)
  checked = grads(dev_block, x.to(DEV), checkpointed=True, use_reentrant=use_reentrant)
  for a, b, c in zip([plain[0], plain[1], *plain[2]], [checked[0], checked[1], *checked[2]],
                     [cpu_out, cpu_x_grad, *cpu_grads]):
    torch.testing.assert_close(b, a, **TOL)
    torch.testing.assert_close(b, c, rtol=1e-4, atol=1e-5)


def test_recomputation_is_behind_a_barrier():
  block = make_block().to(DEV)
  x = torch.randn(5, 6, device=DEV, requires_grad=True)
  checkpoint(block, x * 1).sum().backward()
  assert 'stablehlo.optimization_barrier' in torch_xla._get_stablehlo([x.grad])
  xm.mark_step()


@pytest.mark.parametrize('use_reentrant', [True, False])
def test_random_ops_repeat_in_the_recomputation(use_reentrant):

  def noisy(t):
    return torch.nn.functional.dropout(t, p=0.5, training=True) * 3

  x = torch.ones(64, device=DEV, requires_grad=True)
  out = checkpoint(noisy, x, use_reentrant=use_reentrant)
  out.sum().backward()
  kept = out.detach().cpu() != 0
  # d(out)/dx is 6 where the forward kept an element and 0 where it dropped it: the
  # recomputation drew the forward's mask.
  torch.testing.assert_close(x.grad.cpu(), kept.float() * 6)
  assert 0 < kept.sum() < 64


def test_keyword_arguments_need_non_reentrant():
  block = torch.nn.Linear(3, 3).to(DEV)
  x = torch.randn(2, 3, device=DEV, requires_grad=True)

  def fn(t, scale=1.0):
    return block(t) * scale

  out = checkpoint(fn, x, use_reentrant=False, scale=2.0)
  torch.testing.assert_close(out.detach().cpu(), (block(x) * 2).detach().cpu())
  with pytest.raises(ValueError, match='use_reentrant=False'):
    checkpoint(fn, x, use_reentrant=True, scale=2.0)
