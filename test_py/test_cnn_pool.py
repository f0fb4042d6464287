"""Pooling (max, avg, adaptive avg; 2-D and 1-D) and interpolation (nearest, bilinear)
on the XLA device against eager CPU: values, indices, dtypes, shapes, input gradients,
no CPU fallback, and errors that name the op."""
import pytest
import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm

from op_testing import DEV, FLOATS, assert_same, check, ids, lowered, make, run_grad
from device_marks import cpu_lowering


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


NEAREST_CASES = [
    dict(scale_factor=2),
    dict(scale_factor=3),
    dict(scale_factor=1.5),
    dict(scale_factor=(2, 0.5)),
    dict(size=(7, 5)),
    dict(size=(3, 2)),
    dict(scale_factor=1.7, recompute_scale_factor=True),
    dict(scale_factor=0.6),
    dict(size=(37, 4)),  # no short period: the one-hot select path
    dict(scale_factor=(2.5, 1.25)),
]


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('kw', NEAREST_CASES, ids=str)
def test_upsample_nearest2d(kw, dtype):
  run_grad(lambda t: F.interpolate(t, mode='nearest', **kw), make((2, 3, 5, 6), dtype),
           ops=['upsample_nearest2d', 'upsample_nearest2d_backward'])


def test_upsample_nearest2d_uint8_and_inf():
  x = torch.randint(0, 255, (1, 2, 4, 5), generator=torch.Generator().manual_seed(0)).to(torch.uint8)
  check(lambda t: F.interpolate(t, scale_factor=1.5), x, ops=['upsample_nearest2d'])
  check(lambda t: F.interpolate(t, scale_factor=2), x, ops=['upsample_nearest2d'])
  y = make((1, 1, 3, 3), torch.float32)
  y[0, 0, 1, 1] = float('inf')
  y[0, 0, 0, 2] = float('nan')
  check(lambda t: F.interpolate(t, size=(5, 4)), y, ops=['upsample_nearest2d'])


BILINEAR_CASES = [
    dict(scale_factor=2),
    dict(scale_factor=2, align_corners=True),
    dict(scale_factor=1.5),
    dict(scale_factor=0.5),
    dict(size=(7, 4)),
    dict(size=(7, 4), align_corners=True),
    dict(size=(1, 9), align_corners=True),
    dict(size=(5, 6)),  # same size: a copy
    dict(scale_factor=(1.3, 2.7)),
    dict(scale_factor=(1.3, 2.7), align_corners=True),
]


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('kw', BILINEAR_CASES, ids=str)
def test_upsample_bilinear2d(kw, dtype):
  loose = dict(atol=2e-2, rtol=2e-2) if dtype == torch.bfloat16 else {}
  run_grad(lambda t: F.interpolate(t, mode='bilinear', **kw), make((2, 3, 5, 6), dtype),
           ops=['upsample_bilinear2d', 'upsample_bilinear2d_backward'], **loose)


def test_upsample_errors():
  x = torch.randn(1, 2, 4, 4, device=DEV)
  with pytest.raises(Exception, match='upsample_nearest2d'):
    torch.ops.aten.upsample_nearest2d(x, [0, 3])
  with pytest.raises(Exception, match='upsample_bilinear2d'):
    torch.ops.aten.upsample_bilinear2d(torch.ones(1, 2, 4, 4, dtype=torch.long, device=DEV), [8, 8], False)
  with pytest.raises(Exception, match='upsample_bilinear2d_backward'):
    torch.ops.aten.upsample_bilinear2d_backward(torch.ones(1, 2, 3, 3, device=DEV), [8, 8], [1, 2, 4, 4], False)
  with pytest.raises(Exception, match='upsample_nearest2d_backward'):
    torch.ops.aten.upsample_nearest2d_backward(torch.ones(1, 2, 3, 3, device=DEV), [8, 8], [1, 2, 4, 4])
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


def _grad_case(fn, shape=(1, 2, 6, 6)):

  def run():
    x = torch.randn(*shape, device=DEV, requires_grad=True)
    fn(x).sum().backward()

  return run


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
    'upsample_nearest2d': (lambda: F.interpolate(torch.randn(1, 2, 3, 3, device=DEV), scale_factor=2),
                           'upsample_nearest2d'),
    'upsample_nearest2d_backward': (_grad_case(lambda t: F.interpolate(t, scale_factor=1.5)),
                                    'upsample_nearest2d_backward'),
    'upsample_bilinear2d': (lambda: F.interpolate(torch.randn(1, 2, 3, 3, device=DEV), scale_factor=2,
                                                  mode='bilinear'), 'upsample_bilinear2d'),
    'upsample_bilinear2d_backward': (_grad_case(lambda t: F.interpolate(t, scale_factor=2, mode='bilinear')),
                                     'upsample_bilinear2d_backward'),
}
