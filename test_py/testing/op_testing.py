"""Shared helpers of the op tests: deterministic inputs, comparison of a device result
with the eager CPU result, and the counter checks (xla::<op> grew, no aten::<op> CPU
fallback ran).

Every test file with lowered ops defines COUNTER_CASES: yaml entry -> (code that uses
the entry on the device, counter name without "xla::"); ops/test_op_coverage.py checks that
every entry of cpp/aten/xla_native_functions.yaml has a case.
"""

import contextlib

import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

DEV = xm.xla_device()

F32 = dict(rtol=1.3e-6 * 4, atol=1e-5)
BF16 = dict(rtol=1.6e-2, atol=1e-2)
EXACT = dict(rtol=0, atol=0)


def tol(dtype):
  if dtype == torch.bfloat16:
    return BF16
  if dtype in (torch.float32, torch.float64):
    return F32
  return EXACT


def make(shape, dtype, kind='any', seed=0):
  """A deterministic CPU tensor: kind 'any' (signed), 'pos' (> 0), 'nonzero'."""
  g = torch.Generator().manual_seed(seed)
  if dtype == torch.bool:
    return torch.randint(0, 2, shape, generator=g).bool()
  if dtype.is_floating_point:
    t = torch.randn(shape, generator=g)
    if kind == 'pos':
      t = t.abs() + 0.1
    elif kind == 'nonzero':
      t = torch.where(t.abs() < 0.1, torch.full_like(t, 0.5), t)
    return t.to(dtype)
  lo = 1 if kind == 'pos' else -5
  t = torch.randint(lo, 6, shape, generator=g)
  if kind == 'nonzero':
    t = torch.where(t == 0, torch.full_like(t, 3), t)
  return t.to(dtype)


def to_dev(x):
  return x.to(DEV) if isinstance(x, torch.Tensor) else x


def assert_same(actual, expected, rtol=None, atol=None):
  """actual (XLA) equals expected (CPU) in device, dtype, shape and value."""
  if isinstance(expected, (tuple, list)):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
      assert_same(a, e, rtol, atol)
    return
  assert isinstance(actual, torch.Tensor)
  assert actual.device.type == 'xla', actual.device
  assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
  assert actual.shape == expected.shape, (actual.shape, expected.shape)
  t = tol(expected.dtype)
  rtol = t['rtol'] if rtol is None else rtol
  atol = t['atol'] if atol is None else atol
  torch.testing.assert_close(actual.cpu(), expected, rtol=rtol, atol=atol, equal_nan=True)


def is_op_fallback(counter_name):
  """Whether a counter counts an op that ran on the CPU fallback; a value read back by
  item() (aten::_local_scalar_dense, which reports count as a fallback) is not one."""
  return counter_name.startswith('aten::') and counter_name != 'aten::_local_scalar_dense'


def fallbacks():
  return sorted(n for n in met.counter_names() if is_op_fallback(n))


def counter(name):
  return met.counter_value(name) or 0


@contextlib.contextmanager
def lowered(*ops, allow=()):
  """Checks that the body bumped xla::<op> for each op and ran no CPU fallback."""
  met.clear_counters()
  yield
  for op in ops:
    assert counter('xla::' + op) > 0, f'xla::{op} not counted; counters: {met.counter_names()}'
  bad = [n for n in fallbacks() if n not in {'aten::' + a for a in allow}]
  assert not bad, f'CPU fallbacks: {bad}'


def check(fn, *inputs, ops=(), rtol=None, atol=None, allow=(), any_fallback=False):
  """fn(*inputs) on the CPU vs fn(*inputs moved to the device)."""
  expected = fn(*inputs)
  dev_inputs = [to_dev(x) for x in inputs]
  if any_fallback:
    actual = fn(*dev_inputs)
  else:
    with lowered(*ops, allow=allow):
      actual = fn(*dev_inputs)
  assert_same(actual, expected, rtol, atol)
  return actual


def _output_and_grads(fn, inputs, seed=7):
  """fn(*inputs) and the grads of its floating inputs for a fixed, non-uniform upstream
  gradient."""
  leaves = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in inputs]
  out = fn(*leaves)
  g = make(tuple(out.shape), out.dtype, seed=seed).to(out.device)
  out.backward(g)
  return out, [x.grad for x in leaves if x.requires_grad]


def check_grad(fn, *inputs, ops=(), allow=(), rtol=None, atol=None, seed=7):
  """fn(*inputs) and the gradients of its floating inputs, on the CPU vs on the device
  (the device pass must bump xla::<op> for each op and run no CPU fallback). `seed`
  picks the upstream gradient."""
  out_c, grads_c = _output_and_grads(fn, inputs, seed)
  with lowered(*ops, allow=allow):
    out_x, grads_x = _output_and_grads(fn, [to_dev(x) for x in inputs], seed)
    xm.mark_step()
  assert_same(out_x, out_c, rtol, atol)
  assert len(grads_x) == len(grads_c)
  for gx, gc in zip(grads_x, grads_c):
    assert_same(gx, gc, rtol, atol)


def run_grad(fn, x, ops=(), seed=1, rtol=None, atol=None):
  """fn(x) forward and backward on the CPU and on the device (which must bump xla::<op>
  for each op and run no CPU fallback); compares every output and x's gradient (the
  upstream gradient flows into the first output)."""
  xc = x.clone().requires_grad_(True)
  out_c = fn(xc)
  outs_c = out_c if isinstance(out_c, tuple) else (out_c,)
  g = make(outs_c[0].shape, outs_c[0].dtype, seed=seed)
  outs_c[0].backward(g)
  xx = x.to(DEV).requires_grad_(True)
  with lowered(*ops):
    out_x = fn(xx)
    outs_x = out_x if isinstance(out_x, tuple) else (out_x,)
    outs_x[0].backward(g.to(DEV))
    xm.mark_step()
  for a, e in zip(outs_x, outs_c):
    assert_same(a, e.detach(), rtol=rtol, atol=atol)
  assert_same(xx.grad, xc.grad, rtol=rtol, atol=atol)


def run_grads(fn, inputs, grad_idx, ops=(), allow=(), seed=1):
  """fn(*inputs) forward and backward on CPU and device; compares outputs and the
  gradients of inputs[i] for i in grad_idx."""
  results = []
  for device in ('cpu', DEV):
    xs = []
    for i, x in enumerate(inputs):
      if isinstance(x, torch.Tensor):
        x = x.to(device)
        if i in grad_idx:
          x = x.detach().requires_grad_(True)
      xs.append(x)
    if device == 'cpu':
      out = fn(*xs)
      g = make(out.shape, out.dtype, seed=seed)
      out.backward(g)
    else:
      with lowered(*ops, allow=allow):
        out = fn(*xs)
        out.backward(g.to(DEV))
        xm.mark_step()
    results.append((out, [xs[i].grad for i in grad_idx]))
  (out_c, grads_c), (out_x, grads_x) = results
  assert_same(out_x, out_c)
  for gx, gc in zip(grads_x, grads_c):
    assert_same(gx, gc)


def grads(fn, *inputs, dtype=torch.float32, seed=3):
  """Input grads of fn(*inputs) on the CPU and on the device (upstream: a fixed random grad)."""
  out = []
  for dev in ('cpu', DEV):
    xs = [x.to(dev).detach().requires_grad_(x.is_floating_point()) if isinstance(x, torch.Tensor) else x
          for x in inputs]
    y = fn(*xs)
    y = y[0] if isinstance(y, tuple) else y
    g = make(tuple(y.shape), y.dtype, seed=seed).to(dev)
    y.backward(g)
    out.append([x.grad for x in xs if isinstance(x, torch.Tensor) and x.requires_grad])
  return out


def check_grads(fn, *inputs, rtol=None, atol=None, allow=()):
  """The input grads of fn(*inputs) (see grads) on the device equal the CPU's, and the
  device pass ran no CPU fallback."""
  met.clear_counters()
  cpu, dev = grads(fn, *inputs)
  xm.mark_step()
  bad = [n for n in fallbacks() if n not in {'aten::' + a for a in allow}]
  assert not bad, f'CPU fallbacks in backward: {bad}'
  assert len(cpu) == len(dev)
  for c, d in zip(cpu, dev):
    assert_same(d, c, rtol, atol)


def tol_for(dtype, f32=None):
  """Tolerances: loose for bfloat16, else `f32` (by default 1e-5)."""
  if dtype == torch.bfloat16:
    return dict(rtol=2e-2, atol=2e-2)
  return f32 or dict(rtol=1e-5, atol=1e-5)


FLOATS = [torch.float32, torch.bfloat16]
INTS = [torch.int32, torch.int64]
ALL = FLOATS + INTS
ids = lambda d: str(d).replace('torch.', '')
