"""while_loop and fori_loop on the XLA device, as one device loop (stablehlo.while).

`torch._higher_order_ops.while_loop(cond_fn, body_fn, carried_inputs)` on XLA tensors
runs as a device loop once this module is imported (importing torch_xla does it): the
loop's trip count is decided on the device, without a sync per iteration. Neither loop
is differentiable (their results do not require grad); use scan for loops whose
gradients are needed.
"""
import torch
from torch._C import DispatchKey
from torch._higher_order_ops.while_loop import while_loop_op

from torch_xla.experimental._device_loop import as_tuple, device_loop


def while_loop(cond_fn, body_fn, carried_inputs):
  """`while cond_fn(*carried): carried = body_fn(*carried)` as one device loop.

  cond_fn returns a bool scalar tensor; body_fn returns a tuple with one tensor per
  carried value, of the same shape and dtype. Returns the final carried values (a
  tuple). The functions are traced once, so Python control flow in them must not depend
  on tensor values.
  """
  return device_loop(cond_fn, body_fn, as_tuple(carried_inputs), 'while_loop')


def fori_loop(lower, upper, body_fun, *init_vals):
  """Runs `values = body_fun(*values)` for each index from lower to upper (exclusive)
  as one device loop. lower and upper are Python ints or integer scalar tensors (then
  the trip count is decided on the device). body_fun returns one value per carried
  value (a tuple, or a tensor when there is one). Returns `(upper, *final values)`: the
  loop's index after the last iteration, then the values.
  """
  if not init_vals:
    raise ValueError('fori_loop: no values to carry')
  device = init_vals[0].device
  index = lower if isinstance(lower, torch.Tensor) else torch.tensor(lower, device=device)
  if index.dim() != 0 or index.dtype.is_floating_point or index.dtype == torch.bool:
    raise ValueError(f'fori_loop: lower must be an integer scalar, got {index.dtype} of shape {tuple(index.shape)}')
  index = index.to(device)

  def cond_fn(i, *values):
    return i < upper

  def body_fn(i, *values):
    return (i + 1,) + as_tuple(body_fun(*values))

  return device_loop(cond_fn, body_fn, (index,) + tuple(init_vals), 'fori_loop')


def _is_real_xla_tensor(value):
  return (isinstance(value, torch.Tensor) and value.device.type == 'xla' and
          not isinstance(value, torch._subclasses.fake_tensor.FakeTensor))


# torch.while_loop's own kernels functionalize the loop and trace its functions on fake
# copies of the unwrapped inputs, which XLA tensors (without storage) cannot make. This
# kernel takes the loop first, at XLA's autograd key; fake and traced tensors (inside
# torch.compile) go on to PyTorch's kernels.
_torch_autograd_kernel = while_loop_op.py_kernels[DispatchKey.Autograd]


@while_loop_op.py_impl(DispatchKey.AutogradXLA)
def _while_loop_xla(cond_fn, body_fn, carried_inputs, additional_inputs, *args, **kwargs):
  """torch.while_loop's kernel for XLA tensors: the additional inputs (the values the
  functions read from outside, which PyTorch lifts into arguments) are carried through
  unchanged."""
  carried = tuple(carried_inputs)
  extra = tuple(additional_inputs or ())
  if not all(_is_real_xla_tensor(v) for v in carried + extra if isinstance(v, torch.Tensor)):
    return _torch_autograd_kernel(cond_fn, body_fn, carried_inputs, additional_inputs, *args, **kwargs)
  if torch.is_grad_enabled() and any(isinstance(v, torch.Tensor) and v.requires_grad for v in carried + extra):
    raise NotImplementedError('torch.while_loop on XLA tensors is not differentiable; use '
                              'torch_xla.experimental.scan.scan for loops whose gradients are needed, or run the '
                              'loop under torch.no_grad()')
  n = len(carried)
  # Extra tensors are carried through unchanged; other extra inputs (Python numbers that
  # torch.compile lifted) are the same in every iteration, and passed as they are.
  extra_tensors = [v for v in extra if isinstance(v, torch.Tensor)]

  def arguments(values):
    tensors = iter(values[n:])
    return values[:n] + tuple(next(tensors) if isinstance(v, torch.Tensor) else v for v in extra)

  def cond(*values):
    return cond_fn(*arguments(values))

  def body(*values):
    return as_tuple(body_fn(*arguments(values))) + values[n:]

  return device_loop(cond, body, carried + tuple(extra_tensors), 'while_loop')[:n]
