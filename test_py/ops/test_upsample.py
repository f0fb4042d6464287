"""Interpolation (upsampling) on the XLA device against eager CPU: nearest and
nearest-exact 1-D to 3-D, linear, bilinear (and antialiased), trilinear and bicubic;
values, dtypes, input gradients, no CPU fallback, and errors that name the op."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import DEV, FLOATS, check, ids, make, run_grad
from testing.counter_cases import randn_grad_case as _grad_case, randn_input_grad_case as _input_grad_case


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


# bf16: eager sums gradients (and some interpolations) in bf16, we in f32.
LOOSE_BF16 = dict(atol=3e-2, rtol=3e-2)


def loose(dtype):
  return LOOSE_BF16 if dtype == torch.bfloat16 else {}


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


# ---- counter cases ------------------------------------------------------------

def _interp_cases():
  cases = {}
  for mode, shape, kw, op in INTERP_CASES:
    if op not in cases:
      cases[op] = (lambda m=mode, s=shape, k=kw: interp(m, k)(torch.randn(*s, device=DEV)), op)
      cases[op + '_backward'] = (_input_grad_case(interp(mode, kw), shape), op + '_backward')
  return cases


COUNTER_CASES = {
    'upsample_nearest2d': (lambda: F.interpolate(torch.randn(1, 2, 3, 3, device=DEV), scale_factor=2),
                           'upsample_nearest2d'),
    'upsample_nearest2d_backward': (_grad_case(lambda t: F.interpolate(t, scale_factor=1.5)),
                                    'upsample_nearest2d_backward'),
    'upsample_bilinear2d': (lambda: F.interpolate(torch.randn(1, 2, 3, 3, device=DEV), scale_factor=2,
                                                  mode='bilinear'), 'upsample_bilinear2d'),
    'upsample_bilinear2d_backward': (_grad_case(lambda t: F.interpolate(t, scale_factor=2, mode='bilinear')),
                                     'upsample_bilinear2d_backward'),
    **_interp_cases(),
}
