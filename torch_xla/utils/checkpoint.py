"""Activation checkpointing on the XLA device.

`checkpoint(function, *args)` computes `function(*args)` without keeping the
activations its backward pass needs; the backward pass runs the function again to
recompute them, with the random numbers of the first run. Values and gradients equal
those of `function(*args)`.

torch.utils.checkpoint on XLA tensors recomputes too, but XLA can merge the
recomputation with the forward computation of the same graph (it eliminates common
subexpressions) and keep the activations after all. Here the recomputation's inputs pass
an optimization barrier (xm.optimization_barrier_), which XLA cannot see through; the
random number state is torch_xla's (xm.get_rng_state).

use_reentrant=True (the default, as in torch_xla): a torch.autograd.Function runs the
function without grad, and its backward recomputes and differentiates it; gradients
reach the parameters the function reads only when an input requires grad, and keyword
arguments are not accepted. use_reentrant=False: the function runs with grad, and
saved-tensor hooks replace the activations it saves by their recomputation in the
backward pass (any inputs, keyword arguments, `context_fn`). `determinism_check` and
`debug` are accepted and change nothing.
"""
import contextlib

import torch

import torch_xla.core.xla_model as xm


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check='default', debug=False,
               preserve_rng_state=True, **kwargs):
  """`function(*args, **kwargs)`, its activations recomputed in the backward pass."""
  if use_reentrant is None:
    use_reentrant = True
  if use_reentrant:
    if kwargs:
      raise ValueError('checkpoint: keyword arguments to the function need use_reentrant=False')
    if context_fn is not None:
      raise ValueError('checkpoint: context_fn needs use_reentrant=False')
    return _ReentrantCheckpoint.apply(function, preserve_rng_state, *args)
  return _checkpoint_with_hooks(function, preserve_rng_state, context_fn, args, kwargs)


def _tensors(values):
  return [v for v in values if isinstance(v, torch.Tensor)]


class _RunState:
  """What a recomputation must repeat of the first run: the random number state of the
  XLA devices of the inputs, and autocast."""

  def __init__(self, args, preserve_rng_state):
    self.devices = sorted({t.device for t in _tensors(args) if t.device.type == 'xla'}, key=str)
    self.seeds = [xm.get_rng_state(d) for d in self.devices] if preserve_rng_state else None
    self.autocast = [(kind, torch.is_autocast_enabled(kind), torch.get_autocast_dtype(kind)) for kind in ('xla', 'cpu')]
    self.autocast_cache = torch.is_autocast_cache_enabled()

  @contextlib.contextmanager
  def repeated(self):
    """The block runs with the first run's random numbers and autocast; the random
    number state after it is the one before it."""
    saved = [xm.get_rng_state(d) for d in self.devices] if self.seeds is not None else None
    if self.seeds is not None:
      for d, seed in zip(self.devices, self.seeds):
        xm.set_rng_state(seed, d)
    try:
      with contextlib.ExitStack() as stack:
        for kind, enabled, dtype in self.autocast:
          stack.enter_context(torch.autocast(kind, enabled=enabled, dtype=dtype, cache_enabled=self.autocast_cache))
        yield
    finally:
      if saved is not None:
        for d, seed in zip(self.devices, saved):
          xm.set_rng_state(seed, d)


def _recompute_inputs(args):
  """Copies of the inputs behind an optimization barrier, so that XLA recomputes from
  them instead of reusing the first run's values, with the inputs' requires_grad."""
  copies = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
  on_device = [c for c in copies if isinstance(c, torch.Tensor) and c.device.type == 'xla']
  if on_device:
    xm.optimization_barrier_(on_device)
  for a, c in zip(args, copies):
    if isinstance(a, torch.Tensor):
      c.requires_grad_(a.requires_grad)
  return copies


class _ReentrantCheckpoint(torch.autograd.Function):

  @staticmethod
  def forward(ctx, function, preserve_rng_state, *args):
    ctx.function = function
    ctx.state = _RunState(args, preserve_rng_state)
    ctx.positions = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    ctx.others = [None if isinstance(a, torch.Tensor) else a for a in args]
    ctx.save_for_backward(*_tensors(args))
    with torch.no_grad():
      return function(*args)

  @staticmethod
  def backward(ctx, *grads):
    if not torch.autograd._is_checkpoint_valid():
      raise RuntimeError('checkpoint (use_reentrant=True) works with .backward() only, not torch.autograd.grad(); '
                         'use use_reentrant=False')
    args = list(ctx.others)
    for i, t in zip(ctx.positions, ctx.saved_tensors):
      args[i] = t
    inputs = _recompute_inputs(args)
    with ctx.state.repeated(), torch.enable_grad():
      outputs = ctx.function(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    pairs = [(o, g) for o, g in zip(outputs, grads)
             if isinstance(o, torch.Tensor) and o.requires_grad and g is not None]
    if not pairs:
      raise RuntimeError('checkpoint: none of the outputs of the function requires grad, so no gradient can '
                         'flow through it (with use_reentrant=True an input must require grad)')
    torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
    return (None, None) + tuple(i.grad if isinstance(i, torch.Tensor) else None for i in inputs)


class _Recomputation:
  """The activations of one checkpointed call, recomputed when the backward pass first
  asks for one; they are kept while the autograd graph that saved them lives."""

  def __init__(self, function, args, kwargs, state, context):
    self.function = function
    self.args = args
    self.kwargs = kwargs
    self.state = state
    self.context = context
    self.saved = None

  def get(self, index):
    if self.saved is None:
      self.saved = []
      inputs = _recompute_inputs(self.args)

      def keep(t):
        self.saved.append(t)
        return len(self.saved) - 1

      with self.state.repeated(), torch.enable_grad(), self.context, \
           torch.autograd.graph.saved_tensors_hooks(keep, lambda i: self.saved[i]):
        self.function(*inputs, **self.kwargs)
    if index >= len(self.saved):
      raise RuntimeError(f'checkpoint: the recomputation saved {len(self.saved)} tensors, the first run more; '
                         'the function must compute the same ops when it runs again')
    return self.saved[index]


def _checkpoint_with_hooks(function, preserve_rng_state, context_fn, args, kwargs):
  if not torch.is_grad_enabled():
    return function(*args, **kwargs)
  forward_context, recompute_context = context_fn() if context_fn is not None else (contextlib.nullcontext(),
                                                                                 contextlib.nullcontext())
  state = _RunState(args, preserve_rng_state)
  recomputation = _Recomputation(function, args, kwargs, state, recompute_context)
  count = 0

  def pack(_):
    nonlocal count
    count += 1
    return (recomputation, count - 1)

  def unpack(packed):
    owner, index = packed
    return owner.get(index)

  with torch.autograd.graph.saved_tensors_hooks(pack, unpack), forward_context:
    return function(*args, **kwargs)
