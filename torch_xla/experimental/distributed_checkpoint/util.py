"""prime_optimizer: an optimizer's state made to exist, so that a checkpoint can be
loaded into it."""
import torch

from torch_xla._extension import xlac as _xlac


def prime_optimizer(optimizer: torch.optim.Optimizer) -> torch.optim.Optimizer:
  """Creates the state of `optimizer` by one step with zero gradients, and returns it.

  An optimizer has no state before its first step, and a checkpoint loads into the
  state_dict it is given, in place: restore into `optimizer.state_dict()` after
  priming it. The step changes the parameters (weight decay) and the state, so prime
  only right before restoring both. Each gradient is sharded as its parameter; the
  pending values are computed before and after the step.
  """
  import torch_xla
  torch_xla.sync(wait=True)
  for group in optimizer.param_groups:
    for p in group['params']:
      if not (isinstance(p, torch.Tensor) and p.requires_grad):
        continue
      p.grad = torch.zeros_like(p, requires_grad=False)
      if p.device.type == 'xla':
        text = _xlac()._get_xla_sharding_spec(p)
        if text:
          _xlac()._xla_mark_sharding(p.grad, text)
  optimizer.step()
  torch_xla.sync(wait=True)
  return optimizer
