"""torch_xla.amp.syncfree.AdamW."""
import torch

from .adam import Adam


class AdamW(Adam, torch.optim.AdamW):
  """torch.optim.AdamW (decoupled weight decay, default 1e-2) whose `step(found_inf=t)`
  is skipped on the device where the scalar tensor t is non-zero. The step is
  syncfree.Adam's with the weight decay decoupled."""

  _decoupled = True

  def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
               maximize=False):
    super().__init__(
        params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)
