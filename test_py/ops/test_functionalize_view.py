"""The Functionalize-key kernel of aten::view (cpp/aten/functionalize_view.cpp).

A view of an XLA tensor checks its sizes and builds the reshaped value itself instead
of running the view on meta tensors first. These tests compare what a view exposes
(values, dtype, sizes, errors) with eager PyTorch on the CPU, check that XLA views keep
reporting the contiguous strides of their value as every XLA tensor does, that
functionalization still replays and undoes the view when either side is mutated, and
that tensors of other backends still get PyTorch's own kernel.
"""

import re

import pytest
import torch
import torch_xla.debug.metrics as met

from testing.op_testing import DEV, assert_same, counter, fallbacks, make

# (input shape, how the input is made from a contiguous tensor, view sizes); the
# comments say what the input's layout is in eager
LAYOUTS = [
    ((2, 3, 4), lambda t: t, (6, 4)),
    ((2, 3, 4), lambda t: t, (-1,)),
    ((2, 3, 4), lambda t: t, (4, -1, 2)),
    ((2, 3, 4), lambda t: t, (2, 3, 4)),  # the same shape
    ((2, 3, 4), lambda t: t, (1, 24, 1)),
    ((4, 6), lambda t: t[1:3], (12,)),  # eager: storage offset 6
    ((4, 6), lambda t: t[:, 2:4], (4, 2, 1)),  # eager: strided rows; a size-1 dim added
    ((4, 6), lambda t: t[::2], (2, 3, 2)),  # eager: row stride 12
    ((3, 4), lambda t: t.t(), (4, 3)),  # transposed, same shape
    ((3, 4), lambda t: t.t(), (2, 2, 3)),  # split the non-contiguous first dim
    ((3, 4), lambda t: t.t().unsqueeze(1), (4, 3)),  # size-1 dim dropped
    ((2, 1, 3), lambda t: t.expand(2, 5, 3), (2, 5, 3, 1)),  # eager: stride 0 in the expanded dim
    ((1,), lambda t: t, (-1,)),
    ((1,), lambda t: t, ()),  # one element to 0-dim
    ((), lambda t: t, (1, 1)),
    ((0, 3), lambda t: t, (3, 0)),
    ((0, 3), lambda t: t, (-1, 3, 2)),
]


def _layout_id(case):
  shape, _, size = case
  return f'{list(shape)}->{list(size)}'


@pytest.mark.parametrize('case', LAYOUTS, ids=[_layout_id(c) for c in LAYOUTS])
@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
def test_view_matches_eager_layout(case, dtype):
  met.clear_counters()  # fallbacks() reads counters since the last clear
  shape, prepare, size = case
  x = make(shape, dtype, seed=3)
  expected = prepare(x).view(size)
  before = counter('xla::view_copy')
  got = prepare(x.to(DEV)).view(size)
  assert counter('xla::view_copy') > before
  assert fallbacks() == []
  assert_same(got, expected)
  # XLA tensors have no storage to stride through: they report contiguous strides.
  assert got.stride() == torch.empty(expected.shape).stride()
  assert got.is_contiguous()


def _eager_error(fn, x):
  with pytest.raises(RuntimeError) as info:
    fn(x)
  return str(info.value).splitlines()[0]


@pytest.mark.parametrize('fn', [
    lambda t: t.view(4, 2),  # 6 elements
    lambda t: t.view(-1, -1),
    lambda t: t.view(-1, 4),
    lambda t: t.view(2, -3),
], ids=['numel', 'two_minus_ones', 'not_divisible', 'negative'])
def test_view_errors_match_eager(fn):
  x = make((2, 3), torch.float32)
  message = _eager_error(fn, x)
  with pytest.raises(RuntimeError, match=re.escape(message)):
    fn(x.to(DEV))
  # The process and the tensor live on.
  assert torch.equal(x.to(DEV).view(3, 2).cpu(), x.view(3, 2))


def test_views_eager_strides_forbid_are_reshapes():
  # Eager refuses these views (the sizes span non-contiguous memory); an XLA tensor is
  # contiguous, so the view is a reshape of its values.
  x = make((3, 4), torch.float32, seed=2)
  cases = [(lambda t: t.t(), (-1,)), (lambda t: t[:, 1:3], (6,)), (lambda t: t.t()[1:], (9,))]
  for layout, size in cases:
    with pytest.raises(RuntimeError, match='view size is not compatible'):
      layout(x).view(size)
    assert_same(layout(x.to(DEV)).view(size), layout(x).reshape(size))


def test_writes_through_the_view_reach_the_base_and_back():
  met.clear_counters()
  x = make((4, 6), torch.float32, seed=5)
  d = x.to(DEV)
  rows = d[1:3]
  v = rows.view(3, 4)
  v.mul_(10)
  x[1:3].view(3, 4).mul_(10)
  assert_same(d, x)
  d.add_(1)
  x.add_(1)
  # The view is replayed from the updated base.
  assert_same(v, x[1:3].view(3, 4))
  vv = v.view(-1)[2:]
  vv.zero_()
  x[1:3].view(-1)[2:].zero_()
  assert_same(d, x)
  assert_same(v, x[1:3].view(3, 4))
  assert fallbacks() == []


def test_inplace_on_view_backward_matches_eager():
  w = make((3, 4), torch.float32, seed=6)

  def run(device):
    leaf = w.to(device).detach().requires_grad_()
    base = leaf * 2
    part = base.view(2, 6)
    part.mul_(part.detach() + 1)  # in place on a view: autograd replays the view
    loss = (base.view(-1) * torch.arange(12.0, device=device)).sum()
    loss.backward()
    return base.detach(), leaf.grad

  expected = run('cpu')
  got = run(DEV)
  assert_same(got[0], expected[0])
  assert_same(got[1], expected[1])


def test_view_after_mark_step_and_views_of_views():
  import torch_xla.core.xla_model as xm
  x = make((2, 3, 4), torch.float32, seed=8)
  d = x.to(DEV)
  a = d.view(6, 4)
  xm.mark_step()
  b = a.view(4, 6).view(-1).view(2, 12)
  assert_same(b, x.view(6, 4).view(4, 6).view(-1).view(2, 12))
  b[1].fill_(-1)
  x.view(2, 12)[1].fill_(-1)
  xm.mark_step()
  assert_same(d, x)
  assert_same(a, x.view(6, 4))


def test_other_backends_keep_pytorch_kernel():
  # CPU tensors under functionalization (as torch.func and torch.compile use it) go to
  # PyTorch's generated kernel, which this one replaced for the Functionalize key.
  def f(t):
    v = t.view(2, 6)
    v.add_(1)
    return t.view(-1) * 2, v.view(3, 4)

  x = make((3, 4), torch.float32, seed=9)
  expected = f(x.clone())
  got = torch.func.functionalize(f)(x.clone())
  for g, e in zip(got, expected):
    torch.testing.assert_close(g, e, rtol=0, atol=0)
  with pytest.raises(RuntimeError, match='invalid for input of size 12'):
    torch.func.functionalize(lambda t: t.view(5))(x)
  # Reapplied views (functionalize with remove='mutations') also stay on PyTorch's kernel.
  got = torch.func.functionalize(f, remove='mutations')(x.clone())
  for g, e in zip(got, expected):
    torch.testing.assert_close(g, e, rtol=0, atol=0)


def test_xla_views_use_this_kernel():
  table = torch._C._dispatch_dump_table('aten::view')
  line = next(l for l in table.splitlines() if l.startswith('Functionalize'))
  assert 'functionalize_view.cpp' in line, line
