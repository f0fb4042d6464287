"""torch_xla.amp.syncfree.Adam."""
import torch

from . import _functional as F


class Adam(torch.optim.Adam):
  """torch.optim.Adam (AMSGrad, weight decay, maximize) whose `step(found_inf=t)` is
  skipped on the device where the scalar tensor t is non-zero: the parameters, the
  moments and the step count keep their values.

  >>> opt = syncfree.Adam(model.parameters(), lr=1e-3)
  >>> scaler.step(opt)  # torch_xla.amp.GradScaler passes found_inf
  """

  _decoupled = False

  def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
               maximize=False):
    super().__init__(
        params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)

  @torch.no_grad()
  def step(self, closure=None, found_inf: torch.Tensor = None):
    name = type(self).__name__
    F.check_found_inf(found_inf, name)
    loss = None
    if closure is not None:
      with torch.enable_grad():
        loss = closure()
    for group in self.param_groups:
      params, grads, avgs, sqs, maxes, steps = [], [], [], [], [], []
      for p in group['params']:
        if p.grad is None:
          continue
        if p.grad.is_sparse:
          raise RuntimeError(f'syncfree.{name} does not support sparse gradients')
        state = self.state[p]
        if not state:
          state['step'] = torch.zeros((), dtype=torch.float32, device=p.device)
          state['exp_avg'] = torch.zeros_like(p, memory_format=torch.preserve_format)
          state['exp_avg_sq'] = torch.zeros_like(p, memory_format=torch.preserve_format)
          if group['amsgrad']:
            state['max_exp_avg_sq'] = torch.zeros_like(p, memory_format=torch.preserve_format)
        state['step'] = F.on_device(state['step'], p.device)
        params.append(p)
        grads.append(p.grad)
        avgs.append(state['exp_avg'])
        sqs.append(state['exp_avg_sq'])
        if group['amsgrad']:
          maxes.append(state['max_exp_avg_sq'])
        steps.append(state['step'])
      if not params:
        continue
      beta1, beta2 = group['betas']
      F.adam_step(
          None if found_inf is None else F.on_device(found_inf, params[0].device),
          params,
          grads,
          avgs,
          sqs,
          maxes,
          steps,
          lr=group['lr'],
          beta1=beta1,
          beta2=beta2,
          eps=group['eps'],
          weight_decay=group['weight_decay'],
          amsgrad=group['amsgrad'],
          maximize=group['maximize'],
          decoupled=self._decoupled)
    return loss
