"""scan: a function applied along the leading dimension of tensors, carrying a state,
as one device loop (stablehlo.while), with gradients.

    carry, ys = scan(fn, init, xs)

is the Python loop

    carry, ys = init, []
    for i in range(len(xs)):
      carry, y = fn(carry, xs[i])
      ys.append(y)
    ys = torch.stack(ys)

where init, xs, the carry and y may be PyTrees of tensors (tuples, lists, dicts; y may
be None). fn is traced once, so the graph does not grow with the length, and the loop
compiles once whatever the length.

Gradients: when grad is enabled and init, xs or the tensors fn reads from outside (a
module's parameters) require grad, the result is differentiable. The forward loop keeps
the carry of every step; the backward loop runs over the steps in reverse, recomputing
each step's fn from its saved carry and differentiating it (the memory of the carries
alone, as if each step were checkpointed). A tensor fn reads from outside that requires
grad but is not a leaf (computed from parameters outside fn) is not supported: compute
it inside fn, or pass it in the carry or xs. Random ops in fn draw new numbers in every
step; the forward loop also keeps the random number state each step started from, and
the backward pass recomputes each step with the numbers it drew (dropout's gradient
follows the forward's mask).
"""
import dataclasses
from typing import Any, Callable

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from torch_xla._extension import xlac as _xlac
from torch_xla.experimental._device_loop import _tracing, device_loop


def scan(fn: Callable, init: Any, xs: Any, partition_fn=None, is_fn_pure: bool = False):
  """Applies `fn(carry, x) -> (new_carry, y)` over the leading dimension of `xs`.

  Returns `(final_carry, ys)`, ys the stack of the y's along a new leading dimension
  (a PyTree of the y's structure). `partition_fn` and `is_fn_pure` are accepted for
  compatibility and change nothing: the backward pass always recomputes fn from the
  saved carries, and fn is traced at each call.
  """
  if not callable(fn):
    raise ValueError(f'scan: `fn` {fn!r} must be callable')
  init_leaves, init_spec = tree_flatten(init)
  xs_leaves, xs_spec = tree_flatten(xs)
  if not xs_leaves:
    raise ValueError(f'scan: `xs` {xs!r} is an empty PyTree')
  for leaf in init_leaves + xs_leaves:
    if not isinstance(leaf, torch.Tensor):
      raise ValueError(f'scan: the leaves of init and xs must be tensors, got a {type(leaf).__name__}')
  length = xs_leaves[0].shape[0] if xs_leaves[0].dim() > 0 else None
  for leaf in xs_leaves:
    if leaf.dim() == 0 or leaf.shape[0] != length:
      raise ValueError('scan: the leaves of the `xs` PyTree must have the same leading dimension size, got '
                       f'{[tuple(l.shape) for l in xs_leaves]}')
  plan = _trace_once(fn, init_leaves, init_spec, xs_leaves, xs_spec, length)
  differentiable = torch.is_grad_enabled() and (
      plan.params or any(t.requires_grad for t in init_leaves + xs_leaves))
  if differentiable:
    outputs = _Scan.apply(plan, *init_leaves, *xs_leaves, *plan.params)
  else:
    with torch.no_grad():
      outputs = _forward_loop(plan, init_leaves, xs_leaves, keep_carries=False)[:plan.num_carry + plan.num_y]
  carry = tree_unflatten(list(outputs[:plan.num_carry]), init_spec)
  ys = _unflatten_with_nones(list(outputs[plan.num_carry:]), plan.y_spec, plan.y_nones)
  return carry, ys


@dataclasses.dataclass
class _Plan:
  """What one trace of fn tells: the structures, the y's shapes, and the tensors fn reads
  from outside that require grad."""
  fn: Callable
  init_spec: Any
  xs_spec: Any
  y_spec: Any
  length: int
  num_carry: int
  num_xs: int
  num_y: int
  y_meta: list  # (shape, dtype) per y leaf
  params: list
  y_nones: list = dataclasses.field(default_factory=list)  # positions of None leaves in y
  draws_random: bool = False  # fn draws random numbers


def _flatten_without_nones(tree):
  """The tensor leaves of a PyTree whose leaves may be None, the spec, and where the
  Nones are."""
  leaves, spec = tree_flatten(tree)
  nones = [i for i, leaf in enumerate(leaves) if leaf is None]
  return [leaf for leaf in leaves if leaf is not None], spec, nones


def _unflatten_with_nones(leaves, spec, nones):
  leaves = list(leaves)
  for i in nones:
    leaves.insert(i, None)
  return tree_unflatten(leaves, spec)


def _step(plan, carry_leaves, x_leaves):
  """fn on flat leaves: (new carry leaves, y leaves)."""
  out = plan.fn(tree_unflatten(list(carry_leaves), plan.init_spec), tree_unflatten(list(x_leaves), plan.xs_spec))
  if not isinstance(out, (tuple, list)) or len(out) != 2:
    raise ValueError(f'scan: fn must return a pair (new_carry, y), got {type(out).__name__}')
  new_carry, y = out
  carry_leaves, carry_spec = tree_flatten(new_carry)
  if carry_spec != plan.init_spec:
    raise ValueError(f'scan: fn returns a carry of structure {carry_spec}, init has {plan.init_spec}')
  y_leaves, y_spec, y_nones = _flatten_without_nones(y)
  for leaf in carry_leaves + y_leaves:
    if not isinstance(leaf, torch.Tensor):
      raise ValueError(f'scan: fn must return tensors (or None in y), got a {type(leaf).__name__}')
  return carry_leaves, y_leaves, (y_spec, y_nones)


def _sequence_number_now():
  # Autograd numbers the nodes it makes in order: a node made before fn ran is older.
  return torch.ones((), requires_grad=True).mul(1).grad_fn._sequence_nr()


def _outside_params(outputs, stand_ins, fn_start):
  """The leaf tensors requiring grad that outputs were computed from, besides stand_ins."""
  own = {id(t) for t in stand_ins}
  params, seen_params, seen, stack = [], set(), set(), []
  for o in outputs:
    if o.grad_fn is not None:
      stack.append(o.grad_fn)
    elif o.requires_grad and id(o) not in own and id(o) not in seen_params:
      seen_params.add(id(o))
      params.append(o)
  while stack:
    node = stack.pop()
    if node in seen:
      continue
    seen.add(node)
    variable = getattr(node, 'variable', None)
    if variable is not None:  # AccumulateGrad: a leaf
      if id(variable) not in own and id(variable) not in seen_params:
        seen_params.add(id(variable))
        params.append(variable)
      continue
    if node._sequence_nr() < fn_start:
      raise ValueError(f'scan: fn reads a tensor that requires grad and was computed outside fn (by {node.name()}); '
                       'compute it inside fn, or pass it in the carry or xs')
    stack.extend(n for n, _ in node.next_functions if n is not None)
  return params


def _trace_once(fn, init_leaves, init_spec, xs_leaves, xs_spec, length):
  """Runs fn once on stand-ins (recording IR that is dropped) for the structure and
  shapes of its results and the parameters it reads."""
  grad_enabled = torch.is_grad_enabled()
  with _tracing():
    slices = [x.new_zeros(x.shape[1:]) for x in xs_leaves]
    trace = _xlac()._LoopTrace(list(init_leaves) + slices, 'scan')
    try:
      stand_ins = trace.begin_function()
      device = stand_ins[0].device
      rng_before = _xlac()._xla_get_tensor_id(_rng_state(device))
      with torch.set_grad_enabled(grad_enabled):
        for t in stand_ins if grad_enabled else ():
          if t.is_floating_point() or t.is_complex():
            t.requires_grad_()
        fn_start = _sequence_number_now() if grad_enabled else None
        plan = _Plan(fn, init_spec, xs_spec, None, length, len(init_leaves), len(xs_leaves), 0, [], [])
        carry_leaves, y_leaves, (plan.y_spec, plan.y_nones) = _step(plan, stand_ins[:len(init_leaves)],
                                                                    stand_ins[len(init_leaves):])
        for c, i in zip(carry_leaves, init_leaves):
          if c.shape != i.shape or c.dtype != i.dtype:
            raise ValueError(f'scan: fn returns a carry leaf of {c.dtype} {tuple(c.shape)} for init\'s '
                             f'{i.dtype} {tuple(i.shape)}; the carry must keep its shapes and dtypes')
        plan.draws_random = _xlac()._xla_get_tensor_id(_rng_state(device)) != rng_before
        plan.num_y = len(y_leaves)
        plan.y_meta = [(tuple(y.shape), y.dtype) for y in y_leaves]
        if grad_enabled:
          plan.params = _outside_params(carry_leaves + y_leaves, stand_ins, fn_start)
    finally:
      trace.abort()
  return plan


def _rng_state(device):
  return _xlac()._xla_rng_state_tensor(device.index or 0)


def _slice(tensors, index):
  """Row `index` (an s64 scalar tensor) of each tensor."""
  return [t.index_select(0, index).squeeze(0) for t in tensors]


def _forward_loop(plan, init_leaves, xs_leaves, keep_carries):
  """(final carry..., ys..., and with keep_carries what the backward pass recomputes each
  step from: the carry before each step..., and the random number state each step
  started from when fn draws random numbers)."""
  device = xs_leaves[0].device
  n = plan.length
  with _tracing():
    start = torch.zeros((), dtype=torch.int64, device=device)
    ys = [torch.zeros((n,) + shape, dtype=dtype, device=device) for shape, dtype in plan.y_meta]
    carries = [torch.zeros((n,) + tuple(t.shape), dtype=t.dtype, device=device) for t in init_leaves] if keep_carries else []
    if keep_carries and plan.draws_random:
      state = _rng_state(device)
      carries.append(torch.zeros((n,) + tuple(state.shape), dtype=state.dtype, device=device))
  nc, ny = plan.num_carry, plan.num_y

  def cond_fn(i, *rest):
    return i < n

  def body_fn(i, *rest):
    carry, ys, kept = rest[:nc], rest[nc:nc + ny], rest[nc + ny:]
    index = i.reshape(1)
    if kept and plan.draws_random:
      carry_and_state = list(carry) + [_rng_state(device)]
    else:
      carry_and_state = carry
    new_carry, y, _ = _step(plan, carry, _slice(xs_leaves, index))
    ys = [buf.index_copy(0, index, v.unsqueeze(0)) for buf, v in zip(ys, y)]
    kept = [buf.index_copy(0, index, c.unsqueeze(0)) for buf, c in zip(kept, carry_and_state)]
    return (i + 1, *new_carry, *ys, *kept)

  out = device_loop(cond_fn, body_fn, (start, *init_leaves, *ys, *carries), 'scan')
  return out[1:]


def _backward_loop(plan, carries, xs_leaves, params, grad_carry, grad_ys):
  """The gradients of init, xs and params, over the steps in reverse."""
  device = xs_leaves[0].device
  n = plan.length
  with _tracing():
    start = torch.zeros((), dtype=torch.int64, device=device)
    grad_xs = [torch.zeros_like(x) for x in xs_leaves]
    grad_params = [torch.zeros_like(p) for p in params]
  nc, nx = plan.num_carry, plan.num_xs

  def differentiable(t):
    return t.is_floating_point() or t.is_complex()

  def cond_fn(j, *rest):
    return j < n

  def body_fn(j, *rest):
    g_carry, g_xs, g_params = rest[:nc], rest[nc:nc + nx], rest[nc + nx:]
    index = ((n - 1) - j).reshape(1)
    kept = _slice(carries, index)
    if plan.draws_random:
      # The step draws the numbers it drew in the forward loop.
      step_state = kept.pop()
      loop_state = _rng_state(device)
      _xlac()._xla_set_rng_state_tensor(step_state)
    carry_in = [c.detach().requires_grad_(differentiable(c)) for c in kept]
    x_in = [x.detach().requires_grad_(differentiable(x)) for x in _slice(xs_leaves, index)]
    g_y = _slice(grad_ys, index)
    with torch.enable_grad():
      new_carry, y, _ = _step(plan, carry_in, x_in)
      pairs = [(o, g) for o, g in zip(new_carry + y, list(g_carry) + g_y) if o.requires_grad]
      wrt = [t for t in carry_in + x_in if t.requires_grad] + list(params)
      if pairs and wrt:
        grads = torch.autograd.grad([o for o, _ in pairs], wrt, [g for _, g in pairs], allow_unused=True)
      else:
        grads = [None] * len(wrt)
    if plan.draws_random:
      _xlac()._xla_set_rng_state_tensor(loop_state)
    grad_of = {id(t): g for t, g in zip(wrt, grads)}

    def grad(t, like):
      g = grad_of.get(id(t))
      return torch.zeros_like(like) if g is None else g.to(like.dtype)

    new_g_carry = [grad(c, g) for c, g in zip(carry_in, g_carry)]
    new_g_xs = [buf.index_copy(0, index, grad(x, x).unsqueeze(0)) for buf, x in zip(g_xs, x_in)]
    new_g_params = [acc + grad(p, p) for acc, p in zip(g_params, params)]
    return (j + 1, *new_g_carry, *new_g_xs, *new_g_params)

  out = device_loop(cond_fn, body_fn, (start, *grad_carry, *grad_xs, *grad_params), 'scan (backward)')
  return out[1:]


class _Scan(torch.autograd.Function):

  @staticmethod
  def forward(ctx, plan, *tensors):
    nc, nx = plan.num_carry, plan.num_xs
    init, xs, params = tensors[:nc], tensors[nc:nc + nx], tensors[nc + nx:]
    out = _forward_loop(plan, init, xs, keep_carries=True)
    ctx.plan = plan
    ctx.xs = xs
    ctx.params = params
    ctx.carries = out[nc + plan.num_y:]
    ctx.init_meta = [(t.shape, t.dtype, t.device) for t in init]
    return tuple(out[:nc + plan.num_y])

  @staticmethod
  def backward(ctx, *grads):
    plan = ctx.plan
    nc = plan.num_carry
    device = ctx.xs[0].device
    grad_carry = [g if g is not None else torch.zeros(shape, dtype=dtype, device=dev)
                  for g, (shape, dtype, dev) in zip(grads[:nc], ctx.init_meta)]
    grad_ys = [g if g is not None else torch.zeros((plan.length,) + shape, dtype=dtype, device=device)
               for g, (shape, dtype) in zip(grads[nc:], plan.y_meta)]
    out = _backward_loop(plan, ctx.carries, ctx.xs, ctx.params, grad_carry, grad_ys)
    inputs_grads = [g if needed else None for g, needed in zip(out, ctx.needs_input_grad[1:])]
    return (None, *inputs_grads)
