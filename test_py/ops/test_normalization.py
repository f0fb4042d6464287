"""Batch norm, layer norm and group norm on the XLA device against eager CPU: outputs,
saved statistics, running statistics, the gradients of the input, weight and bias,
float32, bfloat16 (with float32 parameters) and float64, modules over training steps, no
CPU fallback, and errors that name the op."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from testing.op_testing import (BF16, DEV, F32, FLOATS, assert_same, check, check_grad, ids, lowered, make, to_dev, tol,
                                tol_for)
from testing.counter_cases import floats as _f, grad_case as _grad_case, floats as _x


# ---------------------------------------------------------------------------------
# batch norm


def bn_case(shape, dtype, training, affine, stats, param_dtype=None, momentum=0.1, seed=0):
  x = make(shape, dtype, seed=seed) * 2 + 0.5
  c = shape[1]
  pd = param_dtype or dtype
  w = (torch.rand(c, generator=torch.Generator().manual_seed(seed + 1)) + 0.5).to(pd) if affine else None
  b = make((c,), pd, seed=seed + 2) if affine else None
  rm = make((c,), pd, seed=seed + 3) if stats else None
  rv = (torch.rand(c, generator=torch.Generator().manual_seed(seed + 4)) + 0.5).to(pd) if stats else None
  return x, w, b, rm, rv


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('shape', [(4, 3, 5, 5), (6, 4), (3, 2, 7), (2, 3, 2, 3, 2)], ids=str)
@pytest.mark.parametrize('training,stats', [(True, True), (True, False), (False, True)],
                         ids=['train', 'train-nostats', 'eval'])
@pytest.mark.parametrize('affine', [True, False])
def test_batch_norm(shape, dtype, training, stats, affine):
  x, w, b, rm, rv = bn_case(shape, dtype, training, affine, stats)
  rm_x = None if rm is None else rm.to(DEV)
  rv_x = None if rv is None else rv.to(DEV)

  def fn(dev_stats):
    return lambda a, ww, bb: F.batch_norm(a, dev_stats[0], dev_stats[1], ww, bb, training=training, momentum=0.2,
                                          eps=1e-3)

  grad_idx = [0, 1, 2] if affine else [0]
  # run_grad runs the CPU pass first with the CPU stats, then the device pass.
  results = {}
  cpu_stats = [None if rm is None else rm.clone(), None if rv is None else rv.clone()]
  dev_stats = [rm_x, rv_x]
  for device, st in (('cpu', cpu_stats), (DEV, dev_stats)):
    xs = [t if t is None else t.to(device).detach().requires_grad_(i in grad_idx) for i, t in enumerate((x, w, b))]
    if device == 'cpu':
      out = fn(st)(*xs)
      g = make(out.shape, out.dtype, seed=9)
      out.backward(g)
    else:
      with lowered('native_batch_norm', 'native_batch_norm_backward'):
        out = fn(st)(*xs)
        out.backward(g.to(DEV))
        xm.mark_step()
    results[device if device == 'cpu' else 'xla'] = (out, [xs[i].grad for i in grad_idx])
  out_c, grads_c = results['cpu']
  out_x, grads_x = results['xla']
  t = tol(dtype)
  atol = 5e-2 if dtype == torch.bfloat16 else 1e-4
  assert_same(out_x, out_c, rtol=t['rtol'], atol=atol)
  for gx, gc in zip(grads_x, grads_c):
    assert_same(gx, gc, rtol=t['rtol'], atol=atol * 4)
  if stats:
    assert_same(dev_stats[0], cpu_stats[0], atol=atol)
    assert_same(dev_stats[1], cpu_stats[1], atol=atol)


@pytest.mark.parametrize('training', [True, False])
def test_batch_norm_mixed_bf16_input_f32_params(training):
  x, w, b, rm, rv = bn_case((4, 3, 4, 4), torch.bfloat16, training, True, True, param_dtype=torch.float32)
  fn = lambda a, ww, bb, m, v: torch.ops.aten.native_batch_norm(a, ww, bb, m, v, training, 0.1, 1e-5)
  expected = fn(x, w, b, rm.clone(), rv.clone())
  with lowered('native_batch_norm'):
    actual = fn(*[t.to(DEV) for t in (x, w, b, rm, rv)])
  for a, e in zip(actual, expected):
    assert_same(a, e, atol=5e-2)


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
def test_native_batch_norm_legit_forms(dtype):
  """The batch norms of AOTAutograd's decompositions (torch.compile): with running stats
  updated in place, without stats, and in evaluation mode."""
  atol = 5e-2 if dtype == torch.bfloat16 else 1e-4
  x, w, b, rm, rv = bn_case((4, 3, 5, 5), dtype, True, True, True)
  aten = torch.ops.aten
  for training in (True, False):
    rm_c, rv_c, rm_x, rv_x = rm.clone(), rv.clone(), rm.to(DEV), rv.to(DEV)
    expected = aten._native_batch_norm_legit(x, w, b, rm_c, rv_c, training, 0.2, 1e-5)
    with lowered('native_batch_norm'):
      actual = aten._native_batch_norm_legit(x.to(DEV), w.to(DEV), b.to(DEV), rm_x, rv_x, training, 0.2, 1e-5)
    assert_same(actual[0], expected[0], atol=atol)
    if training:
      for a, e in zip(actual[1:], expected[1:]):
        assert_same(a, e, atol=atol)
    assert_same(rm_x, rm_c, atol=atol)
    assert_same(rv_x, rv_c, atol=atol)
  expected = aten._native_batch_norm_legit(x, w, b, True, 0.1, 1e-5)
  with lowered('native_batch_norm'):
    actual = aten._native_batch_norm_legit(x.to(DEV), w.to(DEV), b.to(DEV), True, 0.1, 1e-5)
  for a, e in zip(actual, expected):
    assert_same(a, e, atol=atol)
  expected = aten._native_batch_norm_legit_no_training(x, w, b, rm, rv, 0.1, 1e-5)
  with lowered('native_batch_norm'):
    actual = aten._native_batch_norm_legit_no_training(x.to(DEV), w.to(DEV), b.to(DEV), rm.to(DEV), rv.to(DEV), 0.1,
                                                       1e-5)
  assert_same(actual[0], expected[0], atol=atol)


def test_batch_norm_module_training_steps_running_stats():
  """A BatchNorm2d module trained for a few steps: running stats, num_batches_tracked,
  parameters and outputs match eager."""
  torch.manual_seed(0)
  cpu = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU())
  dev = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU())
  dev.load_state_dict(cpu.state_dict())
  dev.to(DEV)
  opt_c = torch.optim.SGD(cpu.parameters(), lr=0.1)
  opt_x = torch.optim.SGD(dev.parameters(), lr=0.1)
  for step in range(4):
    x = make((8, 2, 6, 6), torch.float32, seed=step)
    for model, opt, inp in ((cpu, opt_c, x), (dev, opt_x, x.to(DEV))):
      opt.zero_grad()
      loss = model(inp).square().mean()
      loss.backward()
      opt.step()
    xm.mark_step()
  sc, sx = cpu.state_dict(), dev.state_dict()
  for k in sc:
    assert_same(sx[k], sc[k], atol=1e-4, rtol=1e-4)
  # eval mode uses the running stats
  cpu.eval()
  dev.eval()
  x = make((3, 2, 6, 6), torch.float32, seed=11)
  with lowered('native_batch_norm'):
    out = dev(x.to(DEV))
  assert_same(out, cpu(x), atol=1e-4, rtol=1e-4)


def test_batch_norm_cumulative_average_no_recompile():
  """momentum=None: the averaging factor changes every step; running stats match eager
  and the steady state does not recompile."""
  import torch_xla.debug.metrics as met
  bn_c = torch.nn.BatchNorm2d(3, momentum=None)
  bn_x = torch.nn.BatchNorm2d(3, momentum=None).to(DEV)
  compiles = []
  for step in range(4):
    x = make((4, 3, 5, 5), torch.float32, seed=step)
    bn_c(x)
    bn_x(x.to(DEV))
    xm.mark_step()
    compiles.append(met.counter_value('UncachedCompile') or 0)
  assert compiles[-1] == compiles[-2], compiles
  assert_same(bn_x.running_mean, bn_c.running_mean, atol=1e-5)
  assert_same(bn_x.running_var, bn_c.running_var, atol=1e-5)
  assert_same(bn_x.num_batches_tracked, bn_c.num_batches_tracked)


def test_batch_norm_track_running_stats_false():
  bn_c = torch.nn.BatchNorm2d(3, track_running_stats=False)
  bn_x = torch.nn.BatchNorm2d(3, track_running_stats=False).to(DEV)
  x = make((4, 3, 5, 5), torch.float32)
  for m in (bn_c, bn_x):
    m.eval()
  with lowered('native_batch_norm'):
    out = bn_x(x.to(DEV))
  assert_same(out, bn_c(x), atol=1e-5)


def test_batch_norm_errors():
  x = torch.randn(4, 3, 5, device=DEV)
  with pytest.raises(Exception, match='native_batch_norm.*weight'):
    torch.ops.aten.native_batch_norm(x, torch.ones(4, device=DEV), None, None, None, True, 0.1, 1e-5)
  with pytest.raises(Exception, match='native_batch_norm.*evaluation mode'):
    torch.ops.aten.native_batch_norm(x, None, None, None, None, False, 0.1, 1e-5)
  with pytest.raises(Exception, match='native_batch_norm'):
    torch.ops.aten.native_batch_norm(torch.ones(4, device=DEV), None, None, None, None, True, 0.1, 1e-5)
  with pytest.raises(Exception, match='native_batch_norm_backward'):
    torch.ops.aten.native_batch_norm_backward(torch.ones(4, 3, 4, device=DEV), x, None, None, None, None, None,
                                              True, 1e-5, [True, False, False])
  assert (x * 2).cpu().shape == (4, 3, 5)


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
def test_batch_norm_with_update(dtype):
  x, w, b = make((4, 3, 2), dtype), make((3,), dtype, seed=1), make((3,), dtype, seed=2)
  rm, rv = make((3,), dtype, seed=3), make((3,), dtype, 'pos', seed=4)

  def fn(x, w, b, rm, rv):
    rm, rv = rm.clone(), rv.clone()
    out, mean, invstd, _ = torch.ops.aten._batch_norm_with_update(x, w, b, rm, rv, 0.1, 1e-5)
    return out, mean, invstd, rm, rv

  check(fn, x, w, b, rm, rv, ops=('_batch_norm_with_update',), **(BF16 if dtype == torch.bfloat16 else {}))


# ---- layer norm --------------------------------------------------------------

@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('affine', ['both', 'weight', 'none'])
@pytest.mark.parametrize('shape,norm', [((4, 16), (16,)), ((2, 3, 8), (8,)), ((2, 3, 4, 5), (4, 5)),
                                        ((6,), (6,))])
def test_layer_norm_forward_and_stats(dtype, affine, shape, norm):
  x = make(shape, dtype) * 3 + 1
  w = make(norm, dtype, seed=1) if affine != 'none' else None
  b = make(norm, dtype, seed=2) if affine == 'both' else None
  fn = lambda x, w, b: torch.native_layer_norm(x, norm, w, b, 1e-5)
  expected = fn(x, w, b)
  with lowered('native_layer_norm'):
    actual = fn(to_dev(x), to_dev(w), to_dev(b))
  for a, e in zip(actual, expected):
    assert_same(a, e, **tol_for(dtype))


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('affine', ['both', 'weight', 'bias', 'none'])
def test_layer_norm_backward(dtype, affine):
  norm = (3, 8)
  x = make((2, 5, 3, 8), dtype) * 2
  w = make(norm, dtype, seed=1) if affine in ('both', 'weight') else None
  b = make(norm, dtype, seed=2) if affine in ('both', 'bias') else None
  inputs = [x] + [t for t in (w, b) if t is not None]

  def fn(x, *params):
    it = iter(params)
    ww = next(it) if w is not None else None
    bb = next(it) if b is not None else None
    return F.layer_norm(x, norm, ww, bb, eps=1e-6)

  check_grad(fn, *inputs, ops=('native_layer_norm', 'native_layer_norm_backward'), **tol_for(dtype, F32))


def test_layer_norm_bf16_input_f32_params_stats_f32():
  x = make((4, 8), torch.bfloat16)
  w, b = make((8,), torch.float32, seed=1), make((8,), torch.float32, seed=2)
  expected = torch.native_layer_norm(x, (8,), w, b, 1e-5)
  with lowered('native_layer_norm'):
    actual = torch.native_layer_norm(to_dev(x), (8,), to_dev(w), to_dev(b), 1e-5)
  for a, e in zip(actual, expected):
    assert_same(a, e, **tol_for(torch.bfloat16))


def test_layer_norm_module_and_empty_batch():
  ln = nn.LayerNorm(16)
  with torch.no_grad():
    ln.weight.copy_(make((16,), torch.float32, seed=3))
    ln.bias.copy_(make((16,), torch.float32, seed=4))
  x = make((3, 7, 16), torch.float32)
  expected = ln(x)
  ln_x = ln.to(DEV)
  with lowered('native_layer_norm'):
    assert_same(ln_x(to_dev(x)), expected, **F32)
  empty = torch.zeros(0, 16)
  with lowered('native_layer_norm'):
    out = ln_x(to_dev(empty))
  assert out.shape == (0, 16)


def test_layer_norm_bad_input_raises():
  x = to_dev(make((4, 6), torch.float32))
  with pytest.raises(RuntimeError, match='native_layer_norm'):
    torch.native_layer_norm(x, (5,), None, None, 1e-5)
  with pytest.raises(RuntimeError, match='native_layer_norm'):
    torch.native_layer_norm(x, (6,), to_dev(torch.ones(5)), None, 1e-5)
  assert (x + 1).cpu().shape == (4, 6)  # the process lives on


# ---- group norm --------------------------------------------------------------

CASES = [
    # (input shape, groups)
    ((4, 6, 5, 5), 3),
    ((2, 8, 7), 4),  # 1-D spatial
    ((3, 4, 2, 3, 4), 2),  # 3-D spatial
    ((2, 6), 6),  # no spatial dims: one channel per group
    ((5, 4, 3, 3), 1),  # one group: layer norm over (C, H, W)
]

TOLERANCES = {
    torch.float32: dict(rtol=1e-4, atol=1e-4),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.bfloat16: dict(rtol=2e-2, atol=5e-2),
}


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('affine', [True, False])
@pytest.mark.parametrize('shape,groups', CASES)
def test_group_norm_forward_backward(shape, groups, dtype, affine):
  x = make(shape, dtype, seed=1)
  params = [make((shape[1],), dtype, seed=2) + 1, make((shape[1],), dtype, seed=3)] if affine else []
  # an upstream gradient that is not constant within groups, so every term of the backward
  # counts. (With one element per group the input gradient is 0 up to eager's rounding,
  # about 1e-4 after rstd = 1/sqrt(eps) scales it; this seed keeps that within tolerance.)
  check_grad(lambda t, *p: F.group_norm(t, groups, *p, eps=1e-5), x, *params, ops=('native_group_norm_backward',),
             seed=4, **TOLERANCES[dtype])


def test_group_norm_backward_output_mask():
  """Only the requested gradients are computed; each equals eager's."""
  x = make((3, 4, 5), torch.float32, seed=5)
  dy = make((3, 4, 5), torch.float32, seed=6)
  w = make((4,), torch.float32, seed=7)
  _, mean, rstd = torch.ops.aten.native_group_norm(x, w, None, 3, 4, 5, 2, 1e-5)
  args = lambda d: [t.to(d) for t in (dy, x, mean, rstd, w)]
  for mask in ([True, False, False], [False, True, True], [True, True, True]):
    expected = torch.ops.aten.native_group_norm_backward(*args('cpu'), 3, 4, 5, 2, mask)
    with lowered('native_group_norm_backward'):
      actual = torch.ops.aten.native_group_norm_backward(*args(DEV), 3, 4, 5, 2, mask)
    for a, e, wanted in zip(actual, expected, mask):
      if wanted:
        assert_same(a, e, rtol=1e-5, atol=1e-5)
      else:
        assert a is None


@pytest.mark.parametrize('groups,stats,weight,match', [
    (3, 6, 4, 'divisible by num_groups'),
    (2, 4, 5, 'weight to be a vector of size equal to the number of channels'),
    (2, 5, 4, 'mean and rstd of N \\* num_groups'),
])
def test_group_norm_backward_bad_input_raises(groups, stats, weight, match):
  x = torch.randn(2, 4, 3, device=DEV)
  mean_rstd = torch.zeros(stats, device=DEV)
  w = torch.ones(weight, device=DEV)
  with pytest.raises(RuntimeError, match='native_group_norm_backward: .*' + match):
    torch.ops.aten.native_group_norm_backward(x, x, mean_rstd, mean_rstd, w, 2, 4, 3, groups, [True, True, True])
  # the process and the device live on
  assert (x + 1).sum().item() == pytest.approx((x.cpu() + 1).sum().item(), rel=1e-5)


# ---- counter cases ------------------------------------------------------------

def _bn_backward_case():
  x = torch.randn(4, 3, 5, device=DEV, requires_grad=True)
  F.batch_norm(x, None, None, training=True).sum().backward()


def _group_norm_backward_case():
  x = torch.randn(2, 4, 3, device=DEV, requires_grad=True)
  F.group_norm(x, 2).sum().backward()
  return x.grad


COUNTER_CASES = {
    'native_batch_norm': (lambda: F.batch_norm(torch.randn(4, 3, 5, device=DEV), torch.zeros(3, device=DEV),
                                               torch.ones(3, device=DEV), training=True), 'native_batch_norm'),
    'native_batch_norm_backward': (_bn_backward_case, 'native_batch_norm_backward'),
    '_native_batch_norm_legit': (lambda: torch.ops.aten._native_batch_norm_legit(
        torch.randn(4, 3, 5, device=DEV), None, None, torch.zeros(3, device=DEV), torch.ones(3, device=DEV), True,
        0.1, 1e-5), 'native_batch_norm'),
    '_native_batch_norm_legit.no_stats': (lambda: torch.ops.aten._native_batch_norm_legit(
        torch.randn(4, 3, 5, device=DEV), None, None, True, 0.1, 1e-5), 'native_batch_norm'),
    '_native_batch_norm_legit_no_training': (lambda: torch.ops.aten._native_batch_norm_legit_no_training(
        torch.randn(4, 3, 5, device=DEV), None, None, torch.zeros(3, device=DEV), torch.ones(3, device=DEV), 0.1,
        1e-5), 'native_batch_norm'),
    '_batch_norm_with_update': (lambda: torch.ops.aten._batch_norm_with_update(
        _f().reshape(4, 3), None, None, torch.zeros(3, device=DEV), torch.ones(3, device=DEV), 0.1, 1e-5),
                                '_batch_norm_with_update'),
    'native_layer_norm': (lambda: F.layer_norm(_x(), (4,)), 'native_layer_norm'),
    'native_layer_norm_backward': (_grad_case(lambda x: F.layer_norm(x, (4,)) * _x(seed=1)),
                                   'native_layer_norm_backward'),
    'native_group_norm_backward': (_group_norm_backward_case, 'native_group_norm_backward'),
}
