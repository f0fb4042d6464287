"""3-D pooling (max, avg, adaptive avg and max), fractional max pooling (2-D, 3-D, with
given samples), max_unpool3d, interpolation (nearest and nearest-exact 1-D to 3-D,
linear, trilinear, bicubic, antialiased bilinear), grid sampling (2-D, 3-D, every mode
and padding), channel_shuffle, unfold on an empty
batch and negative replication padding on the XLA device against eager CPU: values,
indices, input gradients, no CPU fallback, and errors that name the op."""
import pytest
import torch
import torch.nn.functional as F

from op_testing import DEV, FLOATS, assert_same, check, check_grad, ids, lowered, make, run_grad

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
# max_unpool3d

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


# ---------------------------------------------------------------------------------
# interpolation

INTERP_CASES = [
    # (mode, shape, kwargs, op)
    ('nearest', (2, 3, 5), dict(size=9), 'upsample_nearest1d'),
    ('nearest', (2, 3, 5), dict(scale_factor=2), 'upsample_nearest1d'),
    ('nearest', (1, 2, 8), dict(size=3), 'upsample_nearest1d'),
    ('nearest', (1, 2, 3, 4, 5), dict(size=(5, 4, 7)), 'upsample_nearest3d'),
    ('nearest', (1, 2, 2, 3, 3), dict(scale_factor=2), 'upsample_nearest3d'),
    ('nearest-exact', (2, 3, 5), dict(size=9), '_upsample_nearest_exact1d'),
    ('nearest-exact', (2, 3, 6), dict(scale_factor=0.5), '_upsample_nearest_exact1d'),
    ('nearest-exact', (1, 2, 5, 4), dict(size=(7, 3)), '_upsample_nearest_exact2d'),
    ('nearest-exact', (1, 2, 3, 3, 4), dict(size=(4, 6, 5)), '_upsample_nearest_exact3d'),
    ('linear', (2, 3, 5), dict(size=9), 'upsample_linear1d'),
    ('linear', (2, 3, 7), dict(size=4, align_corners=True), 'upsample_linear1d'),
    ('linear', (2, 3, 4), dict(scale_factor=1.7), 'upsample_linear1d'),
    ('trilinear', (1, 2, 3, 4, 5), dict(size=(5, 4, 7)), 'upsample_trilinear3d'),
    ('trilinear', (1, 2, 4, 3, 5), dict(size=(2, 6, 3), align_corners=True), 'upsample_trilinear3d'),
    ('bicubic', (2, 2, 5, 6), dict(size=(9, 4)), 'upsample_bicubic2d'),
    ('bicubic', (1, 3, 4, 4), dict(scale_factor=2.5, align_corners=True), 'upsample_bicubic2d'),
    ('bicubic', (1, 2, 8, 7), dict(size=(3, 3)), 'upsample_bicubic2d'),
    ('bilinear-aa', (1, 2, 12, 9), dict(size=(5, 4)), '_upsample_bilinear2d_aa'),
    ('bilinear-aa', (2, 2, 5, 6), dict(size=(9, 7)), '_upsample_bilinear2d_aa'),
    ('bilinear-aa', (1, 2, 10, 7), dict(size=(3, 7), align_corners=True), '_upsample_bilinear2d_aa'),
]


def interp(mode, kw):
  if mode == 'bilinear-aa':
    return lambda t: F.interpolate(t, mode='bilinear', antialias=True, **kw)
  return lambda t: F.interpolate(t, mode=mode, **kw)


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('mode,shape,kw,op', INTERP_CASES, ids=str)
def test_interpolate(mode, shape, kw, op, dtype):
  if mode == 'bilinear-aa' and dtype == torch.bfloat16:
    pytest.skip("eager's antialiased bilinear has no bfloat16 kernel on the CPU")
  # bf16: eager rounds its interpolation weights to bf16 in some kernels, we keep f32
  run_grad(interp(mode, kw), make(shape, dtype), ops=[op, op + '_backward'], **loose(dtype))


@pytest.mark.parametrize('mode,shape,kw', [('nearest', (1, 2, 5), dict(size=8)),
                                           ('nearest-exact', (1, 2, 3, 4, 4), dict(size=(5, 3, 7)))], ids=str)
def test_interpolate_nearest_uint8(mode, shape, kw):
  check(interp(mode, kw), make(shape, torch.uint8))


def test_upsample_bad_sizes_raise():
  x = torch.randn(1, 1, 4, device=DEV)
  with pytest.raises(RuntimeError, match='upsample_linear1d: .*output_size equals to 1'):
    torch.ops.aten.upsample_linear1d(x, [4, 4], False)
  with pytest.raises(RuntimeError, match='upsample_trilinear3d: .*5-D input'):
    torch.ops.aten.upsample_trilinear3d(x, [4, 4, 4], False)


# ---------------------------------------------------------------------------------
# grid sampling

def _grid(shape, seed):
  # a little beyond [-1, 1]: some taps fall outside the input
  return torch.rand(shape, generator=torch.Generator().manual_seed(seed)) * 2.4 - 1.2


@pytest.mark.parametrize('align_corners', [False, True], ids=str)
@pytest.mark.parametrize('padding_mode', ['zeros', 'border', 'reflection'])
@pytest.mark.parametrize('mode', ['bilinear', 'nearest', 'bicubic'])
def test_grid_sample_2d(mode, padding_mode, align_corners):
  fn = lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
  x, g = make((2, 3, 5, 6), torch.float32), _grid((2, 4, 3, 2), 5)
  check_grad(fn, x, g, ops=('grid_sampler_2d', 'grid_sampler_2d_backward'), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('align_corners', [False, True], ids=str)
@pytest.mark.parametrize('padding_mode', ['zeros', 'border', 'reflection'])
@pytest.mark.parametrize('mode', ['bilinear', 'nearest'])
def test_grid_sample_3d(mode, padding_mode, align_corners):
  fn = lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
  x, g = make((2, 2, 3, 4, 5), torch.float32), _grid((2, 3, 2, 4, 3), 6)
  check_grad(fn, x, g, ops=('grid_sampler_3d', 'grid_sampler_3d_backward'), rtol=1e-4, atol=1e-4)


def test_grid_sample_bad_grid_raises():
  x = torch.randn(1, 1, 4, 4, device=DEV)
  with pytest.raises(RuntimeError, match='grid_sampler_2d: .*size 2 in last dimension'):
    torch.ops.aten.grid_sampler_2d(x, torch.zeros(1, 3, 3, 3, device=DEV), 0, 0, False)


# ---------------------------------------------------------------------------------
# channel_shuffle, unfold on an empty batch, negative replication padding

@pytest.mark.parametrize('dtype', FLOATS + [torch.int64], ids=ids)
@pytest.mark.parametrize('shape,groups', [((2, 6, 3, 3), 3), ((1, 4, 5), 2), ((2, 8, 2, 2, 2), 4)], ids=str)
def test_channel_shuffle(shape, groups, dtype):
  check(lambda t: F.channel_shuffle(t, groups), make(shape, dtype), ops=('channel_shuffle',))
  if dtype.is_floating_point:
    check_grad(lambda t: F.channel_shuffle(t, groups), make(shape, dtype), ops=('channel_shuffle',))


def test_channel_shuffle_bad_groups_raise():
  x = torch.randn(1, 6, 2, device=DEV)
  with pytest.raises(RuntimeError, match='divisible by groups'):
    F.channel_shuffle(x, 4)


def test_unfold_empty_batch():
  x = torch.randn(0, 2, 5, 5)
  out = check(lambda t: F.unfold(t, 3, padding=1), x, ops=('im2col',))
  assert out.shape == (0, 18, 25)


@pytest.mark.parametrize('pad', [(-4, 5), (2, -1), (-1, -2), (-6, 3)], ids=str)
def test_replicate_pad_negative_1d(pad):
  check_grad(lambda t: F.pad(t, pad, mode='replicate'), make((2, 3, 5), torch.float32),
             ops=('replication_pad1d', 'replication_pad1d_backward'))


@pytest.mark.parametrize('pad', [(-1, 0, 2, -2), (1, -2, -1, 3, -1, 1)], ids=str)
def test_replicate_pad_negative_2d_3d(pad):
  shape = (1, 2, 4, 5) if len(pad) == 4 else (1, 2, 3, 4, 5)
  op = 'replication_pad2d' if len(pad) == 4 else 'replication_pad3d'
  check_grad(lambda t: F.pad(t, pad, mode='replicate'), make(shape, torch.float32), ops=(op, op + '_backward'))


def test_replicate_pad_cropping_everything_raises():
  with pytest.raises(RuntimeError, match='replication_pad1d: .*too small'):
    torch.ops.aten.replication_pad1d(torch.randn(1, 1, 5, device=DEV), [-5, 0])


# ---------------------------------------------------------------------------------

def _grad_case(fn, shape):

  def run():
    x = torch.randn(*shape, device=DEV, requires_grad=True)
    out = fn(x)
    (out[0] if isinstance(out, tuple) else out).sum().backward()
    return x.grad

  return run


def _frac(n):
  shape = (1, 2) + (6,) * n
  samples = lambda: torch.rand(1, 2, n, device=DEV)
  pool = F.fractional_max_pool2d if n == 2 else F.fractional_max_pool3d
  return lambda t: pool(t, 2, output_size=(3,) * n, return_indices=True, _random_samples=samples())


def _interp_cases():
  cases = {}
  for mode, shape, kw, op in INTERP_CASES:
    if op not in cases:
      cases[op] = (lambda m=mode, s=shape, k=kw: interp(m, k)(torch.randn(*s, device=DEV)), op)
      cases[op + '_backward'] = (_grad_case(interp(mode, kw), shape), op + '_backward')
  return cases


COUNTER_CASES = {
    'max_pool3d_with_indices': (lambda: F.max_pool3d(torch.randn(1, 2, 4, 4, 4, device=DEV), 2),
                                'max_pool3d_with_indices'),
    'max_pool3d_with_indices_backward': (_grad_case(lambda t: F.max_pool3d(t, 2), (1, 2, 4, 4, 4)),
                                         'max_pool3d_with_indices_backward'),
    'avg_pool3d': (lambda: F.avg_pool3d(torch.randn(1, 2, 4, 4, 4, device=DEV), 2), 'avg_pool3d'),
    'avg_pool3d_backward': (_grad_case(lambda t: F.avg_pool3d(t, 2), (1, 2, 4, 4, 4)), 'avg_pool3d_backward'),
    '_adaptive_avg_pool3d': (lambda: F.adaptive_avg_pool3d(torch.randn(1, 2, 4, 5, 6, device=DEV), 3),
                             '_adaptive_avg_pool3d'),
    '_adaptive_avg_pool3d_backward': (_grad_case(lambda t: F.adaptive_avg_pool3d(t, 3), (1, 2, 4, 5, 6)),
                                      '_adaptive_avg_pool3d_backward'),
    'adaptive_max_pool3d': (lambda: F.adaptive_max_pool3d(torch.randn(1, 2, 4, 5, 6, device=DEV), 3),
                            'adaptive_max_pool3d'),
    'adaptive_max_pool3d_backward': (_grad_case(lambda t: F.adaptive_max_pool3d(t, 3), (1, 2, 4, 5, 6)),
                                     'adaptive_max_pool3d_backward'),
    'fractional_max_pool2d': (lambda: _frac(2)(torch.randn(1, 2, 6, 6, device=DEV)), 'fractional_max_pool2d'),
    'fractional_max_pool2d_backward': (_grad_case(_frac(2), (1, 2, 6, 6)), 'fractional_max_pool2d_backward'),
    'fractional_max_pool3d': (lambda: _frac(3)(torch.randn(1, 2, 6, 6, 6, device=DEV)), 'fractional_max_pool3d'),
    'fractional_max_pool3d_backward': (_grad_case(_frac(3), (1, 2, 6, 6, 6)), 'fractional_max_pool3d_backward'),
    'max_unpool3d': (lambda: F.max_unpool3d(*F.max_pool3d(torch.randn(1, 1, 4, 4, 4, device=DEV), 2,
                                                          return_indices=True), 2), 'max_unpool3d'),
    'grid_sampler_2d': (lambda: F.grid_sample(torch.randn(1, 2, 4, 4, device=DEV), torch.rand(1, 3, 3, 2, device=DEV),
                                              align_corners=False), 'grid_sampler_2d'),
    'grid_sampler_2d_backward': (_grad_case(lambda t: F.grid_sample(t, torch.rand(1, 3, 3, 2, device=DEV),
                                                                    align_corners=False), (1, 2, 4, 4)),
                                 'grid_sampler_2d_backward'),
    'grid_sampler_3d': (lambda: F.grid_sample(torch.randn(1, 2, 3, 4, 4, device=DEV),
                                              torch.rand(1, 2, 3, 3, 3, device=DEV), align_corners=False),
                        'grid_sampler_3d'),
    'grid_sampler_3d_backward': (_grad_case(lambda t: F.grid_sample(t, torch.rand(1, 2, 3, 3, 3, device=DEV),
                                                                    align_corners=False), (1, 2, 3, 4, 4)),
                                 'grid_sampler_3d_backward'),
    'channel_shuffle': (lambda: F.channel_shuffle(torch.randn(1, 4, 2, 2, device=DEV), 2), 'channel_shuffle'),
    **_interp_cases(),
}
