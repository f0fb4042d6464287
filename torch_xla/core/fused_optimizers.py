"""PyTorch's fused optimizers (Adam, AdamW and SGD with fused=True) on XLA tensors.

torch.optim refuses fused=True for devices outside its list, and transformers' Trainer
defaults to AdamW with fused=True (optim="adamw_torch_fused"). Here the device list
gains "xla", and the fused steps (torch._fused_adam_, _fused_adamw_, _fused_sgd_, which
the optimizers call) get an XLA form: the update of every parameter is recorded into
the step's graph, which XLA compiles into fused loops, so a fused step costs one graph
like the foreach form does. Other devices keep PyTorch's kernels.

The XLA form works on the tensors as the optimizer holds them, through
functionalization like any other code: PyTorch's functionalization of the in-place
fused ops cannot take the empty state lists the optimizers pass (max_exp_avg_sqs
without amsgrad, momentum buffers without momentum). It follows PyTorch's CPU kernels
(ATen's FusedAdamKernel.cpp and FusedSGDKernel.cpp): the gradient is unscaled by
grad_scale and stored back so, the step follows its negation for `maximize`, and a step
whose found_inf is set leaves every tensor as it was.
"""

import functools

import torch
import torch.optim.optimizer as _optimizer


def _allow_fused_on_xla():
  """Adds "xla" to the devices torch.optim accepts for fused=True."""
  original = _optimizer._get_fused_kernels_supported_devices
  if getattr(original, '_with_xla', False):
    return

  def supported_devices():
    return original() + ['xla']

  supported_devices._with_xla = True
  _optimizer._get_fused_kernels_supported_devices = supported_devices


def _unscaled(grads, grad_scale, maximize):
  """The gradients stored back (unscaled by grad_scale), and those the step follows
  (negated for `maximize`)."""
  if grad_scale is not None:
    grads = [g / grad_scale.to(g.dtype) for g in grads]
  return grads, [-g for g in grads] if maximize else grads


def _unless_inf(found_inf, updated, original):
  """`updated`, or `original` where found_inf is set (the step is skipped)."""
  if found_inf is None:
    return updated
  skip = found_inf != 0
  return [torch.where(skip, o, u) for u, o in zip(updated, original)]


def adam_update(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2, weight_decay,
                eps, amsgrad, maximize, grad_scale, found_inf, decoupled):
  """Adam's (decoupled: AdamW's) update for step counts `state_steps` (already counted):
  the new params, gradients (unscaled), exp_avgs, exp_avg_sqs and max_exp_avg_sqs, each
  the old value where found_inf is set. Also the step of torch_xla.amp.syncfree.Adam."""
  grads_in = list(grads)
  grads, directions = _unscaled(grads_in, grad_scale, maximize)
  new_params, new_avgs, new_sqs, new_maxes = [], [], [], []
  for i, (p, g, m, v, step) in enumerate(zip(params, directions, exp_avgs, exp_avg_sqs, state_steps)):
    opmath = torch.float32 if p.dtype in (torch.bfloat16, torch.float16) else p.dtype
    p32, g32, m32, v32 = (t.to(opmath) for t in (p, g, m, v))
    lr_t = lr.to(opmath) if isinstance(lr, torch.Tensor) else lr
    if weight_decay != 0:
      if decoupled:
        p32 = p32 - lr_t * weight_decay * p32
      else:
        g32 = g32 + weight_decay * p32
    m32 = torch.lerp(m32, g32, 1 - beta1)
    v32 = v32 * beta2 + (1 - beta2) * g32 * g32
    # The bias corrections in float64 from the step count, as the CPU kernel has them.
    step64 = step.to(torch.float64)
    bias_correction1 = 1 - torch.pow(beta1, step64)
    bias_correction2 = 1 - torch.pow(beta2, step64)
    step_size = (lr_t / bias_correction1).to(opmath)
    bias_correction2_sqrt = bias_correction2.sqrt().to(opmath)
    if amsgrad:
      vmax = torch.maximum(max_exp_avg_sqs[i].to(opmath), v32)
      denom = vmax.sqrt() / bias_correction2_sqrt + eps
      new_maxes.append(vmax.to(max_exp_avg_sqs[i].dtype))
    else:
      denom = v32.sqrt() / bias_correction2_sqrt + eps
    p32 = p32 - step_size * m32 / denom
    new_params.append(p32.to(p.dtype))
    new_avgs.append(m32.to(m.dtype))
    new_sqs.append(v32.to(v.dtype))
  if not amsgrad:
    new_maxes = list(max_exp_avg_sqs)
  return (_unless_inf(found_inf, new_params, params), _unless_inf(found_inf, grads, grads_in),
          _unless_inf(found_inf, new_avgs, exp_avgs), _unless_inf(found_inf, new_sqs, exp_avg_sqs),
          _unless_inf(found_inf, new_maxes, max_exp_avg_sqs))


def _fused_sgd(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov, maximize,
               is_first_step, grad_scale=None, found_inf=None):
  grads_in = list(grads)
  grads, directions = _unscaled(grads_in, grad_scale, maximize)
  new_params, new_buffers = [], []
  for i, (p, g) in enumerate(zip(params, directions)):
    lr_t = lr.to(p.dtype) if isinstance(lr, torch.Tensor) else lr
    if weight_decay != 0:
      g = g + weight_decay * p
    if momentum != 0:
      buffer = g if is_first_step else momentum * momentum_buffer_list[i] + (1 - dampening) * g
      new_buffers.append(buffer)
      g = g + momentum * buffer if nesterov else buffer
    new_params.append(p - lr_t * g)
  if momentum == 0:
    new_buffers = list(momentum_buffer_list)
  return (_unless_inf(found_inf, new_params, params), _unless_inf(found_inf, grads, grads_in),
          _unless_inf(found_inf, new_buffers, momentum_buffer_list))


def _on_xla(tensor_lists):
  return any(t.device.type == 'xla' for ts in tensor_lists for t in ts)


def _in_place(compute, original, num_lists):
  """torch._fused_<name>_: `compute` on XLA tensors, its results copied back into the
  first `num_lists` lists; PyTorch's own kernel elsewhere."""

  @functools.wraps(original)
  def fused_step(*args, **kwargs):
    lists = args[:num_lists]
    if not _on_xla(lists):
      return original(*args, **kwargs)
    with torch.no_grad():
      results = compute(*args, **kwargs)
      for targets, values in zip(lists, results):
        for target, value in zip(targets, values):
          if value is not target:
            target.copy_(value)

  fused_step._xla_form = True
  return fused_step


def _adam_entry(decoupled):

  def compute(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
              weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    return adam_update(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr=lr, beta1=beta1,
                 beta2=beta2, weight_decay=weight_decay, eps=eps, amsgrad=amsgrad, maximize=maximize,
                 grad_scale=grad_scale, found_inf=found_inf, decoupled=decoupled)

  return compute


def install():
  """Lets torch.optim's fused optimizers run on XLA tensors (idempotent)."""
  _allow_fused_on_xla()
  for name, compute, num_lists in (('_fused_adam_', _adam_entry(False), 5), ('_fused_adamw_', _adam_entry(True), 5),
                                   ('_fused_sgd_', _fused_sgd, 3)):
    original = getattr(torch, name)
    if not getattr(original, '_xla_form', False):
      setattr(torch, name, _in_place(compute, original, num_lists))
