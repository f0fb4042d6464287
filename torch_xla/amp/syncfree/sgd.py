"""torch_xla.amp.syncfree.SGD."""
import torch

from . import _functional as F


class SGD(torch.optim.SGD):
  """torch.optim.SGD (momentum, dampening, Nesterov, weight decay, maximize) whose
  `step(found_inf=t)` is skipped on the device where the scalar tensor t is non-zero.

  >>> opt = syncfree.SGD(model.parameters(), lr=0.1, momentum=0.9)
  >>> opt.step(found_inf=torch.tensor(1., device='xla'))  # leaves everything as it was
  >>> opt.step()  # a step
  """

  def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False):
    super().__init__(
        params,
        lr=lr,
        momentum=momentum,
        dampening=dampening,
        weight_decay=weight_decay,
        nesterov=nesterov,
        maximize=maximize)

  @torch.no_grad()
  def step(self, closure=None, found_inf: torch.Tensor = None):
    F.check_found_inf(found_inf, 'SGD')
    loss = None
    if closure is not None:
      with torch.enable_grad():
        loss = closure()
    for group in self.param_groups:
      params, grads, buffers, steps = [], [], [], []
      for p in group['params']:
        if p.grad is None:
          continue
        if p.grad.is_sparse:
          raise RuntimeError('syncfree.SGD does not support sparse gradients')
        state = self.state[p]
        if 'step' not in state:
          state['step'] = torch.zeros((), dtype=torch.float32, device=p.device)
        state['step'] = F.on_device(state['step'], p.device)
        if group['momentum'] != 0:
          if state.get('momentum_buffer') is None:
            state['momentum_buffer'] = torch.zeros_like(p, memory_format=torch.preserve_format)
          buffers.append(state['momentum_buffer'])
        params.append(p)
        grads.append(p.grad)
        steps.append(state['step'])
      if not params:
        continue
      F.sgd_step(
          None if found_inf is None else F.on_device(found_inf, params[0].device),
          params,
          grads,
          buffers if buffers else [None] * len(params),
          steps,
          lr=group['lr'],
          momentum=group['momentum'],
          dampening=group['dampening'],
          weight_decay=group['weight_decay'],
          nesterov=group['nesterov'],
          maximize=group['maximize'])
    return loss
