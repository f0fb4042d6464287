"""Device loops from Python functions: the loop's condition and body run once each, on
stand-ins for the carried values, and the ops they record become one stablehlo.while
that the device runs as often as the condition says (cpp/aten/loops.h). while_loop,
fori_loop and scan are built on it.

What the functions read from outside (weights, tensors made inside with
`torch.tensor(..., device=...)`, Python numbers) is passed into the loop once; random
ops in the body draw new numbers in each iteration. The functions must return their
results: a tensor from outside updated in place inside, or a tensor of the body kept
for later, cannot be computed outside the loop (its use raises), and reading a value
on the host inside (`.item()`, `print`, a Python `if` on a tensor) is not possible.
"""
import contextlib

import torch

from torch_xla._extension import xlac as _xlac


def _keep(tensor):
  return tensor


@contextlib.contextmanager
def _tracing():
  """While a loop's function is traced its ops must record IR, not run: eager mode is
  off inside. The tensors autograd saves there are the trace's own: the caller's
  saved-tensor hooks (a checkpoint's) do not see them."""
  xlac = _xlac()
  saved = xlac._get_use_eager_mode()
  xlac._set_use_eager_mode(False)
  try:
    with torch.autograd.graph.saved_tensors_hooks(_keep, _keep):
      yield
  finally:
    xlac._set_use_eager_mode(saved)


def as_tuple(values):
  if isinstance(values, (tuple, list)):
    return tuple(values)
  return (values,)


def _trace(trace, cond_fn, body_fn, op_name):
  """Runs the condition and the body on the trace's stand-ins. Their tensors stand for
  values inside the loop, so none may outlive this function: no sync may see them."""
  stand_ins = keep_going = results = r = None
  try:
    with _tracing(), torch.no_grad():
      stand_ins = trace.begin_function()
      keep_going = cond_fn(*stand_ins)
      if not isinstance(keep_going, torch.Tensor):
        raise TypeError(f'{op_name}: the condition returns a {type(keep_going).__name__}, not a bool scalar tensor')
      trace.end_function([keep_going], stand_ins)
      stand_ins = trace.begin_function()
      results = as_tuple(body_fn(*stand_ins))
      for i, r in enumerate(results):
        if not isinstance(r, torch.Tensor):
          raise TypeError(f'{op_name}: the body returns a {type(r).__name__} at position {i}, not a tensor')
      trace.end_function(list(results), stand_ins)
  except BaseException:
    # The traceback keeps this frame: it lets go of the loop's tensors here.
    stand_ins = keep_going = results = r = None
    trace.abort()
    raise


def device_loop(cond_fn, body_fn, carried, op_name):
  """`carried = cond_fn(*carried) ? body_fn(*carried) : stop`, as one device loop.

  cond_fn returns a bool scalar tensor; body_fn one tensor per carried value, of its
  shape and dtype. Returns the final carried values as a tuple. Not differentiable:
  scan builds its gradient from loops of its own.
  """
  carried = tuple(carried)
  for i, value in enumerate(carried):
    if not isinstance(value, torch.Tensor):
      raise TypeError(f'{op_name}: carried value {i} is a {type(value).__name__}, not a tensor')
  trace = _xlac()._LoopTrace(list(carried), op_name)
  _trace(trace, cond_fn, body_fn, op_name)
  out = tuple(trace.finish())
  # In eager mode the loop is one op, and runs now.
  _xlac()._xla_sync_if_eager()
  return out
