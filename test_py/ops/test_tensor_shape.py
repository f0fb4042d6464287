"""Shape and view ops on the XLA device against eager PyTorch on the CPU: views (view,
reshape, permute, transpose, expand, slice, select, squeeze, unsqueeze, alias, view as
another dtype), slice_scatter / select_scatter, writes through views, cat / stack,
splits, unbind, strided slices, flip, roll, tril / triu, repeat, diagonal, unfold,
as_strided, block_diag, diag_embed, rot90, narrow, _chunk_cat, tensor_split and
resize_; values, dtype and shape, gradients, bad input, and the counters."""

import contextlib

import pytest
import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from testing.op_testing import ALL, DEV, FLOATS, assert_same, check, check_grad, ids, lowered, make, to_dev
from testing.counter_cases import floats as _f, positive as _pos


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


@pytest.mark.parametrize('args', [(1, 3, 2), (1, 4, 1), (0, 3, 3), (-1, 10, 5), (1, 2, 3)], ids=str)
def test_unfold_gradient(args):
  # Overlapping windows add up, skipped elements get zero (unfold_backward).
  check_grad(lambda t: t.unfold(*args), make((5, 10), torch.float32), ops=['unfold_backward'])


def test_unfold_gradient_of_a_scalar():
  check_grad(lambda t: t.unfold(0, 1, 1) * 3, torch.tensor(2.0), ops=['unfold_backward'])


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


# ------------------------------------------------------------------- views


def test_view_ops():
  x = make((2, 3, 4), torch.float32, seed=1)
  check(lambda t: t.view(6, 4), x, ops=['view_copy'])
  check(lambda t: t.view(-1), x, ops=['view_copy'])
  check(lambda t: t.reshape(4, -1, 2), x, ops=['view_copy'])
  check(lambda t: torch.ops.aten._unsafe_view(t, [3, 8]), x, ops=['_unsafe_view'])
  check(lambda t: t.permute(2, 0, 1), x, ops=['permute_copy'])
  check(lambda t: t.permute(-1, -3, -2), x, ops=['permute_copy'])
  check(lambda t: t.transpose(0, 2), x, ops=['transpose_copy'])
  check(lambda t: t.transpose(-1, 1), x, ops=['transpose_copy'])
  check(lambda t: t[0].t(), x, ops=['t_copy'])
  check(lambda t: t[0, 0].t(), x, ops=['t_copy'])
  check(lambda t: t[:, :1].expand(5, 2, 3, 4), x, ops=['expand_copy'])
  check(lambda t: t[:, :1].expand(-1, 3, -1), x, ops=['expand_copy'])
  check(lambda t: t[0, 0, 0].expand(2, 3), x, ops=['expand_copy'])
  check(lambda t: t[:, 1:3], x, ops=['slice_copy'])
  check(lambda t: t[..., ::2], x, ops=['slice_copy'])
  check(lambda t: t[:, -2:], x, ops=['slice_copy'])
  check(lambda t: t[:, 1:100:2], x, ops=['slice_copy'])
  check(lambda t: t[:, 2:1], x, ops=['slice_copy'])
  check(lambda t: t[1], x, ops=['select_copy'])
  check(lambda t: t[:, -1], x, ops=['select_copy'])
  check(lambda t: t.select(2, 3), x, ops=['select_copy'])
  check(lambda t: t.unsqueeze(0), x, ops=['unsqueeze_copy'])
  check(lambda t: t.unsqueeze(-1), x, ops=['unsqueeze_copy'])
  check(lambda t: t.unsqueeze(2), x, ops=['unsqueeze_copy'])
  y = make((1, 3, 1, 4), torch.float32, seed=2)
  check(lambda t: t.squeeze(), y, ops=['squeeze_copy'])
  check(lambda t: t.squeeze(0), y, ops=['squeeze_copy'])
  check(lambda t: t.squeeze(1), y, ops=['squeeze_copy'])  # not size 1: unchanged
  check(lambda t: t.squeeze(-2), y, ops=['squeeze_copy'])
  check(lambda t: t.squeeze((0, 2)), y, ops=['squeeze_copy'])
  check(lambda t: t.squeeze((0, 1)), y, ops=['squeeze_copy'])
  check(lambda t: torch.ops.aten.alias(t), x, ops=['alias_copy'])
  check(lambda t: t.detach(), x, ops=['detach_copy'])
  check(lambda t: torch.tensor(1.0).to(t.device).squeeze(), x)


@pytest.mark.parametrize('dtype', [torch.bfloat16, torch.int32, torch.bool], ids=ids)
def test_view_ops_other_dtypes(dtype):
  x = make((2, 3, 4), dtype, seed=1)
  check(lambda t: t.permute(1, 2, 0)[1:, ::2].reshape(-1).unsqueeze(0).expand(2, -1), x)


def test_view_errors():
  x = torch.ones(2, 3, device=DEV)
  with pytest.raises(RuntimeError):
    x.view(4, 2)
  with pytest.raises(RuntimeError):
    x.permute(0, 0)
  with pytest.raises(RuntimeError):
    x.expand(3, 3)
  with pytest.raises((RuntimeError, IndexError)):
    x[5]
  with pytest.raises((RuntimeError, IndexError)):
    x.select(1, 3)
  with pytest.raises((RuntimeError, IndexError)):
    x.unsqueeze(4)
  assert torch.equal(x.view(3, 2).cpu(), torch.ones(3, 2))


def test_scatter_ops_direct():
  base = make((4, 5), torch.float32, seed=1)
  src = make((4, 2), torch.float32, seed=2)
  check(lambda b, s: torch.slice_scatter(b, s, 1, 1, 5, 2), base, src, ops=['slice_scatter'])
  check(lambda b, s: torch.slice_scatter(b, s, 1, -2), base, src, ops=['slice_scatter'])
  row = make((1, 5), torch.float32, seed=3)
  check(lambda b, s: torch.slice_scatter(b, s, 0, 3), base, row, ops=['slice_scatter'])
  check(lambda b, s: torch.slice_scatter(b, s, 0, 1, 3, 2), base, row, ops=['slice_scatter'])
  check(lambda b, s: torch.select_scatter(b, s[:, 0], 1, 3), base, src, ops=['select_scatter'])
  check(lambda b, s: torch.select_scatter(b, s[0], 0, -1), base, row, ops=['select_scatter'])
  check(lambda b, s: torch.select_scatter(b, s[0, :1], 0, 1), base[:, :1].contiguous(), row,
        ops=['select_scatter'])
  check(lambda b, s: torch.slice_scatter(b, s.int(), 1, 0, 2), base, src, ops=['slice_scatter'])


def test_slice_scatter_wrong_size_raises():
  with pytest.raises(RuntimeError):
    torch.slice_scatter(torch.zeros(4, 5, device=DEV), torch.ones(4, 3, device=DEV), 1, 0, 2)


def _through_views(cases):
  for name, fn, ops in cases:
    x = make((3, 4), torch.float32, seed=7)
    expected = x.clone()
    fn(expected)
    dx = x.to(DEV)
    with lowered(*ops):
      fn(dx)
    assert_same(dx, expected)


def test_inplace_through_views():
  _through_views([
      ('select add_', lambda t: t[1].add_(1), ['select_copy', 'select_scatter', 'add']),
      ('view mul_', lambda t: t.view(2, 6).mul_(2), ['view_copy', 'mul']),
      ('t add_', lambda t: t.t().add_(1), ['t_copy', 'add']),
      ('slice zero_', lambda t: t[::2].zero_(), ['slice_copy', 'slice_scatter', 'zero']),
      ('col slice mul_', lambda t: t[:, 1:3].mul_(-1), ['slice_copy', 'slice_scatter', 'mul']),
      ('nested', lambda t: t[1:][:, 2].sub_(5), ['slice_copy', 'select_copy', 'select_scatter', 'slice_scatter',
                                                   'sub']),
      ('permute', lambda t: t.unsqueeze(0).permute(2, 0, 1)[0].add_(10), ['permute_copy', 'add']),
      ('fill_ col', lambda t: t[:, 0].fill_(5), ['fill', 'select_scatter']),
      ('clamp_ row', lambda t: t[2].clamp_(0, 0.1), ['clamp']),
      ('squeeze', lambda t: t.unsqueeze(1).squeeze(1)[0].relu_(), ['relu']),
  ])


def test_setitem():
  _through_views([
      ('col = 5', lambda t: t.__setitem__((slice(None), 0), 5), ['select_scatter']),
      ('row = tensor', lambda t: t.__setitem__(1, torch.arange(4.0, device=t.device)), ['select_scatter']),
      ('block = 0', lambda t: t.__setitem__((slice(0, 2), slice(1, 3)), 0), ['slice_scatter']),
  ])


def test_views_see_base_updates():
  x = torch.zeros(3, 4, device=DEV)
  v = x.view(12)
  row = x[1]
  tt = x.t()
  x.add_(1)
  x[1, 2] = 7
  expected = torch.ones(3, 4)
  expected[1, 2] = 7
  assert torch.equal(v.cpu(), expected.view(12))
  assert torch.equal(row.cpu(), expected[1])
  assert torch.equal(tt.cpu(), expected.t())
  # A write through one view shows in the base and in the other views.
  row.mul_(2)
  expected[1].mul_(2)
  assert torch.equal(x.cpu(), expected)
  assert torch.equal(v.cpu(), expected.view(12))
  assert torch.equal(tt.cpu(), expected.t())


def test_view_values_after_mark_step():
  x = torch.arange(12.0, device=DEV).view(3, 4)
  y = x[:, 1]
  xm.mark_step()
  y.add_(100)
  xm.mark_step()
  expected = torch.arange(12.0).view(3, 4)
  expected[:, 1] += 100
  assert torch.equal(x.cpu(), expected)


def _view_below_functionalization(x, size):
  """aten::view as a composite kernel calls it: on the unwrapped XLA tensor."""
  inner = torch._from_functional_tensor(x)
  with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.Functionalize)):
    out = inner.view(size)
  return torch._to_functional_tensor(out)


def test_view_below_functionalization_reshapes():
  x = make((2, 6), torch.float32, seed=4)
  with lowered('view'):
    got = _view_below_functionalization(x.to(DEV), [4, 3])
  assert_same(got, x.view(4, 3))


# ---- tensor_split ------------------------------------------------------------

def test_tensor_split_cpu_indices():
  x = make((7, 3), torch.float32)
  check(lambda t: torch.tensor_split(t, torch.tensor([1, 4]), 0), x)
  # Eager (on CUDA too) needs the split points on the CPU: a clear error otherwise.
  with pytest.raises(RuntimeError, match='tensor_split expected tensor_indices_or_sections to be on cpu'):
    torch.tensor_split(to_dev(x), to_dev(torch.tensor([1, 4])), 0)


# ---- _chunk_cat ----------------------------------------------------------------------------


@pytest.mark.parametrize('dim', [0, 1, -1])
def test_chunk_cat(dim):
  ts = [make((2, 3, 4), torch.float32), make((2, 5), torch.float32, seed=1)]
  if dim == -1:
    ts = [make((2, 3, 5), torch.float32), make((2, 3, 2), torch.float32, seed=1)]
  check(lambda *xs: torch._chunk_cat(list(xs), dim, 2), *ts, ops=('_chunk_cat',))
  check(lambda *xs: torch._chunk_cat(list(xs), dim, 3), *ts, ops=('_chunk_cat',))


# ---- resize_ -------------------------------------------------------------------------------


@pytest.mark.parametrize('size', [(3, 4), (2, 6), (12,), (2, 3), (5,), (0,)], ids=str)
def test_resize_same_numel_or_shrinking(size):
  # Same element count or fewer: the first elements in row-major order, as in eager.
  def fn(t):
    t = t.clone()
    t.resize_(size)
    return t

  check(fn, make((3, 4), torch.float32), ops=('resize_',))
  check(lambda t: t.clone().resize_as_(torch.empty(size)), make((3, 4), torch.float32), ops=('resize_',))


def test_resize_growing_keeps_the_first_elements():
  x = make((2, 3), torch.float32)
  t = to_dev(x.clone())
  t.resize_(3, 3)
  assert t.shape == (3, 3)
  torch.testing.assert_close(t.cpu().flatten()[:6], x.flatten())


# ---- counter cases ------------------------------------------------------------

def _x(dtype=torch.float32):
  return make((4, 3), dtype).to(DEV)


def _grad_of(fn):
  def run():
    x = make((3, 4), torch.float32, seed=5).to(DEV).requires_grad_()
    fn(x).sum().backward()
    return x.grad
  return run


COUNTER_CASES = {
    'cat': (lambda: torch.cat([_x(), _x()]), 'cat'),
    'split_copy.Tensor': (lambda: torch.split(_x(), 3), 'split_copy'),
    'split_with_sizes_copy': (lambda: torch.split(_x(), [1, 3]), 'split_with_sizes_copy'),
    'unbind_copy.int': (lambda: torch.unbind(_x()), 'unbind_copy'),
    'narrow_copy': (lambda: torch.narrow_copy(_x(), 0, 1, 2), 'narrow_copy'),
    'flip': (lambda: torch.flip(_x(), [0]), 'flip'),
    'roll': (lambda: torch.roll(_x(), 1, 0), 'roll'),
    'tril': (lambda: torch.tril(_x()), 'tril'),
    'triu': (lambda: torch.triu(_x()), 'triu'),
    'repeat': (lambda: _x().repeat(2, 1), 'repeat'),
    'diagonal_copy': (lambda: torch.diagonal(_x()), 'diagonal_copy'),
    'diag_embed': (lambda: torch.diag_embed(_x()), 'diag_embed'),
    'rot90': (lambda: torch.rot90(_x()), 'rot90'),
    'view_copy.dtype': (lambda: _x().view(torch.int32) * 1, 'view_copy'),
    'stack': (lambda: torch.stack([_x(), _x()]), 'stack'),
    'unfold_copy': (lambda: _x().unfold(0, 2, 1), 'unfold_copy'),
    'unfold_backward': (lambda: torch.ops.aten.unfold_backward(torch.ones(2, 2, device=DEV), [3], 0, 2, 1),
                        'unfold_backward'),
    'as_strided': (lambda: F.conv1d(make((1, 2, 5), torch.float32).to(DEV), make((3, 2, 2), torch.float32).to(DEV)),
                   'as_strided'),
    'block_diag': (lambda: torch.block_diag(_x(), _x()), 'block_diag'),
    'as_strided_copy': (lambda: torch.as_strided(_x(), (2, 2), (3, 1), 1), 'as_strided_copy'),
    'diagonal_backward': (lambda: torch.ops.aten.diagonal_backward(_x()[0, :3], [3, 4], 0, 0, 1), 'diagonal_backward'),
    'diagonal_scatter': (lambda: torch.diagonal_scatter(_x(), _x()[0]), 'diagonal_scatter'),
    'as_strided_scatter': (lambda: torch.as_strided_scatter(_x(), _x()[0, :2], (2,), (4,), 1), 'as_strided_scatter'),
    'view_copy': (lambda: _pos().view(6), 'view_copy'),
    '_unsafe_view': (lambda: torch.ops.aten._unsafe_view(_pos(), [6]), '_unsafe_view'),
    'view': (lambda: _view_below_functionalization(_pos(), [3, 2]), 'view'),
    'permute_copy': (lambda: _pos().permute(1, 0), 'permute_copy'),
    'transpose_copy.int': (lambda: _pos().transpose(0, 1), 'transpose_copy'),
    't_copy': (lambda: _pos().t(), 't_copy'),
    'expand_copy': (lambda: _pos()[:1].expand(4, 3), 'expand_copy'),
    'slice_copy.Tensor': (lambda: _pos()[:, 1:], 'slice_copy'),
    'select_copy.int': (lambda: _pos()[1], 'select_copy'),
    'unsqueeze_copy': (lambda: _pos().unsqueeze(1), 'unsqueeze_copy'),
    'squeeze_copy': (lambda: _pos()[None].squeeze(), 'squeeze_copy'),
    'squeeze_copy.dim': (lambda: _pos()[None].squeeze(0), 'squeeze_copy'),
    'squeeze_copy.dims': (lambda: _pos()[None, :, None].squeeze((0, 2)), 'squeeze_copy'),
    'alias_copy': (lambda: torch.ops.aten.alias(_pos()), 'alias_copy'),
    'detach_copy': (lambda: _pos().detach(), 'detach_copy'),
    'slice_scatter': (lambda: torch.slice_scatter(_pos(), _pos()[:, :1], 1, 0, 1), 'slice_scatter'),
    'select_scatter': (lambda: torch.select_scatter(_pos(), _pos()[0], 0, 1), 'select_scatter'),
    'resize_': (lambda: _f().resize_(2, 2), 'resize_'),
    '_chunk_cat': (lambda: torch._chunk_cat([_f(), _f()], 1, 2), '_chunk_cat'),
}
COUNTER_CASES['slice_backward'] = (_grad_of(lambda x: x[:, 1:3]), 'slice_backward')
COUNTER_CASES['select_backward'] = (_grad_of(lambda x: x[1]), 'select_backward')


@pytest.mark.parametrize('view,size,stride,offset', [
    (lambda t: t[:, ::2], (5, 5), (5, 1), 0),  # back to the whole tensor from a strided slice
    (lambda t: t[1:], (2,), (1,), None),  # the slice's own storage offset (5)
    (lambda t: t[1:], (3,), (2,), 1),  # an offset given: counted from the storage's start
    (lambda t: t[1:][:, 2:], (2, 2), (5, 1), None),  # a slice of a slice: offset 7
    (lambda t: t.as_strided((2, 2), (5, 1), 6), (2,), (1,), None),  # as_strided of as_strided
], ids=['strided-slice', 'implicit-offset', 'given-offset', 'slice-of-slice', 'as-strided-twice'])
def test_as_strided_of_a_view_indexes_the_storage_it_shares(view, size, stride, offset):
  # Eager's as_strided reads the storage a view shares with the tensor it was cut from,
  # not the view's own elements.
  def f(t):
    t = t * 1  # a tensor of the graph, not the test's input
    return view(t).as_strided(size, stride, offset) * 1

  check(f, torch.arange(25.0).reshape(5, 5), ops=['as_strided_copy'])


def test_as_strided_of_a_view_follows_updates_of_its_base():
  def f(t):
    t = t * 1
    v = t[:, ::2]
    t.add_(100)
    return v.as_strided((2,), (1,), 3) * 1

  check(f, torch.arange(25.0).reshape(5, 5), ops=['as_strided_copy'])
