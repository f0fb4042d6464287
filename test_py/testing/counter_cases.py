"""Inputs of the op-counter cases (the COUNTER_CASES at the end of the ops/ test files,
which ops/test_op_coverage.py runs): small device tensors, made alike in every file."""

import torch

from testing.op_testing import DEV, make


def positive():
  """A (2, 3) float32 tensor of positive values."""
  return make((2, 3), torch.float32, 'pos', seed=11).to(DEV)


def floats(shape=(3, 4), seed=0):
  return make(shape, torch.float32, seed=seed).to(DEV)


def typed(dtype=torch.float32):
  """A (3, 4) tensor of `dtype`."""
  return make((3, 4), dtype).to(DEV)


def grad_case(fn, shape=(3, 4)):
  """A case that differentiates fn(x).sum() for x = floats(shape); gives x's gradient."""

  def run():
    x = floats(shape).requires_grad_()
    fn(x).sum().backward()
    return x.grad

  return run


def randn_grad_case(fn, shape=(1, 2, 6, 6)):
  """A case that differentiates fn(x).sum() for a random x of `shape`."""

  def run():
    x = torch.randn(*shape, device=DEV, requires_grad=True)
    fn(x).sum().backward()

  return run


def randn_input_grad_case(fn, shape):
  """A case that differentiates fn(x) (its first output where it gives several) for a
  random x of `shape`; gives x's gradient."""

  def run():
    x = torch.randn(*shape, device=DEV, requires_grad=True)
    out = fn(x)
    (out[0] if isinstance(out, tuple) else out).sum().backward()
    return x.grad

  return run
