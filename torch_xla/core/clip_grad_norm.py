"""torch.nn.utils.clip_grad_norm_ for XLA parameters without gradients.

PyTorch returns a CPU zero when none of the parameters has a gradient. On XLA
parameters the norm must live on their device like every other result of the
step (code adds it to XLA tensors or reduces it across replicas), so there the
zero is made on the parameters' XLA device. Every other call, CPU parameters
and XLA parameters with gradients included, runs PyTorch's function unchanged.
"""

import functools
import inspect

import torch
import torch.nn.utils
import torch.nn.utils.clip_grad as _clip_grad


def _xla_zero_norm(original):

  @functools.wraps(original)
  def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(parameters, torch.Tensor):
      parameters = [parameters]
    else:
      parameters = list(parameters)  # an iterator is read once, here
    if parameters and all(p.grad is None for p in parameters):
      xla_devices = [p.device for p in parameters if p.device.type == 'xla']
      if xla_devices:
        return torch.tensor(0.0, device=xla_devices[0])
    return original(parameters, max_norm, norm_type, error_if_nonfinite, foreach)

  clip_grad_norm_._xla_form = True
  clip_grad_norm_._orig = original
  return clip_grad_norm_


def install():
  """Installs the XLA-aware clip_grad_norm_ in torch.nn.utils (idempotent)."""
  original = torch.nn.utils.clip_grad_norm_
  if getattr(original, '_xla_form', False):
    return
  # The wrapper forwards these arguments by position: a PyTorch whose function
  # takes others keeps its own function rather than receive them wrongly.
  if list(inspect.signature(original).parameters) != ['parameters', 'max_norm', 'norm_type', 'error_if_nonfinite',
                                                      'foreach']:
    return
  patched = _xla_zero_norm(original)
  torch.nn.utils.clip_grad_norm_ = patched
  _clip_grad.clip_grad_norm_ = patched
