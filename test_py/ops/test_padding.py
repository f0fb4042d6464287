"""Padding on the XLA device against eager CPU: constant, reflection and replication
padding (1-D to 3-D, negative padding that crops), values and gradients, float32,
float64 and bfloat16, bad input, and the counters."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import DEV, assert_same, check, check_grad, ids, lowered, make


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.float64], ids=ids)
def test_constant_pad(dtype):
  x = make((2, 3, 4), dtype)
  check(lambda t: F.pad(t, (1, 2)), x, ops=['constant_pad_nd'])
  check(lambda t: F.pad(t, (1, 0, 2, 1), value=3), x, ops=['constant_pad_nd'])
  check(lambda t: F.pad(t, (-1, 1, 0, 0, 1, 1)), x, ops=['constant_pad_nd'])
  check(lambda t: torch.constant_pad_nd(t, [0, 0, -1, -2]), x, ops=['constant_pad_nd'])


def test_constant_pad_backward():
  x = make((2, 3), torch.float32)
  xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
  for t in (xc, xd):
    (F.pad(t, (1, 2, -1, 1)) * 2).sum().backward()
  assert_same(xd.grad, xc.grad)


PADS = [
    ('reflect', (2, 3, 7), (2, 3)),
    ('reflect', (3, 7), (0, 6)),
    ('reflect', (2, 2, 5, 6), (1, 2, 3, 0)),
    ('reflect', (1, 2, 4, 5, 3), (1, 1, 2, 0, 3, 1)),
    ('replicate', (2, 3, 7), (2, 3)),
    ('replicate', (2, 2, 5, 6), (4, 0, 1, 7)),
    ('replicate', (2, 4, 5, 3), (1, 2, 0, 3, 2, 2)),
]


@pytest.mark.parametrize('mode,shape,pad', PADS)
@pytest.mark.parametrize('dtype', [torch.float32, torch.float64, torch.bfloat16], ids=ids)
def test_reflection_replication_pad(mode, shape, pad, dtype):
  k = len(pad) // 2
  op = ('reflection' if mode == 'reflect' else 'replication') + f'_pad{k}d'
  x = make(shape, dtype)
  check(lambda t: F.pad(t, pad, mode=mode), x, ops=[op])
  g = make(F.pad(x, pad, mode=mode).shape, dtype, seed=9)
  xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
  F.pad(xc, pad, mode=mode).backward(g)
  with lowered(op + '_backward'):
    F.pad(xd, pad, mode=mode).backward(g.to(DEV))
    xd.grad.cpu()
  assert_same(xd.grad, xc.grad, rtol=0.05 if dtype == torch.bfloat16 else None,
              atol=0.05 if dtype == torch.bfloat16 else None)


def test_pad_bad_input_raises():
  with pytest.raises(RuntimeError, match='reflection_pad1d|[Pp]adding'):
    F.pad(torch.ones(1, 2, 3, device=DEV), (3, 0), mode='reflect')
  # negative replication padding crops (as in eager), but not down to nothing
  with pytest.raises(RuntimeError, match='replication_pad2d: .*too small'):
    torch.ops.aten.replication_pad2d(torch.ones(1, 2, 3, 3, device=DEV), [-3, 0, 0, 0])
  check(lambda t: F.pad(t, (1, 1), mode='reflect'), torch.ones(1, 2, 3), ops=['reflection_pad1d'])


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


# ---- counter cases ------------------------------------------------------------

def _x(dtype=torch.float32):
  return make((4, 3), dtype).to(DEV)


def _pad_grad(mode, shape, pad):
  def run():
    x = make(shape, torch.float32).to(DEV).requires_grad_()
    F.pad(x, pad, mode=mode).sum().backward()
    return x.grad
  return run


COUNTER_CASES = {
    'constant_pad_nd': (lambda: F.pad(_x(), (1, 1)), 'constant_pad_nd'),
}
for _m, _name in (('reflect', 'reflection'), ('replicate', 'replication')):
  for _k, (_shape, _pad) in enumerate([((1, 2, 5), (1, 1)), ((1, 2, 5, 5), (1, 1, 1, 1)),
                                        ((1, 2, 4, 4, 4), (1, 1, 1, 1, 1, 1))], start=1):
    COUNTER_CASES[f'{_name}_pad{_k}d'] = (
        (lambda m, s, p: lambda: F.pad(make(s, torch.float32).to(DEV), p, mode=m))(_m, _shape, _pad),
        f'{_name}_pad{_k}d')
    COUNTER_CASES[f'{_name}_pad{_k}d_backward'] = (_pad_grad(_m, _shape, _pad), f'{_name}_pad{_k}d_backward')
