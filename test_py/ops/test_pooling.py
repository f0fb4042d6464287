"""Pooling on the XLA device against eager CPU: max, avg and adaptive avg / max pooling (1-D
to 3-D, the CPU device's max-pool host kernels), fractional max pooling (2-D, 3-D, with
given samples), max_unpool2d / max_unpool3d, and a ResNet-style block's training steps;
values, indices, dtypes, shapes, input gradients, no CPU fallback, and errors that name
the op."""

import pytest
import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from testing.device_marks import cpu_lowering
from testing.op_testing import DEV, FLOATS, assert_same, check, check_grad, ids, lowered, make, run_grad
from testing.counter_cases import randn_grad_case as _grad_case, randn_input_grad_case as _input_grad_case


MAX_CASES = [
    # (shape, kwargs)
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((2, 3, 9, 7), dict(kernel_size=3, stride=2)),
    ((2, 3, 9, 7), dict(kernel_size=3, stride=2, padding=1)),
    ((1, 2, 10, 11), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0))),
    ((2, 2, 11, 11), dict(kernel_size=3, stride=2, padding=1, dilation=2)),
    ((2, 2, 9, 9), dict(kernel_size=2, stride=2, ceil_mode=True)),
    ((2, 2, 10, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((3, 6, 6), dict(kernel_size=2)),  # unbatched
    ((2, 2, 5, 5), dict(kernel_size=3, stride=1, padding=1)),  # overlapping windows
    ((1, 1, 4, 4), dict(kernel_size=4)),
    ((2, 2, 9, 8), dict(kernel_size=1, stride=2)),  # stride > kernel: untouched rows/columns
    ((2, 2, 10, 11), dict(kernel_size=2, stride=3, ceil_mode=True)),
    ((1, 2, 12, 10), dict(kernel_size=(2, 3), stride=(3, 1), padding=(1, 1), dilation=(3, 1))),
    ((2, 3, 9, 7), dict(kernel_size=2)),  # 2x2 windows, an odd row and column left out
]


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('shape,kw', MAX_CASES, ids=str)
def test_max_pool2d(shape, kw, dtype):
  x = make(shape, dtype)
  fn = lambda t: F.max_pool2d(t, return_indices=True, **kw)
  # Overlapping windows: eager sums bf16 gradients in bf16, we in f32 (a bf16 ulp or two).
  loose = dict(atol=3e-2, rtol=3e-2) if dtype == torch.bfloat16 else {}
  run_grad(fn, x, ops=['max_pool2d_with_indices', 'max_pool2d_with_indices_backward'], **loose)


@pytest.mark.parametrize('dtype', [torch.int64, torch.int32, torch.uint8], ids=ids)
def test_max_pool2d_integer(dtype):
  x = make((2, 3, 7, 7), dtype)
  if dtype == torch.uint8:
    x = torch.randint(0, 255, (2, 3, 7, 7), generator=torch.Generator().manual_seed(0)).to(dtype)
  check(lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True), x, ops=['max_pool2d_with_indices'])
  neg = -torch.arange(16, dtype=torch.int64).reshape(1, 1, 4, 4) - 5
  check(lambda t: F.max_pool2d(t, 2, 1, 1, return_indices=True), neg, ops=['max_pool2d_with_indices'])


def test_max_pool2d_ties_nan_and_inf():
  x = torch.tensor([[[[1., 1., 2., 2.], [1., 1., 2., 2.], [float('nan'), 0., -float('inf'), -float('inf')],
                      [float('nan'), 5., -float('inf'), -float('inf')]]]])
  out = check(lambda t: F.max_pool2d(t, 2, return_indices=True), x, ops=['max_pool2d_with_indices'])
  # padding with an all -inf window: the first in-bounds element's index
  check(lambda t: F.max_pool2d(t, 2, 2, 1, return_indices=True), x, ops=['max_pool2d_with_indices'])


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64], ids=ids)
def test_max_pool2d_two_by_two_ties_and_nans(dtype):
  # 2x2 windows at stride 2 have a kernel of their own (cpp/runtime/max_pool_kernel.cpp):
  # values of three levels tie in most windows (the first in row-major order wins), and
  # NaNs (the last wins) fall anywhere.
  g = torch.Generator().manual_seed(0)
  x = torch.randint(0, 3, (4, 5, 10, 12), generator=g).to(dtype)
  x[torch.rand(x.shape, generator=g) < 0.05] = float('nan')
  check(lambda t: F.max_pool2d(t, 2, return_indices=True), x, ops=['max_pool2d_with_indices'])


def test_max_pool2d_without_indices_and_module():
  x = make((2, 3, 8, 8), torch.float32)
  run_grad(lambda t: F.max_pool2d(t, 2), x, ops=['max_pool2d_with_indices', 'max_pool2d_with_indices_backward'])
  run_grad(torch.nn.MaxPool2d(3, 2, 1), x, ops=['max_pool2d_with_indices'])


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('kw', [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, ceil_mode=True)], ids=str)
def test_max_pool1d(kw, dtype):
  x = make((2, 3, 11), dtype)
  run_grad(lambda t: F.max_pool1d(t, return_indices=True, **kw), x,
           ops=['max_pool2d_with_indices', 'max_pool2d_with_indices_backward'])


@cpu_lowering('the max-pool host kernel')
def test_max_pool2d_backward_computes_indices_and_gradient_once():
    # bfloat16 (the XLA form): both are read once per window position; on the CPU
    # device they go through the pass-through kernel (ir::Materialize), which keeps XLA
    # from recomputing them.
    import torch_xla
    x = torch.randn(4, 3, 8, 8, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    y = F.max_pool2d(x, 2)
    (g,) = torch.autograd.grad((y * y).sum(), x)
    hlo = torch_xla._get_stablehlo([g])
    assert hlo.count('torch_xla_pass_through') == 2, hlo
    assert 'stablehlo.reduce_window' not in hlo
    xc = x.detach().cpu().requires_grad_()
    (gc,) = torch.autograd.grad((F.max_pool2d(xc, 2) ** 2).sum(), xc)
    torch.testing.assert_close(g.cpu(), gc)


# Float32 and float64 max pooling on the CPU device runs host kernels (runtime/
# max_pool_kernel.h): one pass per window for the maxima and indices, a scatter-add for
# the gradient. These shapes are large enough to be split over the compute threads and
# to take the kernel's vectorized path between the rows' edges.
HOST_CASES = [
    ((8, 10, 24, 24), dict(kernel_size=2)),  # MNIST's first pool
    ((4, 16, 32, 32), dict(kernel_size=3, stride=2, padding=1)),  # ResNet's stem pool
    ((2, 16, 33, 35), dict(kernel_size=3, stride=1, padding=1)),  # overlapping, stride 1
    ((2, 16, 40, 41), dict(kernel_size=(2, 3), stride=3, padding=1, dilation=(2, 3), ceil_mode=True)),
    ((64, 30, 31), dict(kernel_size=4, stride=2, padding=2)),  # unbatched
]


@cpu_lowering('the max-pool host kernel')
@pytest.mark.parametrize('dtype', [torch.float32, torch.float64], ids=ids)
@pytest.mark.parametrize('shape,kw', HOST_CASES, ids=str)
def test_max_pool2d_host_kernel(shape, kw, dtype):
  import torch_xla
  x = make(shape, dtype)
  # ties, NaNs and infinities spread over the array, where the vectorized path takes them
  x.view(-1)[::7] = 0.5
  x.view(-1)[3::101] = float('nan')
  x.view(-1)[5::53] = float('inf')
  x.view(-1)[11::29] = -float('inf')
  fn = lambda t: F.max_pool2d(t, return_indices=True, **kw)
  run_grad(fn, x, ops=['max_pool2d_with_indices', 'max_pool2d_with_indices_backward'])
  xx = x.to(DEV).requires_grad_()
  y, _ = fn(xx)
  (g,) = torch.autograd.grad(y.nan_to_num().sum(), xx)
  hlo = torch_xla._get_stablehlo([y, g])
  assert 'torch_xla_max_pool"' in hlo and 'torch_xla_max_pool_backward"' in hlo, hlo


@cpu_lowering('the max-pool host kernel')
def test_max_pool3d_host_kernel():
  import torch_xla
  x = make((2, 8, 9, 12, 13), torch.float32)
  x.view(-1)[::5] = 1.0
  x.view(-1)[2::97] = float('nan')
  fn = lambda t: F.max_pool3d(t, (2, 3, 3), (1, 2, 2), (1, 1, 1), dilation=(2, 1, 1), return_indices=True)
  run_grad(fn, x, ops=['max_pool3d_with_indices', 'max_pool3d_with_indices_backward'])
  y, _ = fn(x.to(DEV))
  assert 'torch_xla_max_pool"' in torch_xla._get_stablehlo([y])


def test_max_pool2d_backward_host_kernel_skips_indices_outside_the_plane():
  # Eager would write outside its array; the kernel drops such an index, as XLA's
  # scatter does.
  x = torch.randn(2, 3, 6, 6)
  grad = torch.randn(2, 3, 3, 3)
  _, indices = F.max_pool2d(x, 2, return_indices=True)
  bad = indices.clone()
  bad[0, 0, 0, 0] = 36
  bad[1, 2, 1, 1] = -1
  out = torch.ops.aten.max_pool2d_with_indices_backward(grad.to(DEV), x.to(DEV), [2, 2], [2, 2], [0, 0], [1, 1],
                                                         False, bad.to(DEV))
  expected = torch.zeros(2, 3, 36)
  for n in range(2):
    for c in range(3):
      for o, i in enumerate(bad[n, c].flatten().tolist()):
        if 0 <= i < 36:
          expected[n, c, i] += grad[n, c].flatten()[o]
  torch.testing.assert_close(out.cpu(), expected.view(2, 3, 6, 6))


def test_max_pool2d_errors():
  x = torch.randn(2, 3, 8, 8, device=DEV)
  with pytest.raises(Exception, match='max_pool2d.*pad should be at most half'):
    torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2], [2, 2], [1, 1], False)
  with pytest.raises(Exception, match='max_pool2d.*Output size is too small'):
    torch.ops.aten.max_pool2d_with_indices(torch.randn(1, 1, 2, 2, device=DEV), [3, 3], [1, 1], [0, 0], [1, 1], False)
  with pytest.raises(Exception, match='max_pool2d.*3D or 4D'):
    torch.ops.aten.max_pool2d_with_indices(torch.randn(8, 8, device=DEV), [2, 2], [2, 2], [0, 0], [1, 1], False)
  with pytest.raises(Exception, match='max_pool2d.*stride should be greater than zero'):
    torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [0, 0], [0, 0], [1, 1], False)
  with pytest.raises(Exception, match='max_pool2d_with_indices_backward'):
    out, idx = torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    torch.ops.aten.max_pool2d_with_indices_backward(torch.ones(2, 3, 3, 3, device=DEV), x, [2, 2], [2, 2], [0, 0],
                                                    [1, 1], False, idx)
  assert (x + 1).cpu().shape == x.shape


AVG_CASES = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((2, 3, 9, 7), dict(kernel_size=3, stride=2)),
    ((2, 3, 9, 7), dict(kernel_size=3, stride=2, padding=1)),
    ((2, 3, 9, 7), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ((1, 2, 10, 11), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1))),
    ((2, 2, 9, 9), dict(kernel_size=2, stride=2, ceil_mode=True)),
    ((2, 2, 10, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((2, 2, 10, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ((2, 2, 8, 8), dict(kernel_size=3, stride=1, padding=1, divisor_override=5)),
    ((3, 6, 6), dict(kernel_size=2)),
    ((2, 2, 9, 8), dict(kernel_size=1, stride=2)),
    ((2, 2, 10, 11), dict(kernel_size=2, stride=3, ceil_mode=True)),
]


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('shape,kw', AVG_CASES, ids=str)
def test_avg_pool2d(shape, kw, dtype):
  run_grad(lambda t: F.avg_pool2d(t, **kw), make(shape, dtype), ops=['avg_pool2d', 'avg_pool2d_backward'])


def test_avg_pool2d_int64():
  x = make((2, 3, 7, 7), torch.int64) * 7
  check(lambda t: F.avg_pool2d(t, 3, 2, 1), x, ops=['avg_pool2d'])
  check(lambda t: F.avg_pool2d(t, 3, 2, 1, count_include_pad=False), x, ops=['avg_pool2d'])
  check(lambda t: F.avg_pool2d(t, 2, divisor_override=3), x, ops=['avg_pool2d'])
  # eager has no int32 kernel; neither do we
  with pytest.raises(Exception, match='avg_pool2d'):
    F.avg_pool2d(x.to(torch.int32).to(DEV), 2)


@pytest.mark.parametrize('kw', [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)],
                         ids=str)
def test_avg_pool1d(kw):
  run_grad(lambda t: F.avg_pool1d(t, **kw), make((2, 3, 11), torch.float32), ops=['avg_pool2d', 'avg_pool2d_backward'])


def test_avg_pool2d_errors():
  x = torch.randn(2, 3, 8, 8, device=DEV)
  with pytest.raises(Exception, match='avg_pool2d.*pad should be at most half'):
    torch.ops.aten.avg_pool2d(x, [2, 2], [2, 2], [2, 2], False, True, None)
  with pytest.raises(Exception, match='avg_pool2d.*divisor must be not zero'):
    torch.ops.aten.avg_pool2d(x, [2, 2], [2, 2], [0, 0], False, True, 0)
  with pytest.raises(Exception, match='avg_pool2d_backward'):
    torch.ops.aten.avg_pool2d_backward(torch.ones(2, 3, 3, 3, device=DEV), x, [2, 2], [2, 2], [0, 0], False, True,
                                       None)
  assert (x + 1).cpu().shape == x.shape


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('shape,out', [((2, 3, 8, 8), (4, 4)), ((2, 3, 7, 9), (3, 4)), ((2, 3, 5, 5), (7, 3)),
                                       ((2, 3, 7, 7), (1, 1)), ((3, 10, 6), (4, 5)), ((1, 2, 6, 6), (6, 6)),
                                       ((2, 3, 7, 7), (2, 1))], ids=str)
def test_adaptive_avg_pool2d(shape, out, dtype):
  run_grad(lambda t: F.adaptive_avg_pool2d(t, out), make(shape, dtype),
           ops=['_adaptive_avg_pool2d'] if out != (1, 1) else [])


def test_adaptive_avg_pool2d_errors():
  with pytest.raises(Exception, match='adaptive_avg_pool2d'):
    torch.ops.aten._adaptive_avg_pool2d(torch.randn(4, 4, device=DEV), [2, 2])
  with pytest.raises(Exception, match='adaptive_avg_pool2d'):
    torch.ops.aten._adaptive_avg_pool2d(torch.ones(1, 2, 4, 4, dtype=torch.long, device=DEV), [2, 2])
  with pytest.raises(Exception, match='adaptive_avg_pool2d_backward'):
    torch.ops.aten._adaptive_avg_pool2d_backward(torch.ones(2, 2, 2, device=DEV), torch.ones(1, 2, 4, 4, device=DEV))


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('shape,out', [((2, 3, 8, 8), (4, 4)), ((1, 2, 5, 7), (3, 4)), ((2, 3, 5, 5), (7, 3)),
                                       ((2, 3, 7, 7), (1, 1)), ((3, 10, 6), (4, 5)), ((1, 2, 6, 6), (6, 6))],
                         ids=str)
def test_adaptive_max_pool2d(shape, out, dtype):
  run_grad(lambda t: F.adaptive_max_pool2d(t, out, return_indices=True), make(shape, dtype),
           ops=['adaptive_max_pool2d', 'adaptive_max_pool2d_backward'])


def test_adaptive_max_pool2d_ties_and_nan():
  x = torch.tensor([[[[1., 1., 0.], [1., float('nan'), 2.], [-float('inf'), -float('inf'), 3.]]]])
  check(lambda t: F.adaptive_max_pool2d(t, 2, return_indices=True), x, ops=['adaptive_max_pool2d'])
  y = torch.full((1, 1, 3, 4), -float('inf'))
  check(lambda t: F.adaptive_max_pool2d(t, (2, 3), return_indices=True), y, ops=['adaptive_max_pool2d'])


def test_adaptive_max_pool2d_errors():
  with pytest.raises(Exception, match='adaptive_max_pool2d'):
    torch.ops.aten.adaptive_max_pool2d(torch.randn(4, 4, device=DEV), [2, 2])
  with pytest.raises(Exception, match='adaptive_max_pool2d'):
    torch.ops.aten.adaptive_max_pool2d(torch.ones(1, 2, 4, 4, dtype=torch.long, device=DEV), [2, 2])
  x = torch.randn(1, 2, 4, 4, device=DEV)
  out, idx = torch.ops.aten.adaptive_max_pool2d(x, [2, 2])
  with pytest.raises(Exception, match='adaptive_max_pool2d_backward'):
    torch.ops.aten.adaptive_max_pool2d_backward(torch.ones(1, 2, 3, 3, device=DEV), x, idx)
  assert (x + 1).cpu().shape == x.shape


def test_resnet_block_trains_without_fallback():
  """A ResNet-style block (strided conv, batch norm, relu, residual add, avg pool,
  adaptive avg pool, max pool, linear, cross entropy): a few SGD steps match eager."""

  class Block(torch.nn.Module):

    def __init__(self):
      super().__init__()
      self.stem = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
      self.bn0 = torch.nn.BatchNorm2d(8)
      self.conv1 = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)
      self.bn1 = torch.nn.BatchNorm2d(8)
      self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False)
      self.bn2 = torch.nn.BatchNorm2d(16)
      self.down = torch.nn.Sequential(torch.nn.AvgPool2d(2, 2), torch.nn.Conv2d(8, 16, 1, bias=False))
      self.fc = torch.nn.Linear(16, 5)

    def forward(self, x):
      x = F.max_pool2d(F.relu(self.bn0(self.stem(x))), 3, 2, 1)
      y = F.relu(self.bn1(self.conv1(x)))
      y = self.bn2(self.conv2(y))
      x = F.relu(y + self.down(x))
      x = F.adaptive_avg_pool2d(x, (2, 2)).mean((2, 3))
      return self.fc(x)

  torch.manual_seed(0)
  cpu = Block()
  dev = Block()
  dev.load_state_dict(cpu.state_dict())
  dev.to(DEV)
  opt_c = torch.optim.SGD(cpu.parameters(), lr=0.05, momentum=0.9)
  opt_x = torch.optim.SGD(dev.parameters(), lr=0.05, momentum=0.9)
  for step in range(3):
    x = make((4, 3, 16, 16), torch.float32, seed=step)
    t = torch.randint(0, 5, (4,), generator=torch.Generator().manual_seed(step))
    with lowered('max_pool2d_with_indices', 'avg_pool2d', '_adaptive_avg_pool2d', 'native_batch_norm'):
      for model, opt, inp, tgt in ((cpu, opt_c, x, t), (dev, opt_x, x.to(DEV), t.to(DEV))):
        opt.zero_grad()
        loss = F.cross_entropy(model(inp), tgt)
        loss.backward()
        opt.step()
      xm.mark_step()
  sc, sx = cpu.state_dict(), dev.state_dict()
  for k in sc:
    assert_same(sx[k], sc[k], atol=2e-4, rtol=2e-4)


# bf16: eager sums gradients (and some interpolations) in bf16, we in f32.
LOOSE_BF16 = dict(atol=3e-2, rtol=3e-2)


def loose(dtype):
  return LOOSE_BF16 if dtype == torch.bfloat16 else {}


# ---------------------------------------------------------------------------------
# 3-D pooling

POOL3D_CASES = [
    ((2, 2, 4, 5, 6), dict(kernel_size=2)),
    ((1, 2, 5, 6, 7), dict(kernel_size=3, stride=2, padding=1)),
    ((2, 5, 5, 5), dict(kernel_size=(3, 2, 1), stride=(1, 2, 2))),  # unbatched
    ((1, 1, 7, 6, 7), dict(kernel_size=2, stride=2, ceil_mode=True)),
    ((1, 2, 4, 5, 5), dict(kernel_size=(1, 3, 2), stride=(2, 1, 3), padding=(0, 1, 1), ceil_mode=True)),
]


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('shape,kw', POOL3D_CASES
                         + [((1, 2, 7, 7, 7), dict(kernel_size=2, stride=1, padding=1, dilation=2))], ids=str)
def test_max_pool3d(shape, kw, dtype):
  fn = lambda t: F.max_pool3d(t, return_indices=True, **kw)
  run_grad(fn, make(shape, dtype), ops=['max_pool3d_with_indices', 'max_pool3d_with_indices_backward'], **loose(dtype))


def test_max_pool3d_nan_and_ties_pick_the_first_as_eager():
  x = torch.zeros(1, 1, 4, 4, 4)
  x[0, 0, 1, 1, 1] = float('nan')
  check(lambda t: F.max_pool3d(t, 2, return_indices=True), x, ops=('max_pool3d_with_indices',))


# eager's avg_pool3d has no bfloat16 kernel on the CPU
@pytest.mark.parametrize('dtype', [torch.float32, torch.float64], ids=ids)
@pytest.mark.parametrize('shape,kw', POOL3D_CASES, ids=str)
@pytest.mark.parametrize('extra', [{}, dict(count_include_pad=False), dict(divisor_override=3)], ids=str)
def test_avg_pool3d(shape, kw, extra, dtype):
  fn = lambda t: F.avg_pool3d(t, **kw, **extra)
  run_grad(fn, make(shape, dtype), ops=['avg_pool3d', 'avg_pool3d_backward'], **loose(dtype))


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('shape,out', [((2, 2, 6, 7, 8), (3, 4, 5)), ((3, 5, 4, 7), (2, 4, 3)),
                                       ((1, 2, 4, 4, 4), (4, 4, 4)), ((1, 1, 5, 3, 6), (1, 2, 1))], ids=str)
def test_adaptive_pool3d(shape, out, dtype):
  run_grad(lambda t: F.adaptive_avg_pool3d(t, out), make(shape, dtype),
           ops=['_adaptive_avg_pool3d', '_adaptive_avg_pool3d_backward'], **loose(dtype))
  run_grad(lambda t: F.adaptive_max_pool3d(t, out, return_indices=True), make(shape, dtype),
           ops=['adaptive_max_pool3d', 'adaptive_max_pool3d_backward'], **loose(dtype))


# ---------------------------------------------------------------------------------
# fractional max pooling, with the samples given (eager draws them otherwise)

@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('shape,kernel,out', [((2, 3, 9, 8), 2, (4, 5)), ((3, 7, 7), (3, 2), (3, 4)),
                                              ((1, 2, 6, 6), 3, (1, 2))], ids=str)
def test_fractional_max_pool2d(shape, kernel, out, dtype):
  planes = (shape[0], shape[1]) if len(shape) == 4 else (1, shape[0])
  samples = torch.rand(*planes, 2, generator=torch.Generator().manual_seed(3)).to(dtype)
  fn = lambda t: F.fractional_max_pool2d(t, kernel, output_size=out, return_indices=True,
                                         _random_samples=samples.to(t.device))
  run_grad(fn, make(shape, dtype), ops=['fractional_max_pool2d', 'fractional_max_pool2d_backward'], **loose(dtype))


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('shape,kernel,out', [((2, 2, 7, 8, 9), 2, (3, 4, 5)), ((2, 6, 5, 7), (2, 1, 3), (4, 3, 2))],
                         ids=str)
def test_fractional_max_pool3d(shape, kernel, out, dtype):
  planes = (shape[0], shape[1]) if len(shape) == 5 else (1, shape[0])
  samples = torch.rand(*planes, 3, generator=torch.Generator().manual_seed(4)).to(dtype)
  fn = lambda t: F.fractional_max_pool3d(t, kernel, output_size=out, return_indices=True,
                                         _random_samples=samples.to(t.device))
  run_grad(fn, make(shape, dtype), ops=['fractional_max_pool3d', 'fractional_max_pool3d_backward'], **loose(dtype))


def test_fractional_max_pool_bad_sizes_raise():
  x = torch.randn(1, 1, 4, 4, device=DEV)
  with pytest.raises(RuntimeError, match='fractional_max_pool2d: .*must be at most the input size'):
    torch.ops.aten.fractional_max_pool2d(x, [3, 3], [3, 3], torch.rand(1, 1, 2, device=DEV))


# ---------------------------------------------------------------------------------
# max_unpool3d, max_unpool2d

@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('shape,kw,out', [((2, 2, 4, 6, 6), dict(kernel_size=2), None),
                                          ((3, 5, 5, 5), dict(kernel_size=3, stride=2, padding=1), None),
                                          ((1, 2, 5, 5, 5), dict(kernel_size=2), (5, 5, 5))], ids=str)
def test_max_unpool3d(shape, kw, out, dtype):
  pooled, indices = F.max_pool3d(make(shape, torch.float32), return_indices=True, **kw)
  check(lambda p, i: F.max_unpool3d(p, i, output_size=out, **kw), pooled.to(dtype), indices, ops=('max_unpool3d',))
  check_grad(lambda p: F.max_unpool3d(p, indices.to(p.device), output_size=out, **kw), pooled.to(dtype),
             ops=('max_unpool3d',))


def test_max_unpool3d_bad_arguments_raise():
  x = torch.randn(1, 1, 2, 2, 2, device=DEV)
  with pytest.raises(RuntimeError, match='max_unpool3d: .*Expected shape of indices'):
    torch.ops.aten.max_unpool3d(x, torch.zeros(1, 1, 2, 2, 1, dtype=torch.long, device=DEV), [4, 4, 4], [2, 2, 2],
                                [0, 0, 0])


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.float64], ids=ids)
@pytest.mark.parametrize('shape,kw,out', [((2, 3, 6, 8), dict(kernel_size=2), None),
                                          ((3, 7, 5), dict(kernel_size=3, stride=2, padding=1), None),
                                          ((2, 2, 7, 7), dict(kernel_size=2), (7, 7))])
def test_max_unpool2d(shape, kw, out, dtype):
  x = make(shape, torch.float32)
  pooled, indices = F.max_pool2d(x, return_indices=True, **kw)
  check(lambda p, i: F.max_unpool2d(p, i, output_size=out, **kw), pooled.to(dtype), indices, ops=('max_unpool2d',))


def test_max_unpool2d_integer_input_raises_like_eager():
  for device in ('cpu', DEV):
    x = torch.ones(1, 1, 2, 2, dtype=torch.int64, device=device)
    with pytest.raises(NotImplementedError, match="\"max_unpool2d\" not implemented for 'Long'"):
      F.max_unpool2d(x, torch.zeros_like(x), 2)


def test_max_unpool2d_gradient():
  pooled, indices = F.max_pool2d(make((2, 3, 6, 6), torch.float32), 2, return_indices=True)
  check_grad(lambda p: F.max_unpool2d(p, indices.to(p.device), 2), pooled, ops=('max_unpool2d',), rtol=0, atol=0)


@pytest.mark.parametrize('call,match', [
    (lambda x, i: torch.ops.aten.max_unpool2d(x, i.int(), [4, 4]), 'should be type int64'),
    (lambda x, i: torch.ops.aten.max_unpool2d(x, i[..., :1], [4, 4]), 'Expected shape of indices'),
    (lambda x, i: torch.ops.aten.max_unpool2d(x[0, 0], i[0, 0], [4, 4]), '3d or 4d Tensor'),
    (lambda x, i: torch.ops.aten.max_unpool2d(x, i, [4]), 'exactly two elements'),
])
def test_max_unpool2d_bad_arguments_raise(call, match):
  x = torch.randn(2, 3, 2, 2, device=DEV)
  i = torch.zeros(2, 3, 2, 2, dtype=torch.int64, device=DEV)
  with pytest.raises(RuntimeError, match='max_unpool2d: .*' + match):
    call(x, i)
  assert_same(x * 2, x.cpu() * 2)


# ---- counter cases ------------------------------------------------------------

def _frac(n):
  shape = (1, 2) + (6,) * n
  samples = lambda: torch.rand(1, 2, n, device=DEV)
  pool = F.fractional_max_pool2d if n == 2 else F.fractional_max_pool3d
  return lambda t: pool(t, 2, output_size=(3,) * n, return_indices=True, _random_samples=samples())


COUNTER_CASES = {
    'max_pool2d_with_indices': (lambda: F.max_pool2d(torch.randn(1, 2, 6, 6, device=DEV), 2),
                                'max_pool2d_with_indices'),
    'max_pool2d_with_indices_backward': (_grad_case(lambda t: F.max_pool2d(t, 2)), 'max_pool2d_with_indices_backward'),
    'avg_pool2d': (lambda: F.avg_pool2d(torch.randn(1, 2, 6, 6, device=DEV), 2), 'avg_pool2d'),
    'avg_pool2d_backward': (_grad_case(lambda t: F.avg_pool2d(t, 2)), 'avg_pool2d_backward'),
    '_adaptive_avg_pool2d': (lambda: F.adaptive_avg_pool2d(torch.randn(1, 2, 6, 6, device=DEV), 4),
                             '_adaptive_avg_pool2d'),
    '_adaptive_avg_pool2d_backward': (_grad_case(lambda t: F.adaptive_avg_pool2d(t, 4)),
                                      '_adaptive_avg_pool2d_backward'),
    'adaptive_max_pool2d': (lambda: F.adaptive_max_pool2d(torch.randn(1, 2, 6, 6, device=DEV), 4),
                            'adaptive_max_pool2d'),
    'adaptive_max_pool2d_backward': (_grad_case(lambda t: F.adaptive_max_pool2d(t, 4)),
                                     'adaptive_max_pool2d_backward'),
    'max_pool3d_with_indices': (lambda: F.max_pool3d(torch.randn(1, 2, 4, 4, 4, device=DEV), 2),
                                'max_pool3d_with_indices'),
    'max_pool3d_with_indices_backward': (_input_grad_case(lambda t: F.max_pool3d(t, 2), (1, 2, 4, 4, 4)),
                                         'max_pool3d_with_indices_backward'),
    'avg_pool3d': (lambda: F.avg_pool3d(torch.randn(1, 2, 4, 4, 4, device=DEV), 2), 'avg_pool3d'),
    'avg_pool3d_backward': (_input_grad_case(lambda t: F.avg_pool3d(t, 2), (1, 2, 4, 4, 4)), 'avg_pool3d_backward'),
    '_adaptive_avg_pool3d': (lambda: F.adaptive_avg_pool3d(torch.randn(1, 2, 4, 5, 6, device=DEV), 3),
                             '_adaptive_avg_pool3d'),
    '_adaptive_avg_pool3d_backward': (_input_grad_case(lambda t: F.adaptive_avg_pool3d(t, 3), (1, 2, 4, 5, 6)),
                                      '_adaptive_avg_pool3d_backward'),
    'adaptive_max_pool3d': (lambda: F.adaptive_max_pool3d(torch.randn(1, 2, 4, 5, 6, device=DEV), 3),
                            'adaptive_max_pool3d'),
    'adaptive_max_pool3d_backward': (_input_grad_case(lambda t: F.adaptive_max_pool3d(t, 3), (1, 2, 4, 5, 6)),
                                     'adaptive_max_pool3d_backward'),
    'fractional_max_pool2d': (lambda: _frac(2)(torch.randn(1, 2, 6, 6, device=DEV)), 'fractional_max_pool2d'),
    'fractional_max_pool2d_backward': (_input_grad_case(_frac(2), (1, 2, 6, 6)), 'fractional_max_pool2d_backward'),
    'fractional_max_pool3d': (lambda: _frac(3)(torch.randn(1, 2, 6, 6, 6, device=DEV)), 'fractional_max_pool3d'),
    'fractional_max_pool3d_backward': (_input_grad_case(_frac(3), (1, 2, 6, 6, 6)), 'fractional_max_pool3d_backward'),
    'max_unpool3d': (lambda: F.max_unpool3d(*F.max_pool3d(torch.randn(1, 1, 4, 4, 4, device=DEV), 2,
                                                          return_indices=True), 2), 'max_unpool3d'),
    'max_unpool2d': (lambda: F.max_unpool2d(*F.max_pool2d(torch.randn(1, 1, 4, 4, device=DEV), 2, return_indices=True),
                                            2), 'max_unpool2d'),
}
