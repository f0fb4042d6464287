"""log_softmax, nll_loss / nll_loss2d / cross_entropy and batch norm on the XLA device
against eager CPU: values, dtypes, shapes, input gradients, running statistics, no CPU
fallback, and errors that name the op."""
import pytest
import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm

from op_testing import DEV, FLOATS, assert_same, check, ids, lowered, make, tol


def run_grad(fn, inputs, grad_idx, ops=(), allow=(), seed=1):
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


# ---------------------------------------------------------------------------------
# log_softmax


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('shape,dim', [((4, 10), 1), ((4, 10), 0), ((2, 3, 5), -1), ((2, 3, 5), 1), ((7,), 0),
                                       ((), 0), ((0, 3), 1)])
def test_log_softmax(shape, dim, dtype):
  x = make(shape, dtype)
  check(lambda t: F.log_softmax(t, dim), x, ops=['_log_softmax'])
  if x.numel():
    run_grad(lambda t: F.log_softmax(t, dim), [x], [0], ops=['_log_softmax', '_log_softmax_backward_data'])


def test_log_softmax_large_values_stable():
  x = torch.tensor([[1000., 0., -1000.], [88., 89., 90.]])
  out = check(lambda t: F.log_softmax(t, 1), x, ops=['_log_softmax'])
  assert torch.isfinite(out.cpu()).all()


def test_log_softmax_dtype_arg():
  x = make((3, 4), torch.bfloat16)
  check(lambda t: F.log_softmax(t, 1, dtype=torch.float32), x, ops=['_log_softmax'])


def test_log_softmax_errors():
  with pytest.raises(Exception, match='log_softmax'):
    torch.ops.aten._log_softmax(torch.ones(3, dtype=torch.long, device=DEV), 0, False)
  with pytest.raises(Exception, match='log_softmax|out of range'):
    F.log_softmax(torch.ones(3, 4, device=DEV), 2)
  with pytest.raises(Exception, match='log_softmax_backward'):
    torch.ops.aten._log_softmax_backward_data(torch.ones(3, device=DEV), torch.ones(4, device=DEV), 0, torch.float)


# ---------------------------------------------------------------------------------
# nll_loss, cross_entropy


def nll_inputs(shape, classes, dtype, ignore=None, seed=0):
  x = F.log_softmax(make(shape, torch.float32, seed=seed), 1 if len(shape) > 1 else 0).to(dtype)
  tshape = (shape[0],) + tuple(shape[2:]) if len(shape) > 1 else ()
  t = torch.randint(0, classes, tshape, generator=torch.Generator().manual_seed(seed + 1))
  if ignore is not None and t.dim() > 0:
    t.view(-1)[::3] = ignore
  return x, t


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('reduction', ['none', 'mean', 'sum'])
@pytest.mark.parametrize('weighted', [False, True])
@pytest.mark.parametrize('ignore', [None, 2, -100])
def test_nll_loss_2d_input(dtype, reduction, weighted, ignore):
  x, t = nll_inputs((6, 5), 5, dtype, ignore=ignore)
  w = (torch.rand(5, generator=torch.Generator().manual_seed(3)) + 0.5).to(dtype) if weighted else None
  kw = dict(reduction=reduction, ignore_index=-100 if ignore is None else ignore)
  op = 'nll_loss_forward'
  run_grad(lambda a, b, c: F.nll_loss(a, b, weight=c, **kw), [x, t, w], [0],
           ops=[op, 'nll_loss_backward'])


@pytest.mark.parametrize('reduction', ['none', 'mean', 'sum'])
def test_nll_loss_1d_input(reduction):
  x, t = nll_inputs((5,), 5, torch.float32)
  run_grad(lambda a, b: F.nll_loss(a, b, reduction=reduction), [x, t], [0], ops=['nll_loss_forward'])
  out = check(lambda a, b: torch.ops.aten.nll_loss_forward(a, b, None, {'none': 0, 'mean': 1, 'sum': 2}[reduction],
                                                           -100), x, t, ops=['nll_loss_forward'])


def test_nll_loss_total_weight_and_all_ignored():
  x, t = nll_inputs((4, 3), 3, torch.float32)
  for red in (0, 1, 2):
    check(lambda a, b: torch.ops.aten.nll_loss_forward(a, b, None, red, -100), x, t, ops=['nll_loss_forward'])
  t_ign = torch.full((4,), 1)
  # every target ignored: mean is 0/0 = nan, as in eager
  check(lambda a, b: F.nll_loss(a, b, ignore_index=1), x, t_ign, ops=['nll_loss_forward'])


def test_nll_loss_byte_target():
  x, t = nll_inputs((4, 3), 3, torch.float32)
  check(lambda a, b: F.nll_loss(a, b), x, t.to(torch.uint8), ops=['nll_loss_forward'])


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('reduction', ['none', 'mean', 'sum'])
def test_cross_entropy(dtype, reduction):
  x = make((8, 10), dtype)
  t = torch.randint(0, 10, (8,), generator=torch.Generator().manual_seed(5))
  run_grad(lambda a, b: F.cross_entropy(a, b, reduction=reduction), [x, t], [0],
           ops=['_log_softmax', '_log_softmax_backward_data', 'nll_loss_forward', 'nll_loss_backward'])


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('reduction', ['none', 'mean', 'sum'])
@pytest.mark.parametrize('weighted', [False, True])
def test_cross_entropy_spatial(dtype, reduction, weighted):
  x = make((2, 4, 3, 5), dtype)
  t = torch.randint(0, 4, (2, 3, 5), generator=torch.Generator().manual_seed(5))
  t[0, 0, :2] = -100
  w = (torch.rand(4, generator=torch.Generator().manual_seed(3)) + 0.5).to(dtype) if weighted else None
  run_grad(lambda a, b, c: F.cross_entropy(a, b, weight=c, reduction=reduction), [x, t, w], [0],
           ops=['nll_loss2d_forward', 'nll_loss2d_backward'])


def test_nll_loss_errors():
  x = torch.randn(4, 3, device=DEV)
  with pytest.raises(Exception, match='nll_loss.*batch_size'):
    torch.ops.aten.nll_loss_forward(x, torch.zeros(5, dtype=torch.long, device=DEV), None, 1, -100)
  with pytest.raises(Exception, match='nll_loss.*Long'):
    torch.ops.aten.nll_loss_forward(x, torch.zeros(4, dtype=torch.float, device=DEV), None, 1, -100)
  with pytest.raises(Exception, match='nll_loss.*weight'):
    torch.ops.aten.nll_loss_forward(x, torch.zeros(4, dtype=torch.long, device=DEV), torch.ones(2, device=DEV), 1,
                                    -100)
  with pytest.raises(Exception, match='nll_loss2d'):
    torch.ops.aten.nll_loss2d_forward(x, torch.zeros(4, dtype=torch.long, device=DEV), None, 1, -100)
  with pytest.raises(Exception, match='nll_loss_backward'):
    torch.ops.aten.nll_loss_backward(torch.ones(3, device=DEV), x, torch.zeros(4, dtype=torch.long, device=DEV),
                                     None, 0, -100, torch.tensor(0., device=DEV))
  assert (x + 1).cpu().shape == (4, 3)  # the process lives on


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


def _bn_backward_case():
  x = torch.randn(4, 3, 5, device=DEV, requires_grad=True)
  F.batch_norm(x, None, None, training=True).sum().backward()


def _ce_case(spatial, backward):

  def run():
    x = torch.randn(2, 3, 4, 4, device=DEV, requires_grad=True) if spatial else torch.randn(
        4, 3, device=DEV, requires_grad=True)
    t = torch.zeros((2, 4, 4) if spatial else (4,), dtype=torch.long, device=DEV)
    out = F.nll_loss(x, t)
    if backward:
      out.backward()

  return run


def _log_softmax_backward_case():
  x = torch.randn(3, 4, device=DEV, requires_grad=True)
  F.log_softmax(x, 1).sum().backward()


COUNTER_CASES = {
    '_log_softmax': (lambda: F.log_softmax(torch.randn(3, 4, device=DEV), 1), '_log_softmax'),
    '_log_softmax_backward_data': (_log_softmax_backward_case, '_log_softmax_backward_data'),
    'nll_loss_forward': (_ce_case(False, False), 'nll_loss_forward'),
    'nll_loss_backward': (_ce_case(False, True), 'nll_loss_backward'),
    'nll_loss2d_forward': (_ce_case(True, False), 'nll_loss2d_forward'),
    'nll_loss2d_backward': (_ce_case(True, True), 'nll_loss2d_backward'),
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

}
