"""The sync-free steps: each computes the update of every parameter, then keeps the old
values where found_inf is set, all in the step's graph."""
import torch

from torch_xla.core import fused_optimizers


def check_found_inf(found_inf, optimizer):
  """Raises unless found_inf is None or a scalar tensor."""
  if found_inf is None:
    return
  if not isinstance(found_inf, torch.Tensor) or found_inf.dim() != 0:
    raise ValueError(f"{optimizer}.step: found_inf must be a scalar tensor (0 steps skipped, "
                     f"non-zero skipped), got "
                     f"{tuple(found_inf.shape) if isinstance(found_inf, torch.Tensor) else type(found_inf).__name__}")


def on_device(tensor, device):
  """`tensor` on `device` (a state loaded with load_state_dict may be on the CPU)."""
  return tensor if tensor.device == device else tensor.to(device)


def _kept_unless(skip, updated, original):
  """`updated`, or `original` where skip (a scalar bool tensor, or None: never)."""
  return updated if skip is None else torch.where(skip, original, updated)


def _count_step(steps, found_inf):
  """Adds one to each step count, nothing where found_inf is set."""
  if found_inf is None:
    for step in steps:
      step.add_(1)
    return
  taken = (found_inf == 0).to(steps[0].dtype) if steps else None
  for step in steps:
    step.add_(taken)


def sgd_step(found_inf, params, grads, momentum_buffers, steps, *, lr, momentum, dampening, weight_decay, nesterov,
             maximize):
  """torch.optim.SGD's update. A parameter's first step (its step count is 0 on the
  device) starts the momentum buffer from the gradient, as torch.optim does; a skipped
  step leaves the count at 0."""
  skip = None if found_inf is None else found_inf != 0
  for p, g, buf, step in zip(params, grads, momentum_buffers, steps):
    d = -g if maximize else g
    if weight_decay != 0:
      d = d + weight_decay * p
    if momentum != 0:
      continued = momentum * buf + (1 - dampening) * d
      new_buf = torch.where(step == 0, d, continued)
      buf.copy_(_kept_unless(skip, new_buf, buf))
      d = d + momentum * new_buf if nesterov else new_buf
    p.copy_(_kept_unless(skip, p - lr * d, p))
  _count_step(steps, found_inf)


def adam_step(found_inf, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, lr, beta1, beta2, eps,
              weight_decay, amsgrad, maximize, decoupled):
  """torch.optim.Adam's (decoupled: AdamW's) update, the bias corrections from the step
  count the update would reach; the arithmetic is that of the fused XLA Adam
  (torch_xla.core.fused_optimizers)."""
  next_steps = [step + 1 for step in steps]
  new_params, _, new_avgs, new_sqs, new_maxes = fused_optimizers.adam_update(
      params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, next_steps, lr=lr, beta1=beta1, beta2=beta2,
      weight_decay=weight_decay, eps=eps, amsgrad=amsgrad, maximize=maximize, grad_scale=None,
      found_inf=found_inf, decoupled=decoupled)
  for targets, values in ((params, new_params), (exp_avgs, new_avgs), (exp_avg_sqs, new_sqs),
                          (max_exp_avg_sqs, new_maxes)):
    for target, value in zip(targets, values):
      if value is not target:
        target.copy_(value)
  _count_step(steps, found_inf)
