"""Module helpers of torch_xla.distributed.fsdp: activation checkpointing of a module's
forward, and a linear layer whose backward reads the weight parameter itself.
"""
from types import MethodType

import torch


def _checkpoint_function():
  """torch_xla's activation checkpointing where it exists (it keeps the random numbers
  of the first run for the recomputation on XLA devices), else PyTorch's."""
  try:
    from torch_xla.utils.checkpoint import checkpoint
  except ImportError:
    from torch.utils.checkpoint import checkpoint
  return checkpoint


def checkpoint_module(module):
  """Wraps `module`'s forward with activation checkpointing and returns the module.

  The activations of the forward are not kept: the backward pass runs the forward
  again to recompute them (non-reentrant checkpointing, so keyword arguments are
  accepted and the parameters get gradients even when no input requires one). With
  gradients off (evaluation, torch.no_grad()) the forward runs as it is. The original
  forward stays reachable as `module._xla_checkpointed_forward_original`.
  """
  if not isinstance(module, torch.nn.Module):
    raise TypeError(f'checkpoint_module: expected a torch.nn.Module, got {type(module).__name__}')
  original = module.forward

  def checkpointed_forward(m, *args, **kwargs):
    if not torch.is_grad_enabled():
      return m._xla_checkpointed_forward_original(*args, **kwargs)
    return _checkpoint_function()(m._xla_checkpointed_forward_original, *args,
                                  use_reentrant=False, **kwargs)

  module._xla_checkpointed_forward_original = original
  module.forward = MethodType(checkpointed_forward, module)
  return module


class XLAPatchedLinear(torch.autograd.Function):
  """torch.nn.functional.linear whose backward reads the weight parameter itself.

  The backward of nn.Linear keeps the transposed weight its forward multiplied by,
  which on XLA is a value of its own rather than the parameter: freeing the full
  parameter (as sharded data parallelism does after the forward) would not free it.
  Here the forward saves the input and the weight, and the backward computes the
  gradients from them as matrix products over the flattened leading dimensions
  (grad @ W for the input, grad^T @ input for the weight, a sum for the bias). Values
  and gradients are those of nn.Linear; any number of leading dimensions, 1-D inputs
  included.
  """

  @staticmethod
  @torch.amp.custom_fwd(device_type='xla')
  def forward(ctx, input, weight, bias=None):
    ctx.save_for_backward(input, weight, bias)
    with torch.no_grad():
      return torch.nn.functional.linear(input, weight, bias)

  @staticmethod
  @torch.amp.custom_bwd(device_type='xla')
  def backward(ctx, grad_output):
    input, weight, bias = ctx.saved_tensors
    grad_input = grad_weight = grad_bias = None
    # [..., out] and [..., in] as matrices: one row per position of the leading dims.
    grad_rows = grad_output.reshape(-1, grad_output.size(-1))
    if ctx.needs_input_grad[0]:
      grad_input = grad_rows.mm(weight.to(grad_rows.dtype)).reshape(input.shape)
    if ctx.needs_input_grad[1]:
      input_rows = input.reshape(-1, input.size(-1)).to(grad_rows.dtype)
      grad_weight = grad_rows.t().mm(input_rows).to(weight.dtype)
    if bias is not None and ctx.needs_input_grad[2]:
      grad_bias = grad_rows.sum(0).to(bias.dtype)
    return grad_input, grad_weight, grad_bias


def _xla_patched_nn_linear_forward(m, input):
  return XLAPatchedLinear.apply(input, m.weight, m.bias)


def apply_xla_patch_to_nn_linear(module, patched_function=_xla_patched_nn_linear_forward):
  """Makes every nn.Linear in `module` (itself included) run `patched_function(m,
  input)` as its forward (by default XLAPatchedLinear), and returns the module.

  A layer whose forward was already replaced by other means is left alone, except the
  forward that checkpoint_module wrapped, which is patched under the checkpointing.
  The original forward stays reachable as `m._nn_linear_forward_original`.
  """

  def patch(m, attribute):
    forward = getattr(m, attribute, None)
    if getattr(forward, '__func__', None) is not torch.nn.Linear.forward:
      return
    m._nn_linear_forward_original = forward
    setattr(m, attribute, MethodType(patched_function, m))

  for m in module.modules():
    if isinstance(m, torch.nn.Linear):
      patch(m, 'forward')
      patch(m, '_xla_checkpointed_forward_original')
  return module
