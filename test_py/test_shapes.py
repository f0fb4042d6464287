"""Shape ops on the XLA device against eager PyTorch on the CPU: cat/stack, splits,
unbind, strided slices, flip, roll, padding, tril/triu, repeat, diagonal, narrow, and
the factories eye/linspace/full/arange; values, dtype and shape, plus the counters.
"""

import contextlib

import pytest
import torch
import torch.nn.functional as F

from op_testing import ALL, DEV, FLOATS, INTS, assert_same, check, check_grad, ids, lowered, make, to_dev

DTYPES = ALL + [torch.float64, torch.bool]


@pytest.mark.parametrize('dtype', DTYPES, ids=ids)
def test_cat(dtype):
  a, b, c = make((2, 3), dtype, seed=1), make((4, 3), dtype, seed=2), make((1, 3), dtype, seed=3)
  check(lambda x, y, z: torch.cat([x, y, z]), a, b, c, ops=['cat'])
  check(lambda x, y: torch.cat([x.t(), y.t()], dim=-1), a, b, ops=['cat'])
  check(lambda x: torch.cat([x]), a, ops=['cat'])


def test_cat_promotes_and_skips_empty():
  a = make((2, 3), torch.int32, seed=1)
  b = make((1, 3), torch.float32, seed=2)
  c = make((2, 3), torch.bfloat16, seed=3)
  check(lambda x, y: torch.cat([x, y]), a, b, ops=['cat'])
  check(lambda x, y: torch.cat([x, y]), c, b, ops=['cat'])
  check(lambda x, y, z: torch.cat([x, y, z]), torch.zeros(0), a, b, ops=['cat'])  # legacy: 1-d empty skipped
  check(lambda x, y: torch.cat([x, y], dim=1), torch.zeros(2, 0), a, ops=['cat'])
  check(lambda x, y: torch.cat([x, y]), torch.zeros(0), torch.zeros(0, dtype=torch.int64), ops=['cat'])


@pytest.mark.parametrize('dim', [0, 1, 2, -1])
def test_stack(dim):
  a, b = make((2, 3), torch.float32, seed=1), make((2, 3), torch.float32, seed=2)
  check(lambda x, y: torch.stack([x, y], dim=dim), a, b, ops=['stack'])
  check(lambda x, y: torch.stack([x, y.double()], dim=dim), a, b, ops=['stack'])
  check(lambda x, y: torch.stack([x[0, 0], y[1, 1]]), a, b, ops=['stack'])  # 0-dim parts


def test_split_chunk_unbind():
  x = make((7, 4), torch.float32)
  check(lambda t: torch.split(t, 3), x, ops=['split_copy'])
  check(lambda t: torch.split(t, 2, dim=1), x, ops=['split_copy'])
  check(lambda t: torch.split(t, [1, 4, 2]), x, ops=['split_with_sizes_copy'])
  check(lambda t: torch.split(t, [3, 0, 1], dim=-1), x, ops=['split_with_sizes_copy'])
  check(lambda t: torch.chunk(t, 3), x)
  check(lambda t: torch.unbind(t, 1), x, ops=['unbind_copy'])
  check(lambda t: torch.unbind(t), make((3, 2), torch.int64), ops=['unbind_copy'])
  check(lambda t: [u * 2 for u in t.tensor_split(3)], x)


def test_split_backward():
  x = make((6, 4), torch.float32)
  xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
  for t in (xc, xd):
    a, b = torch.split(t, [2, 4])
    (a.sum() * 2 + (b * b).sum()).backward()
  assert_same(xd.grad, xc.grad)


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int64, torch.float64], ids=ids)
def test_strided_slices(dtype):
  x = make((9, 8), dtype)
  check(lambda t: t[::2], x, ops=['slice_copy'])
  check(lambda t: t[1::3, ::2], x, ops=['slice_copy'])
  check(lambda t: t[:, 1:7:4], x, ops=['slice_copy'])
  check(lambda t: t[-5::2, -1:], x, ops=['slice_copy'])


def test_strided_slice_write_and_backward():
  x = make((8, 6), torch.float32)
  def fn(t):
    t = t.clone()
    t[1::3, ::2] = 7.0
    return t
  check(fn, x)
  xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
  for t in (xc, xd):
    (t[::3, 1::2] * 3).sum().backward()
  assert_same(xd.grad, xc.grad)


@pytest.mark.parametrize('dtype', DTYPES, ids=ids)
def test_flip_roll(dtype):
  x = make((3, 4, 5), dtype)
  check(lambda t: torch.flip(t, [0, 2]), x, ops=['flip'])
  check(lambda t: torch.flip(t, [-1]), x, ops=['flip'])
  check(lambda t: torch.roll(t, 2, 1), x, ops=['roll'])
  check(lambda t: torch.roll(t, (-1, 7), (0, -1)), x, ops=['roll'])
  check(lambda t: torch.roll(t, 5), x, ops=['roll'])  # flattened


def test_flip_roll_edge_cases():
  check(lambda t: torch.flip(t, [0]), torch.zeros(0, 3), ops=['flip'])
  check(lambda t: torch.flip(t, []), make((2, 3), torch.float32), ops=['flip'])
  check(lambda t: torch.roll(t, 3, 0), torch.zeros(0, 3), ops=['roll'])
  check(lambda t: torch.roll(t, 0, 0), make((2, 3), torch.float32), ops=['roll'])


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


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int64, torch.bool, torch.float64], ids=ids)
@pytest.mark.parametrize('diag', [0, 1, -2, 5])
def test_tril_triu(dtype, diag):
  x = make((4, 5), dtype)
  check(lambda t: torch.tril(t, diag), x, ops=['tril'])
  check(lambda t: torch.triu(t, diag), x, ops=['triu'])
  check(lambda t: torch.triu(t, diag), make((2, 3, 4), dtype), ops=['triu'])


@pytest.mark.parametrize('dtype', [torch.float32, torch.int32, torch.bool, torch.float64], ids=ids)
def test_repeat(dtype):
  x = make((2, 3), dtype)
  check(lambda t: t.repeat(2, 3), x, ops=['repeat'])
  check(lambda t: t.repeat(3, 1, 2), x, ops=['repeat'])
  check(lambda t: t.repeat(1, 1), x, ops=['repeat'])
  check(lambda t: t.repeat(0, 2), x, ops=['repeat'])
  check(lambda t: t.repeat(4), torch.tensor(3.0).to(dtype), ops=['repeat'])


def test_repeat_backward():
  x = make((2, 3), torch.float32)
  xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
  for t in (xc, xd):
    (t.repeat(2, 2) * torch.arange(24.).reshape(4, 6).to(t.device)).sum().backward()
  assert_same(xd.grad, xc.grad)


@pytest.mark.parametrize('offset', [0, 1, -1, 3, -4, 9])
def test_diagonal(offset):
  x = make((4, 5), torch.float32)
  check(lambda t: torch.diagonal(t, offset), x, ops=['diagonal_copy'])
  y = make((2, 3, 4, 5), torch.int64)
  check(lambda t: torch.diagonal(t, offset, 1, 3), y, ops=['diagonal_copy'])
  check(lambda t: torch.diagonal(t, offset, -1, 0), y, ops=['diagonal_copy'])


@pytest.mark.parametrize('offset', [0, 1, -2, 7])
@pytest.mark.parametrize('shape,dims', [((4, 4), (0, 1)), ((3, 5), (0, 1)), ((2, 3, 4), (2, 0)), ((2, 5, 3), (-2, -1))])
def test_diagonal_backward(shape, dims, offset):
  x = make(shape, torch.float32)
  xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
  for t in (xc, xd):
    with lowered('diagonal_backward') if t is xd else contextlib.nullcontext():
      d = torch.diagonal(t, offset, *dims)
      (d * torch.arange(1., d.shape[-1] + 1).to(t.device)).sum().backward()
      t.grad.cpu()
  assert_same(xd.grad, xc.grad)


@pytest.mark.parametrize('offset', [0, 1, -1, 6])
def test_diagonal_scatter_and_writes(offset):
  x = make((3, 4, 5), torch.float32)
  src = make(torch.diagonal(x, offset, 1, 2).shape, torch.float32, seed=4)
  check(lambda t, s: torch.diagonal_scatter(t, s, offset, 1, 2), x, src, ops=['diagonal_scatter'])
  def write(t):
    t = t.clone()
    t.diagonal(offset, -1, -2).fill_(5.0)
    return t
  check(write, x, ops=['diagonal_scatter'])
  check(lambda t: torch.diag(t), make((4, 4), torch.int64), ops=['diagonal_copy'])
  check(lambda t: torch.diagonal(t).sum(), make((4, 4), torch.float32), ops=['diagonal_copy'])


@pytest.mark.parametrize('dtype', [torch.float32, torch.int64], ids=ids)
def test_unfold(dtype):
  x = make((3, 10), dtype)
  check(lambda t: t.unfold(1, 3, 2), x, ops=['unfold_copy'])
  check(lambda t: t.unfold(1, 4, 1), x, ops=['unfold_copy'])
  check(lambda t: t.unfold(0, 3, 3), x, ops=['unfold_copy'])
  check(lambda t: t.unfold(-1, 10, 5), x, ops=['unfold_copy'])
  check(lambda t: t.unfold(0, 1, 1), torch.tensor(2.0).to(dtype), ops=['unfold_copy'])


def test_unfold_backward():
  x = make((2, 9), torch.float32)
  xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
  for t in (xc, xd):
    (t.unfold(1, 3, 2) ** 2).sum().backward()
  assert_same(xd.grad, xc.grad)


AS_STRIDED = [
    ((3, 4), (4, 1), 0),  # contiguous reshape
    ((2, 2), (4, 1), 1),  # slice
    ((4, 3), (1, 4), 0),  # transpose
    ((3, 2, 4), (0, 4, 1), 4),  # expand
    ((2, 3), (6, 2), 0),  # strided slice
    ((4,), (5,), 0),  # diagonal of 4x4 pattern (what fill_diagonal_ uses)
    ((1, 3, 1, 2), (7, 5, 3, 1), 2),  # size-1 dims with odd strides
    ((0, 3), (3, 1), 0),
    ((), (), 7),
]


@pytest.mark.parametrize('size,stride,offset', AS_STRIDED)
def test_as_strided(size, stride, offset):
  x = make((4, 4), torch.float32)
  check(lambda t: torch.as_strided(t, size, stride, offset) * 1, x, ops=['as_strided_copy'])


@pytest.mark.parametrize('size,stride,offset', [a for a in AS_STRIDED if 0 not in a[1] or a[0][a[1].index(0)] == 1])
def test_as_strided_scatter(size, stride, offset):
  x = make((4, 4), torch.float32)
  src = make(size, torch.float32, seed=3)
  check(lambda t, s: torch.as_strided_scatter(t, s, size, stride, offset), x, src, ops=['as_strided_scatter'])


def test_fill_diagonal():
  def fn(t):
    t = t.clone()
    t.fill_diagonal_(2.5)
    return t
  check(fn, make((4, 4), torch.float32), ops=['as_strided_scatter'])
  check(fn, make((5, 3), torch.float32), ops=['as_strided_scatter'])


def test_as_strided_below_functionalization():
  # conv1d runs as a 2-d convolution on unsqueezed views, built by composite kernels
  # below functionalization with as_strided; block_diag does the same.
  x = make((2, 3, 9), torch.float32)
  w = make((4, 3, 3), torch.float32, seed=2)
  xc, wc = x.clone().requires_grad_(), w.clone().requires_grad_()
  xd, wd = x.to(DEV).requires_grad_(), w.to(DEV).requires_grad_()
  F.conv1d(xc, wc, padding=1).pow(2).sum().backward()
  with lowered('as_strided'):
    out = F.conv1d(xd, wd, padding=1)
    out.pow(2).sum().backward()
    xd.grad.cpu()
  assert_same(out, F.conv1d(x, w, padding=1))
  assert_same(xd.grad, xc.grad, rtol=1e-4, atol=1e-4)
  assert_same(wd.grad, wc.grad, rtol=1e-4, atol=1e-4)
  check(lambda a, b: torch.block_diag(a, b), make((2, 3), torch.float32), make((1, 2), torch.float32),
        ops=['block_diag'])


def test_block_diag():
  check(lambda a, b, c: torch.block_diag(a, b, c), make((2, 3), torch.float32), make((4,), torch.int64),
        torch.tensor(5.0, dtype=torch.float64), ops=['block_diag'])
  check(lambda a, b: torch.block_diag(a, b), make((0, 2), torch.float32), make((3, 1), torch.float32),
        ops=['block_diag'])
  with pytest.raises(RuntimeError, match='block_diag'):
    torch.block_diag(torch.ones(2, 2, 2, device=DEV))


@pytest.mark.parametrize('size,stride,offset', [((4, 3), (1, 1), 0), ((3, 4), (2, 1), 1), ((2, 3, 2), (3, 2, 1), 0),
                                                ((5, 2), (1, 3), 2)])
def test_as_strided_overlapping_or_irregular_gathers(size, stride, offset):
  # overlapping windows (stft's frames) and strides that are not multiples of each other
  check(lambda t: torch.as_strided(t, size, stride, offset) * 1, torch.arange(10.), ops=['as_strided_copy'])


def test_as_strided_past_the_storage_end_raises():
  x = torch.arange(10.).to(DEV)
  with pytest.raises(RuntimeError, match='as_strided_copy'):
    torch.as_strided(x, (4, 4), (4, 1)).cpu()


@pytest.mark.parametrize('offset,dims', [(0, (-2, -1)), (1, (0, 2)), (-2, (2, 0)), (3, (1, -1))])
def test_diag_embed(offset, dims):
  check(lambda t: torch.diag_embed(t, offset, *dims), make((2, 3), torch.float32), ops=['diag_embed'])
  check(lambda t: torch.diag(t, offset), make((4,), torch.int64), ops=['diag_embed'])


def test_diag_embed_backward():
  x = make((2, 3), torch.float32)
  xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
  for t in (xc, xd):
    (torch.diag_embed(t, 1) * torch.arange(32.).reshape(2, 4, 4).to(t.device)).sum().backward()
  assert_same(xd.grad, xc.grad)


@pytest.mark.parametrize('k', [0, 1, 2, 3, -1, 5])
@pytest.mark.parametrize('dims', [(0, 1), (1, 0), (-1, 0), (2, 1)])
def test_rot90(k, dims):
  check(lambda t: torch.rot90(t, k, dims), make((2, 3, 4), torch.float32), ops=['rot90'])


@pytest.mark.parametrize('src,dst', [(torch.float32, torch.int32), (torch.int32, torch.float32),
                                     (torch.float32, torch.int16), (torch.float32, torch.uint8),
                                     (torch.int16, torch.float32), (torch.float64, torch.int64),
                                     (torch.bfloat16, torch.int16), (torch.int8, torch.float32)])
def test_view_dtype(src, dst):
  check(lambda t: t.view(dst) * 1, make((2, 8), src), ops=['view_copy'])


def test_narrow():
  x = make((5, 6), torch.float32)
  check(lambda t: torch.narrow_copy(t, 1, 2, 3), x, ops=['narrow_copy'])
  check(lambda t: torch.narrow_copy(t, 0, -2, 2), x, ops=['narrow_copy'])
  check(lambda t: torch.narrow(t, -1, 1, 4) * 2, x)


def test_factories():
  with lowered('eye'):
    assert_same(torch.eye(3, device=DEV), torch.eye(3))
    assert_same(torch.eye(2, 4, device=DEV, dtype=torch.int64), torch.eye(2, 4, dtype=torch.int64))
    assert_same(torch.eye(3, 0, device=DEV), torch.eye(3, 0))
  with lowered('linspace'):
    assert_same(torch.linspace(-1, 2, 7, device=DEV), torch.linspace(-1, 2, 7))
    assert_same(torch.linspace(0, 1, 1, device=DEV), torch.linspace(0, 1, 1))
    assert_same(torch.linspace(0, 1, 0, device=DEV), torch.linspace(0, 1, 0))
    assert_same(torch.linspace(3, -4, 10, device=DEV, dtype=torch.float64),
                torch.linspace(3, -4, 10, dtype=torch.float64))
    assert_same(torch.linspace(0, 10, 4, device=DEV, dtype=torch.int64), torch.linspace(0, 10, 4, dtype=torch.int64))
  with lowered():
    assert_same(torch.full((2, 3), 2.5, device=DEV), torch.full((2, 3), 2.5))
    assert_same(torch.full((2,), 7, device=DEV), torch.full((2,), 7))
    assert_same(torch.zeros(2, 3, device=DEV, dtype=torch.float64), torch.zeros(2, 3, dtype=torch.float64))
    assert_same(torch.ones(4, device=DEV, dtype=torch.int32), torch.ones(4, dtype=torch.int32))
    x = make((2, 3), torch.float32).to(DEV)
    assert torch.empty_like(x).shape == (2, 3)
    assert_same(torch.zeros_like(x), torch.zeros(2, 3))
    assert_same(torch.ones_like(x, dtype=torch.float64), torch.ones(2, 3, dtype=torch.float64))
    assert_same(torch.full_like(x, 3), torch.full((2, 3), 3.0))
    assert_same(torch.arange(0, 1, 0.1, device=DEV), torch.arange(0, 1, 0.1))
    assert_same(torch.arange(-1.5, 2.25, 0.25, device=DEV, dtype=torch.float64),
                torch.arange(-1.5, 2.25, 0.25, dtype=torch.float64))
    assert_same(torch.arange(10, 0, -3, device=DEV), torch.arange(10, 0, -3))


BAD = [
    ('cat', lambda: torch.cat([torch.ones(2, 3, device=DEV), torch.ones(2, 4, device=DEV)])),
    ('cat', lambda: torch.cat([torch.ones(2, 3, device=DEV), torch.ones(3, device=DEV)])),
    ('cat', lambda: torch.cat([torch.tensor(1.0, device=DEV)])),
    ('split', lambda: torch.split(torch.ones(4, device=DEV), [1, 2])),
    ('flip', lambda: torch.flip(torch.ones(2, 3, device=DEV), [0, 0])),
    ('flip', lambda: torch.flip(torch.ones(2, 3, device=DEV), [2])),
    ('roll', lambda: torch.roll(torch.ones(2, 3, device=DEV), (1, 2), (0,))),
    ('pad', lambda: F.pad(torch.ones(2, 3, device=DEV), (1,))),
    ('pad', lambda: F.pad(torch.ones(2, 3, device=DEV), (-2, -2))),
    ('tril', lambda: torch.tril(torch.ones(3, device=DEV))),
    ('repeat', lambda: torch.ones(2, 3, device=DEV).repeat(2)),
    ('diagonal', lambda: torch.diagonal(torch.ones(2, 3, device=DEV), 0, 1, 1)),
    ('narrow', lambda: torch.narrow_copy(torch.ones(2, 3, device=DEV), 1, 2, 3)),
    ('rot90', lambda: torch.rot90(torch.ones(2, 3, device=DEV), 1, (0, 0))),
    ('view', lambda: torch.ones(2, 3, device=DEV).view(torch.float64)),
    ('diag_embed', lambda: torch.diag_embed(torch.ones(2, 3, device=DEV), 0, 1, 1)),
    ('stack', lambda: torch.stack([torch.ones(2, device=DEV), torch.ones(3, device=DEV)])),
    ('unfold', lambda: torch.ones(2, 3, device=DEV).unfold(1, 4, 1)),
    ('diagonal_scatter', lambda: torch.diagonal_scatter(torch.ones(3, 3, device=DEV), torch.ones(2, device=DEV))),
]


@pytest.mark.parametrize('op,fn', BAD, ids=[f'{b[0]}{i}' for i, b in enumerate(BAD)])
def test_bad_input_raises(op, fn):
  with pytest.raises((RuntimeError, ValueError, IndexError)) as e:
    fn()
  msg = str(e.value).lower()
  assert op in msg or 'size' in msg or 'dim' in msg or 'pad' in msg, msg
  check(lambda t: torch.cat([t, t]), torch.ones(2), ops=['cat'])  # the process lives on


def _x(dtype=torch.float32):
  return make((4, 3), dtype).to(DEV)


@pytest.mark.parametrize('args', [(1, 3, 2), (1, 4, 1), (0, 3, 3), (-1, 10, 5), (1, 2, 3)], ids=str)
def test_unfold_gradient(args):
  # Overlapping windows add up, skipped elements get zero (unfold_backward).
  check_grad(lambda t: t.unfold(*args), make((5, 10), torch.float32), ops=['unfold_backward'])


def test_unfold_gradient_of_a_scalar():
  check_grad(lambda t: t.unfold(0, 1, 1) * 3, torch.tensor(2.0), ops=['unfold_backward'])


@pytest.mark.parametrize('dtype', [torch.float32, torch.int64], ids=ids)
def test_efficient_zero_tensor_is_zeros(dtype):
  with lowered('_efficientzerotensor'):
    z = torch.ops.aten._efficientzerotensor([2, 3], dtype=dtype, device=DEV)
  assert_same(z, torch.zeros(2, 3, dtype=dtype))
  # sgn's gradient is one of them.
  check_grad(torch.sgn, make((4,), torch.float32), ops=['_efficientzerotensor'])


COUNTER_CASES = {
    'cat': (lambda: torch.cat([_x(), _x()]), 'cat'),
    'split_copy.Tensor': (lambda: torch.split(_x(), 3), 'split_copy'),
    'split_with_sizes_copy': (lambda: torch.split(_x(), [1, 3]), 'split_with_sizes_copy'),
    'unbind_copy.int': (lambda: torch.unbind(_x()), 'unbind_copy'),
    'narrow_copy': (lambda: torch.narrow_copy(_x(), 0, 1, 2), 'narrow_copy'),
    'flip': (lambda: torch.flip(_x(), [0]), 'flip'),
    'roll': (lambda: torch.roll(_x(), 1, 0), 'roll'),
    'constant_pad_nd': (lambda: F.pad(_x(), (1, 1)), 'constant_pad_nd'),
    'tril': (lambda: torch.tril(_x()), 'tril'),
    'triu': (lambda: torch.triu(_x()), 'triu'),
    'repeat': (lambda: _x().repeat(2, 1), 'repeat'),
    'diagonal_copy': (lambda: torch.diagonal(_x()), 'diagonal_copy'),
    'eye.out': (lambda: torch.eye(3, device=DEV), 'eye'),
    'eye.m_out': (lambda: torch.eye(3, 4, device=DEV), 'eye'),
    'linspace.out': (lambda: torch.linspace(0, 1, 5, device=DEV), 'linspace'),
    'diag_embed': (lambda: torch.diag_embed(_x()), 'diag_embed'),
    'rot90': (lambda: torch.rot90(_x()), 'rot90'),
    'view_copy.dtype': (lambda: _x().view(torch.int32) * 1, 'view_copy'),
    'stack': (lambda: torch.stack([_x(), _x()]), 'stack'),
    'unfold_copy': (lambda: _x().unfold(0, 2, 1), 'unfold_copy'),
    'unfold_backward': (lambda: torch.ops.aten.unfold_backward(torch.ones(2, 2, device=DEV), [3], 0, 2, 1),
                        'unfold_backward'),
    '_efficientzerotensor': (lambda: torch.ops.aten._efficientzerotensor([2, 3], device=DEV), '_efficientzerotensor'),
    'as_strided': (lambda: F.conv1d(make((1, 2, 5), torch.float32).to(DEV), make((3, 2, 2), torch.float32).to(DEV)),
                   'as_strided'),
    'block_diag': (lambda: torch.block_diag(_x(), _x()), 'block_diag'),
    'as_strided_copy': (lambda: torch.as_strided(_x(), (2, 2), (3, 1), 1), 'as_strided_copy'),
    'diagonal_backward': (lambda: torch.ops.aten.diagonal_backward(_x()[0, :3], [3, 4], 0, 0, 1), 'diagonal_backward'),
    'diagonal_scatter': (lambda: torch.diagonal_scatter(_x(), _x()[0]), 'diagonal_scatter'),
    'as_strided_scatter': (lambda: torch.as_strided_scatter(_x(), _x()[0, :2], (2,), (4,), 1), 'as_strided_scatter'),
}


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


def _pad_grad(mode, shape, pad):
  def run():
    x = make(shape, torch.float32).to(DEV).requires_grad_()
    F.pad(x, pad, mode=mode).sum().backward()
    return x.grad
  return run


for _m, _name in (('reflect', 'reflection'), ('replicate', 'replication')):
  for _k, (_shape, _pad) in enumerate([((1, 2, 5), (1, 1)), ((1, 2, 5, 5), (1, 1, 1, 1)),
                                        ((1, 2, 4, 4, 4), (1, 1, 1, 1, 1, 1))], start=1):
    COUNTER_CASES[f'{_name}_pad{_k}d'] = (
        (lambda m, s, p: lambda: F.pad(make(s, torch.float32).to(DEV), p, mode=m))(_m, _shape, _pad),
        f'{_name}_pad{_k}d')
    COUNTER_CASES[f'{_name}_pad{_k}d_backward'] = (_pad_grad(_m, _shape, _pad), f'{_name}_pad{_k}d_backward')


def _pieces_recombined(pieces):
  """A function of x that takes x apart with `pieces` and sums each piece's weighted
  image, so that the backward adds one zero-padded gradient per piece."""

  def fn(x):
    parts = pieces(x)
    return sum((p * (i + 1.5)).sin().sum() for i, p in enumerate(parts))

  return fn


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('name,pieces', [
    ('select', lambda x: [x[2], x[0], x[1]]),
    ('unbind_dim1', lambda x: torch.unbind(x, 1)),
    ('chunk', lambda x: torch.chunk(x, 2, dim=2)),
    ('narrow_inner', lambda x: [x[:, :, 1:2], x[:, :, 2:4], x[1:3, :, 0:1]]),
    ('overlapping', lambda x: [x[0:2], x[1:3], x[0]]),
    ('strided', lambda x: [x[0::2], x[1::2]]),
    ('gap', lambda x: [x[0], x[2]]),
],
                         ids=lambda v: v if isinstance(v, str) else '')
def test_gradients_of_pieces_add_up(dtype, name, pieces):
  # Adjacent zero-padded gradients are joined into one concatenation; overlapping,
  # strided and gapped ones are added as they are. Every case matches eager.
  x = make((3, 4, 4), dtype, seed=5)
  check_grad(_pieces_recombined(pieces), x)


def test_adjacent_piece_gradients_become_one_concatenation():
  import torch_xla
  x = torch.randn(3, 8, device=DEV, requires_grad=True)
  q, k, v = x[0], x[1], x[2]
  (q * 2 + k * 3 + v * 4).sum().backward()
  text = torch_xla._XLAC._get_xla_tensors_text([x.grad])
  assert 'concatenate' in text and 'select' not in text and 'stablehlo.pad' not in text, text
  torch.testing.assert_close(x.grad.cpu(), torch.tensor([2.0, 3.0, 4.0]).repeat_interleave(8).reshape(3, 8))
