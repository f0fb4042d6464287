"""torch_xla.amp.GradScaler: torch.amp.GradScaler for XLA devices."""
import inspect

import torch

import torch_xla


def _takes_found_inf(optimizer):
  """Whether optimizer.step skips itself on the device given found_inf (the optimizers
  of torch_xla.amp.syncfree)."""
  try:
    return 'found_inf' in inspect.signature(optimizer.step).parameters
  except (TypeError, ValueError):
    return False


class GradScaler(torch.amp.GradScaler):
  """Loss scaling for mixed precision on XLA devices: torch.amp.GradScaler('xla').

  The scale, the overflow check of the gradients (inf or NaN) and the scale's update
  stay on the device. Whether a step is skipped is decided where the optimizer allows:

  * the optimizers of `torch_xla.amp.syncfree` (and torch.optim's with fused=True) get
    the overflow flag as a device tensor and skip the update by arithmetic on the
    device: the step never waits for the device;
  * any other optimizer needs the flag on the host: the pending graph (forward,
    backward, unscaling) is run first, so that reading the flag costs one transfer and
    no second execution of the step, and the optimizer's step is called unless it is set.
  """

  def __init__(self,
               init_scale: float = 2.0**16,
               growth_factor: float = 2.0,
               backoff_factor: float = 0.5,
               growth_interval: int = 2000,
               enabled: bool = True):
    super().__init__(
        'xla',
        init_scale=init_scale,
        growth_factor=growth_factor,
        backoff_factor=backoff_factor,
        growth_interval=growth_interval,
        enabled=enabled)

  def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
    found_infs = list(optimizer_state['found_inf_per_device'].values())
    if _takes_found_inf(optimizer):
      found_inf = found_infs[0]
      for other in found_infs[1:]:
        found_inf = found_inf + other.to(found_inf.device)
      return optimizer.step(*args, found_inf=found_inf, **kwargs)
    torch_xla.sync()
    if not sum(v.item() for v in found_infs):
      return optimizer.step(*args, **kwargs)
    return None
