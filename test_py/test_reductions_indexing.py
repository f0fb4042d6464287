"""Reductions, indexing and sorting on the XLA device against eager CPU PyTorch.

Out-of-range indices: PyTorch raises on the CPU, but index values live on the device
and are not read before running, so we follow XLA instead: reads (gather, index_select,
x[idx]) clamp an out-of-range index into range, writes (scatter, scatter_add,
index_add, index_put, embedding backward) drop the update. Negative indices wrap as
in PyTorch. See test_out_of_range_indices_clamp_or_drop.
"""

import pytest
import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from op_testing import (ALL, BF16, DEV, FLOATS, INTS, assert_same, check, counter, fallbacks, ids, lowered, make,
                        to_dev)

import torch_xla.debug.metrics as met


def grads(fn, *inputs, dtype=torch.float32, seed=3):
  """Input grads of fn(*inputs) on the CPU and on the device (upstream: a fixed random grad)."""
  out = []
  for dev in ('cpu', DEV):
    xs = [x.to(dev).detach().requires_grad_(x.is_floating_point()) if isinstance(x, torch.Tensor) else x
          for x in inputs]
    y = fn(*xs)
    y = y[0] if isinstance(y, tuple) else y
    g = make(tuple(y.shape), y.dtype, seed=seed).to(dev)
    y.backward(g)
    out.append([x.grad for x in xs if isinstance(x, torch.Tensor) and x.requires_grad])
  return out


def check_grads(fn, *inputs, rtol=None, atol=None, allow=()):
  met.clear_counters()
  cpu, dev = grads(fn, *inputs)
  xm.mark_step()
  bad = [n for n in fallbacks() if n not in {'aten::' + a for a in allow}]
  assert not bad, f'CPU fallbacks in backward: {bad}'
  assert len(cpu) == len(dev)
  for c, d in zip(cpu, dev):
    assert_same(d, c, rtol, atol)


# ---- var / std -------------------------------------------------------------------------


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('kw', [dict(), dict(dim=1), dict(dim=(0, -1), keepdim=True), dict(dim=0, correction=0),
                                dict(dim=2, correction=2)], ids=str)
def test_var_std(dtype, kw):
  x = make((3, 4, 5), dtype)
  r = BF16 if dtype == torch.bfloat16 else {}
  check(lambda t: torch.var(t, **kw), x, ops=('var',), **r)
  check(lambda t: torch.std(t, **kw), x, ops=('std',), **r)
  check(lambda t: torch.var_mean(t, **kw), x, ops=('var_mean',), **r)
  check(lambda t: torch.std_mean(t, **kw), x, ops=('std_mean',), **r)


def test_var_unbiased_single_element_is_nan():
  check(lambda t: t.var(), make((1,), torch.float32), ops=('var',))


def test_var_std_backward():
  x = make((4, 6), torch.float32)
  check_grads(lambda t: t.var(1), x)
  check_grads(lambda t: t.std(0, keepdim=True), x)


def test_var_int_raises():
  with pytest.raises(RuntimeError, match='var'):
    torch.var(torch.ones(3, dtype=torch.int64, device=DEV))


# ---- max / min / argmax / argmin / amax / amin --------------------------------------------


@pytest.mark.parametrize('dtype', ALL + [torch.bool], ids=ids)
def test_max_min_full(dtype):
  x = make((4, 5), dtype)
  check(torch.max, x, ops=('max',))
  check(torch.min, x, ops=('min',))


@pytest.mark.parametrize('dtype', ALL, ids=ids)
@pytest.mark.parametrize('dim,keepdim', [(0, False), (1, True), (-1, False)])
def test_max_min_dim(dtype, dim, keepdim):
  x = make((4, 6), dtype)
  check(lambda t: torch.max(t, dim, keepdim), x, ops=('max',))
  check(lambda t: torch.min(t, dim, keepdim), x, ops=('min',))
  check(lambda t: torch.argmax(t, dim, keepdim), x, ops=('argmax',))
  check(lambda t: torch.argmin(t, dim, keepdim), x, ops=('argmin',))


def test_max_dim_ties_and_nan_first_index():
  x = torch.tensor([[1., 3., 3., 0.], [2., float('nan'), 5., float('nan')], [-1., -1., -1., -1.]])
  check(lambda t: torch.max(t, 1), x, ops=('max',))
  check(lambda t: torch.min(t, 1), x, ops=('min',))
  check(lambda t: torch.argmax(t), x, ops=('argmax',))
  check(lambda t: t.max(), x, ops=('max',))


@pytest.mark.parametrize('keepdim', [False, True])
def test_argmax_argmin_flat(keepdim):
  x = make((3, 4), torch.float32)
  check(lambda t: torch.argmax(t, keepdim=keepdim), x, ops=('argmax',))
  check(lambda t: torch.argmin(t, keepdim=keepdim), x, ops=('argmin',))


@pytest.mark.parametrize('dtype', ALL, ids=ids)
@pytest.mark.parametrize('kw', [dict(), dict(dim=1), dict(dim=(0, 2), keepdim=True)], ids=str)
def test_amax_amin(dtype, kw):
  x = make((3, 4, 2), dtype)
  check(lambda t: torch.amax(t, **kw), x, ops=('amax',))
  check(lambda t: torch.amin(t, **kw), x, ops=('amin',))


def test_max_zero_dim():
  x = torch.tensor(2.5)
  check(lambda t: torch.max(t, 0), x, ops=('max',))
  check(lambda t: torch.argmax(t), x, ops=('argmax',))


def test_max_backward():
  x = make((4, 5), torch.float32)
  check_grads(lambda t: t.max(1)[0], x)
  check_grads(lambda t: t.amax(0), x)
  check_grads(lambda t: t.max(), x)


def test_max_empty_raises():
  with pytest.raises(RuntimeError, match='max'):
    torch.max(torch.empty(0, device=DEV))
  with pytest.raises(RuntimeError, match='max'):
    torch.max(torch.empty(2, 0, device=DEV), 1)
  with pytest.raises((IndexError, RuntimeError), match='argmax'):
    torch.argmax(torch.ones(2, 3, device=DEV), 2)


# ---- prod / logsumexp / cumsum / cumprod -------------------------------------------------


@pytest.mark.parametrize('dtype', ALL, ids=ids)
def test_prod(dtype):
  x = make((3, 4), dtype, kind='nonzero') if dtype.is_floating_point else make((3, 4), dtype) % 3 + 1
  x = x.to(dtype)
  check(torch.prod, x, ops=('prod',))
  check(lambda t: torch.prod(t, 1), x, ops=('prod',))
  check(lambda t: torch.prod(t, -2, keepdim=True), x, ops=('prod',))
  check(lambda t: torch.prod(t, 0, dtype=torch.float32), x, ops=('prod',))


def test_prod_backward():
  x = make((3, 4), torch.float32, kind='nonzero')
  check_grads(lambda t: t.prod(1), x)


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('dim,keepdim', [((1,), False), ((0, 1), True), ((-1,), False)])
def test_logsumexp(dtype, dim, keepdim):
  x = make((3, 5), dtype) * 10
  check(lambda t: torch.logsumexp(t, dim, keepdim), x, ops=('logsumexp',))


def test_logsumexp_inf_and_int():
  x = torch.tensor([[float('-inf'), float('-inf')], [float('inf'), 1.0], [0.0, 1.0]])
  check(lambda t: torch.logsumexp(t, 1), x, ops=('logsumexp',))
  check(lambda t: torch.logsumexp(t, 0), make((3, 2), torch.int64), ops=('logsumexp',))
  check_grads(lambda t: torch.logsumexp(t, 1), make((3, 4), torch.float32))


@pytest.mark.parametrize('dtype', ALL + [torch.bool], ids=ids)
@pytest.mark.parametrize('shape,dim', [((7,), 0), ((3, 9), 1), ((5, 4), 0), ((2, 3, 17), -1)])
def test_cumsum_cumprod(dtype, shape, dim):
  x = make(shape, dtype)
  r = dict(rtol=5e-2, atol=5e-2) if dtype == torch.bfloat16 else {}
  check(lambda t: torch.cumsum(t, dim), x, ops=('cumsum',), **r)
  small = make(shape, dtype, kind='pos') if dtype != torch.bool else x
  if dtype.is_floating_point:
    small = (small * 0.5 + 0.6).to(dtype)
  check(lambda t: torch.cumprod(t, dim), small, ops=('cumprod',), **r)


@pytest.mark.parametrize('shape,dim', [((5000,), 0), ((3, 1000, 2), 1), ((70, 33), 0), ((2, 32), 1), ((4, 1025), -1)])
def test_cumsum_long(shape, dim):
  # Blocked cumsum (blocks of 32, then block totals): lengths around and past the block.
  x = make(shape, torch.float32)
  check(lambda t: torch.cumsum(t, dim), x, ops=('cumsum',), rtol=1e-4, atol=1e-3)
  check(lambda t: torch.cumsum(t, dim), make(shape, torch.int32), ops=('cumsum',))


def test_cumsum_dtype_and_backward():
  x = make((4, 6), torch.float32)
  check(lambda t: torch.cumsum(t, 1, dtype=torch.float64), x, ops=('cumsum',))
  check(lambda t: torch.cumsum(t, 0), torch.tensor(3.0), ops=('cumsum',))
  check_grads(lambda t: t.cumsum(1), x)
  check_grads(lambda t: t.cumprod(1), make((3, 5), torch.float32, kind='nonzero'))


# ---- any / all ---------------------------------------------------------------------------


@pytest.mark.parametrize('dtype', [torch.bool, torch.uint8, torch.float32, torch.int32], ids=ids)
def test_any_all(dtype):
  x = (make((3, 4, 2), torch.int64) > 2).to(dtype)
  x[1] = 1
  for fn in (torch.any, torch.all):
    name = fn.__name__
    check(fn, x, ops=(name,))
    check(lambda t: fn(t, 1), x, ops=(name,))
    check(lambda t: fn(t, -1, keepdim=True), x, ops=(name,))
    check(lambda t: fn(t, (0, 2)), x, ops=(name,))
  check(torch.all, torch.ones(0, dtype=dtype), ops=('all',))
  check(torch.any, torch.ones(0, dtype=dtype), ops=('any',))


def test_any_nan_is_true():
  check(torch.any, torch.tensor([0.0, float('nan')]), ops=('any',))


# ---- linalg_vector_norm -------------------------------------------------------------------


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('ord', [2, 1, float('inf'), float('-inf'), 0, 3.5])
@pytest.mark.parametrize('kw', [dict(), dict(dim=1), dict(dim=(0, 1), keepdim=True)], ids=str)
def test_vector_norm(dtype, ord, kw):
  x = make((3, 4), dtype)
  x[0, 0] = 0
  r = BF16 if dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-5)
  check(lambda t: torch.linalg.vector_norm(t, ord, **kw), x, ops=('linalg_vector_norm',), **r)


def test_vector_norm_dtype_and_backward():
  x = make((3, 4), torch.float32)
  check(lambda t: torch.linalg.vector_norm(t, dtype=torch.float64), x, ops=('linalg_vector_norm',))
  check_grads(lambda t: torch.linalg.vector_norm(t, 2, 1), x)


def test_vector_norm_int_raises():
  with pytest.raises(RuntimeError, match='vector_norm'):
    torch.linalg.vector_norm(torch.ones(3, dtype=torch.int64, device=DEV))


# ---- gather / scatter ---------------------------------------------------------------------


def index_for(shape, size, seed=0, neg=False):
  g = torch.Generator().manual_seed(seed)
  idx = torch.randint(0, size, shape, generator=g)
  return idx - size if neg else idx


@pytest.mark.parametrize('dtype', ALL, ids=ids)
@pytest.mark.parametrize('dim', [0, 1, -1])
def test_gather(dtype, dim):
  x = make((4, 5), dtype)
  idx = index_for((3, 2), x.shape[dim])
  check(lambda t, i: torch.gather(t, dim, i), x, idx, ops=('gather',))


def test_gather_backward_and_3d():
  x = make((3, 4, 5), torch.float32)
  idx = index_for((3, 2, 5), 4, seed=1)
  check(lambda t, i: torch.gather(t, 1, i), x, idx, ops=('gather',))
  check_grads(lambda t: torch.gather(t, 1, idx.to(t.device)), x)


def test_gather_index_select_zero_dim_self():
  x = torch.tensor(4.5)
  check(lambda t, i: torch.gather(t, 0, i), x, torch.tensor([0, 0]), ops=('gather',))
  check(lambda t, i: torch.gather(t, 0, i), x, torch.tensor(0), ops=('gather',))
  check(lambda t, i: torch.index_select(t, 0, i), x, torch.tensor([0]), ops=('index_select',))


def test_gather_bad_index_raises():
  x = torch.ones(3, 4, device=DEV)
  # int32 indices are accepted, as in eager (test_indexing_misc.py); floats are not.
  with pytest.raises(RuntimeError, match='gather'):
    torch.gather(x, 1, torch.zeros(3, 4, dtype=torch.float32, device=DEV))
  with pytest.raises(RuntimeError, match='gather'):
    torch.gather(x, 1, torch.zeros(3, dtype=torch.int64, device=DEV))


@pytest.mark.parametrize('dtype', ALL, ids=ids)
def test_scatter_variants(dtype):
  x = make((4, 5), dtype)
  src = make((4, 5), dtype, seed=2)
  # Unique indices along dim 0 per column, so replacement order does not matter.
  idx = torch.stack([torch.randperm(4, generator=torch.Generator().manual_seed(c))[:3] for c in range(4)], 1)
  check(lambda t, i, s: torch.scatter(t, 0, i, s), x, idx, src, ops=('scatter',))
  check(lambda t, i: torch.scatter(t, 0, i, 2), x, idx, ops=('scatter',))
  check(lambda t, i, s: torch.scatter(t, 0, i, s, reduce='add'), x, idx, src, ops=('scatter',))
  check(lambda t, i, s: torch.scatter(t, 0, i, s, reduce='multiply'), x, idx, src, ops=('scatter',))
  check(lambda t, i: torch.scatter(t, 0, i, 3, reduce='add'), x, idx, ops=('scatter',))
  dup = index_for((6, 5), 4, seed=4)
  r = BF16 if dtype == torch.bfloat16 else {}
  check(lambda t, i, s: torch.scatter_add(t, 0, i, s), x, dup, make((6, 5), dtype, seed=5), ops=('scatter_add',), **r)
  check(lambda t, i, s: torch.scatter_add(t, -1, i, s), x, index_for((4, 7), 5, seed=6),
        make((4, 7), dtype, seed=7), ops=('scatter_add',), **r)


@pytest.mark.parametrize('dtype', ALL, ids=ids)
@pytest.mark.parametrize('reduce', ['sum', 'prod', 'mean', 'amax', 'amin'])
@pytest.mark.parametrize('include_self', [True, False])
def test_scatter_reduce(dtype, reduce, include_self):
  x = make((4, 5), dtype, kind='nonzero')
  src = make((6, 5), dtype, kind='nonzero', seed=2)
  idx = index_for((6, 5), 3, seed=4)  # row 3 is never a target: keeps self
  r = dict(rtol=3e-2, atol=3e-2) if dtype == torch.bfloat16 else {}
  check(lambda t, i, s: torch.scatter_reduce(t, 0, i, s, reduce, include_self=include_self), x, idx, src,
        ops=('scatter_reduce',), **r)
  check(lambda t, i, s: torch.scatter_reduce(t, 1, i, s, reduce, include_self=include_self), x,
        index_for((4, 2), 5, seed=5), src, ops=('scatter_reduce',), **r)


def test_scatter_reduce_backward_and_bad_reduce():
  x = make((4, 5), torch.float32)
  src = make((6, 5), torch.float32, seed=2)
  idx = index_for((6, 5), 4, seed=4)
  check_grads(lambda t, s: torch.scatter_reduce(t, 0, idx.to(t.device), s, 'sum'), x, src)
  with pytest.raises(RuntimeError, match='scatter_reduce'):
    torch.scatter_reduce(x.to(DEV), 0, idx.to(DEV), src.to(DEV), 'max')


def test_scatter_backward():
  x = make((4, 5), torch.float32)
  src = make((2, 5), torch.float32, seed=1)
  idx = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 0, 2]])
  check_grads(lambda t, s: torch.scatter(t, 0, idx.to(t.device), s), x, src)
  check_grads(lambda t, s: torch.scatter_add(t, 0, idx.to(t.device), s), x, src)


def test_scatter_bad_input_raises():
  x = torch.ones(3, 4, device=DEV)
  with pytest.raises(RuntimeError, match='scatter'):
    torch.scatter(x, 0, torch.zeros(2, 4, dtype=torch.int64, device=DEV), torch.ones(2, 4, device=DEV),
                  reduce='max')
  with pytest.raises(RuntimeError, match='scatter'):
    torch.scatter_add(x, 0, torch.zeros(2, 4, dtype=torch.int64, device=DEV), torch.ones(1, 4, device=DEV))


# ---- index_select / index_add / embedding ---------------------------------------------------


@pytest.mark.parametrize('dtype', ALL, ids=ids)
@pytest.mark.parametrize('dim', [0, 1, -1])
def test_index_select(dtype, dim):
  x = make((4, 5, 3), dtype)
  idx = torch.tensor([2, 0, 2, 1])
  check(lambda t, i: torch.index_select(t, dim, i), x, idx, ops=('index_select',))
  check(lambda t, i: torch.index_select(t, dim, i), x, idx.int(), ops=('index_select',))
  check(lambda t, i: torch.index_select(t, dim, i), x, torch.tensor([], dtype=torch.int64), ops=('index_select',))


def test_index_select_backward_uses_index_add():
  x = make((5, 3), torch.float32)
  idx = torch.tensor([4, 0, 4, 1])
  with lowered('index_select', 'index_add'):
    cpu, dev = grads(lambda t: torch.index_select(t, 0, idx.to(t.device)), x)
    xm.mark_step()
  assert_same(dev[0], cpu[0])


@pytest.mark.parametrize('dtype', ALL, ids=ids)
def test_index_add(dtype):
  x = make((5, 3), dtype)
  src = make((4, 3), dtype, seed=1)
  idx = torch.tensor([4, 0, 4, 3])
  r = BF16 if dtype == torch.bfloat16 else {}
  check(lambda t, i, s: torch.index_add(t, 0, i, s), x, idx, src, ops=('index_add',), **r)
  check(lambda t, i, s: torch.index_add(t, 1, i, s, alpha=2), x, torch.tensor([2, 2]), make((5, 2), dtype), ops=('index_add',), **r)


def test_index_select_bad_input_raises():
  x = torch.ones(3, 4, device=DEV)
  with pytest.raises(RuntimeError, match='index_select'):
    torch.index_select(x, 0, torch.zeros(2, 2, dtype=torch.int64, device=DEV))
  with pytest.raises(RuntimeError, match='index_select'):
    torch.index_select(x, 0, torch.zeros(2, device=DEV))
  with pytest.raises(RuntimeError, match='index_add'):
    torch.index_add(x, 0, torch.zeros(2, dtype=torch.int64, device=DEV), torch.ones(3, 4, device=DEV))


@pytest.mark.parametrize('kw', [dict(), dict(padding_idx=1), dict(scale_grad_by_freq=True),
                                dict(padding_idx=0, scale_grad_by_freq=True)], ids=str)
def test_embedding_forward_backward(kw):
  torch.manual_seed(0)
  emb = torch.nn.Embedding(7, 4, **kw)
  idx = torch.tensor([[1, 3, 3, 0], [6, 1, 1, 1]])
  g = make((2, 4, 4), torch.float32, seed=2)
  emb(idx).backward(g)
  emb_x = torch.nn.Embedding(7, 4, **kw)
  emb_x.load_state_dict(emb.state_dict())
  emb_x = emb_x.to(DEV)
  # aten::embedding's composite forward reshapes with a view (the transformer layers' op).
  with lowered('index_select', 'embedding_dense_backward'):
    out = emb_x(idx.to(DEV))
    out.backward(g.to(DEV))
    xm.mark_step()
  assert_same(emb_x.weight.grad, emb.weight.grad)


@pytest.mark.parametrize('padding_idx,scale', [(-1, False), (2, False), (-1, True), (0, True)])
@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
def test_embedding_dense_backward(padding_idx, scale, dtype):
  g = make((2, 5, 3), dtype)
  idx = torch.tensor([[0, 2, 2, 4, 0], [5, 2, 0, 0, 1]])
  check(lambda g, i: torch.ops.aten.embedding_dense_backward(g, i, 6, padding_idx, scale), g, idx,
        ops=('embedding_dense_backward',))


def test_embedding_backward_bad_input_raises():
  with pytest.raises(RuntimeError, match='embedding_dense_backward'):
    torch.ops.aten.embedding_dense_backward(torch.ones(3, 4, device=DEV), torch.zeros(2, dtype=torch.int64,
                                                                                      device=DEV), 5, -1, False)


# ---- masked_fill ------------------------------------------------------------------------------


@pytest.mark.parametrize('dtype', ALL + [torch.bool], ids=ids)
def test_masked_fill(dtype):
  x = make((3, 4), dtype)
  mask = make((3, 4), torch.bool, seed=1)
  check(lambda t, m: t.masked_fill(m, 1), x, mask, ops=('masked_fill',))
  check(lambda t, m: t.masked_fill(m, torch.tensor(0)), x, mask, ops=('masked_fill',))
  check(lambda t, m: t.masked_fill(m, 1), x, mask[0], ops=('masked_fill',))


def test_masked_fill_tensor_value_and_backward():
  x = make((3, 4), torch.float32)
  mask = make((3, 4), torch.bool, seed=1)
  check(lambda t, m, v: t.masked_fill(m, v), x, mask, torch.tensor(2.5), ops=('masked_fill',))
  check_grads(lambda t: t.masked_fill(mask.to(t.device), -1.0), x)


def test_masked_fill_bad_input_raises():
  x = torch.ones(3, 4, device=DEV)
  with pytest.raises(RuntimeError, match='masked_fill'):
    x.masked_fill(torch.ones(3, 4, dtype=torch.int64, device=DEV), 1.0)
  with pytest.raises(RuntimeError, match='masked_fill'):
    x.masked_fill(torch.ones(3, 4, dtype=torch.bool, device=DEV), torch.ones(2, device=DEV))


@pytest.mark.parametrize('dtype', ALL + [torch.float64], ids=ids)
def test_index_fill(dtype):
  x = make((4, 5, 3), dtype)
  for dim, index in ((0, [1, 3]), (1, [4, 0, 4]), (-1, [-1]), (2, 2), (1, [])):
    idx = torch.tensor(index, dtype=torch.int64)
    check(lambda t, i: t.index_fill(dim, i, 2), x, idx, ops=('index_fill',))
    check(lambda t, i: t.index_fill(dim, i, torch.tensor(-1)), x, idx, ops=('index_fill',))
  # in place, and on a 0-dim tensor
  check(lambda t, i: t.clone().index_fill_(1, i, 7), x, torch.tensor([0, 2]), ops=('index_fill',))
  check(lambda t, i: t.index_fill(0, i, 5), make((), dtype), torch.tensor(0), ops=('index_fill',))


def test_index_fill_backward_and_trace_backward():
  """The gradient of index_fill masks the filled positions; trace's backward runs index_fill."""
  check_grads(lambda t: t.index_fill(1, torch.tensor([0, 2], device=t.device), 3.0), make((3, 4), torch.float32))
  check_grads(lambda t: torch.trace(t) * 2, make((3, 4), torch.float32))


def test_index_fill_bad_input_raises():
  x = torch.ones(3, 4, device=DEV)
  with pytest.raises(RuntimeError, match='index_fill_\\(\\): Expected dtype int64'):
    x.index_fill(0, torch.tensor([0], dtype=torch.int32, device=DEV), 1.0)
  with pytest.raises(RuntimeError, match='index_fill_ only supports a 0-dimensional value tensor'):
    x.index_fill(0, torch.tensor([0], device=DEV), torch.ones(2, device=DEV))
  assert_same(x + 1, torch.ones(3, 4) + 1)


# ---- advanced indexing --------------------------------------------------------------------------

INDEX_CASES = [
    lambda t: t[torch.tensor([2, 0, -1])],
    lambda t: t[:, torch.tensor([[1, 0], [3, 3]])],
    lambda t: t[torch.tensor([0, 1]), torch.tensor([1, 2])],
    lambda t: t[torch.tensor([0, 1]), :, torch.tensor([1, 0])],
    lambda t: t[:, torch.tensor([0, 2]), torch.tensor([[1], [0]])],
    lambda t: t[torch.tensor([1]), torch.tensor([0, 3]), torch.tensor(1)],
    lambda t: t[..., torch.tensor([1, 1, 0])],
]


@pytest.mark.parametrize('case', range(len(INDEX_CASES)))
@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int64], ids=ids)
def test_index(case, dtype):
  fn = INDEX_CASES[case]
  x = make((3, 4, 2), dtype)
  check(lambda t: fn(t), x, ops=('index',))


def test_index_backward_and_int32_index():
  x = make((4, 3), torch.float32)
  check(lambda t: t[torch.tensor([3, 1], dtype=torch.int32)], x, ops=('index',))
  check_grads(lambda t: t[torch.tensor([0, 2, 0])], x)


def test_index_bool_mask_runs_on_cpu():
  x = make((3, 4), torch.float32)
  check(lambda t: t[t > 0], x, any_fallback=True)


def test_index_too_many_indices_raises():
  x = torch.ones(3, device=DEV)
  with pytest.raises((RuntimeError, IndexError)):
    torch.ops.aten.index(x, [torch.tensor([0], device=DEV), torch.tensor([0], device=DEV)])


def _put(idx, accumulate):
  def fn(t, v):
    t = t.clone()
    t.index_put_(idx, v, accumulate=accumulate)
    return t
  return fn


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32], ids=ids)
def test_index_put(dtype):
  x = make((4, 3), dtype)
  check(_put((torch.tensor([2, 0]),), False), x, make((2, 3), dtype, seed=1), ops=('index_put',))
  check(_put((torch.tensor([2, 0, 2, -1]),), True), x, make((4, 3), dtype, seed=1), ops=('index_put',))
  check(_put((torch.tensor([1, 3]), torch.tensor([0, 2])), False), x, make((2,), dtype, seed=2), ops=('index_put',))
  check(_put((torch.tensor([1, 3]),), False), x, torch.tensor(5).to(dtype), ops=('index_put',))


def test_index_put_setitem_and_bool_mask():
  def setitem(t):
    t = t.clone()
    t[torch.tensor([0, 2]), 1] = 7.0
    t[t < -0.5] = 0.0
    return t
  check(setitem, make((3, 4), torch.float32), ops=('index_put',))
  check(_put((make((4, 3), torch.bool, seed=3),), True), make((4, 3), torch.float32), torch.tensor(1.5),
        ops=('index_put',))


def test_index_put_bool_mask_many_values_runs_on_cpu():
  x = make((4, 3), torch.float32)
  mask = torch.tensor([True, False, True, False])
  check(_put((mask,), False), x, make((2, 3), torch.float32), any_fallback=True)


def test_index_put_backward():
  x = make((4, 3), torch.float32)
  v = make((2, 3), torch.float32, seed=1)
  idx = torch.tensor([3, 1])
  check_grads(lambda t, s: t.index_put((idx,), s), x, v)


def test_index_put_bad_input_raises():
  x = torch.ones(4, 3, device=DEV)
  with pytest.raises(RuntimeError, match='index_put|shape mismatch'):
    x.index_put_((torch.tensor([0, 1], device=DEV),), torch.ones(3, 3, device=DEV))
  with pytest.raises(RuntimeError):
    x.index_put_((torch.tensor([0, 1], device=DEV),), torch.ones(2, 3, dtype=torch.int64, device=DEV))


def test_out_of_range_indices_clamp_or_drop():
  """Reads clamp an out-of-range index; writes drop it (XLA semantics, see the module doc)."""
  x = torch.arange(12.).reshape(4, 3)
  big = torch.tensor([1, 9])
  assert torch.equal(torch.index_select(x.to(DEV), 0, big.to(DEV)).cpu(), x[[1, 3]])
  assert torch.equal(torch.gather(x.to(DEV), 0, torch.tensor([[7, 0, 1]], device=DEV)).cpu(),
                     torch.tensor([[9., 1., 5.]]))
  out = torch.index_add(x.to(DEV), 0, big.to(DEV), torch.ones(2, 3, device=DEV)).cpu()
  expected = x.clone()
  expected[1] += 1
  assert torch.equal(out, expected)
  out = torch.scatter(x.to(DEV), 0, torch.tensor([[5, 0, 0]], device=DEV), torch.full((1, 3), -1., device=DEV)).cpu()
  expected = x.clone()
  expected[0, 1:] = -1
  assert torch.equal(out, expected)


# ---- sort / topk ------------------------------------------------------------------------------------


@pytest.mark.parametrize('dtype', ALL, ids=ids)
@pytest.mark.parametrize('dim', [0, -1])
@pytest.mark.parametrize('descending', [False, True])
def test_sort(dtype, dim, descending):
  x = make((5, 6), dtype)  # ints and bf16 have ties: stable order is checked too
  check(lambda t: torch.sort(t, dim=dim, descending=descending, stable=True), x, ops=('sort',))
  check(lambda t: torch.sort(t, dim, descending), x, ops=('sort',))


def test_sort_nan_and_edge_cases():
  x = torch.tensor([3., float('nan'), -1., float('inf'), float('-inf'), 0., float('nan'), 2.])
  check(lambda t: torch.sort(t, stable=True), x, ops=('sort',))
  check(lambda t: torch.sort(t, descending=True, stable=True), x, ops=('sort',))
  check(lambda t: torch.sort(t), torch.tensor(1.5), ops=('sort',))
  check(lambda t: torch.argsort(t, dim=0), make((4, 3), torch.int64), ops=('sort',))


def test_sort_backward():
  x = make((3, 5), torch.float32)
  check_grads(lambda t: torch.sort(t, 1)[0], x)


@pytest.mark.parametrize('dtype', [torch.float32, torch.int64], ids=ids)
@pytest.mark.parametrize('k,dim,largest', [(1, 0, True), (3, 1, True), (2, -1, False), (0, 1, True), (6, 1, False)])
def test_topk(dtype, k, dim, largest):
  x = torch.randperm(30, generator=torch.Generator().manual_seed(0)).reshape(5, 6).to(dtype)  # distinct values
  check(lambda t: torch.topk(t, k, dim, largest), x, ops=('topk',))


def test_topk_backward_and_bad_k():
  x = torch.randperm(12, generator=torch.Generator().manual_seed(1)).reshape(3, 4).float()
  check_grads(lambda t: torch.topk(t, 2)[0], x)
  with pytest.raises(RuntimeError, match='topk'):
    torch.topk(torch.ones(3, device=DEV), 4)


def test_sort_bad_dim_raises():
  with pytest.raises((IndexError, RuntimeError), match='sort'):
    torch.sort(torch.ones(3, device=DEV), dim=2)


# ---- counters ---------------------------------------------------------------------------------------


def _x(dtype=torch.float32):
  return make((3, 4), dtype).to(DEV)


def _i(*shape, high=3):
  return torch.zeros(shape, dtype=torch.int64).fill_(high - 1).to(DEV)


COUNTER_CASES = {
    'index_select': (lambda: torch.index_select(_x(), 0, _i(2)), 'index_select'),
    'index_add': (lambda: torch.index_add(_x(), 0, _i(2), _x()[:2]), 'index_add'),
    'embedding_dense_backward': (lambda: torch.ops.aten.embedding_dense_backward(_x(), _i(3), 5, -1, False),
                                 'embedding_dense_backward'),
    'gather': (lambda: torch.gather(_x(), 1, _i(3, 2)), 'gather'),
    'scatter.src': (lambda: torch.scatter(_x(), 1, _i(3, 2), _x()), 'scatter'),
    'scatter.value': (lambda: torch.scatter(_x(), 1, _i(3, 2), 1.0), 'scatter'),
    'scatter.reduce': (lambda: torch.scatter(_x(), 1, _i(3, 2), _x(), reduce='add'), 'scatter'),
    'scatter.value_reduce': (lambda: torch.scatter(_x(), 1, _i(3, 2), 2.0, reduce='multiply'), 'scatter'),
    'scatter_add': (lambda: torch.scatter_add(_x(), 1, _i(3, 2), _x()), 'scatter_add'),
    'scatter_reduce.two': (lambda: torch.scatter_reduce(_x(), 1, _i(3, 2), _x(), 'amax'), 'scatter_reduce'),
    'index.Tensor': (lambda: _x()[_i(2)], 'index'),
    'index_put': (lambda: _x().index_put_((_i(2),), torch.ones(2, 4, device=DEV)), 'index_put'),
    'masked_fill.Scalar': (lambda: _x().masked_fill(_x() > 0, 1.0), 'masked_fill'),
    'masked_fill.Tensor': (lambda: _x().masked_fill(_x() > 0, torch.tensor(1.0, device=DEV)), 'masked_fill'),
    'index_fill.int_Scalar': (lambda: _x().index_fill(0, torch.tensor([1], device=DEV), 2.0), 'index_fill'),
    'index_fill.int_Tensor': (lambda: _x().index_fill(0, torch.tensor([1], device=DEV), torch.tensor(2.0)),
                              'index_fill'),
    'var.correction': (lambda: _x().var(1), 'var'),
    'std.correction': (lambda: _x().std(), 'std'),
    'var_mean.correction': (lambda: torch.var_mean(_x(), 0), 'var_mean'),
    'std_mean.correction': (lambda: torch.std_mean(_x(), 0), 'std_mean'),
    'max': (lambda: _x().max(), 'max'),
    'min': (lambda: _x().min(), 'min'),
    'max.dim': (lambda: _x().max(1), 'max'),
    'min.dim': (lambda: _x().min(1), 'min'),
    'argmax': (lambda: _x().argmax(1), 'argmax'),
    'argmin': (lambda: _x().argmin(), 'argmin'),
    'amax': (lambda: _x().amax(1), 'amax'),
    'amin': (lambda: _x().amin(0), 'amin'),
    'prod': (lambda: _x().prod(), 'prod'),
    'prod.dim_int': (lambda: _x().prod(1), 'prod'),
    'logsumexp': (lambda: _x().logsumexp(1), 'logsumexp'),
    'cumsum': (lambda: _x().cumsum(1), 'cumsum'),
    'cumprod': (lambda: _x().cumprod(0), 'cumprod'),
    'any': (lambda: _x().any(), 'any'),
    'any.dim': (lambda: _x().any(1), 'any'),
    'any.dims': (lambda: _x().any((0, 1)), 'any'),
    'all': (lambda: _x().all(), 'all'),
    'all.dim': (lambda: _x().all(1), 'all'),
    'all.dims': (lambda: _x().all((0, 1)), 'all'),
    'linalg_vector_norm': (lambda: torch.linalg.vector_norm(_x()), 'linalg_vector_norm'),
    'sort': (lambda: torch.ops.aten.sort(_x(), 1, False), 'sort'),
    'sort.stable': (lambda: torch.sort(_x(), stable=True), 'sort'),
    'topk': (lambda: torch.topk(_x(), 2), 'topk'),
}


# ---- data-dependent shapes: CPU fallback ---------------------------------------------------------


def test_nonzero_and_unique_run_on_cpu():
  """nonzero, unique and x[mask] have data-dependent shapes: they stay on the CPU
  fallback (aten:: counters), with results back on the device."""
  x = make((4, 5), torch.float32)
  met.clear_counters()
  assert_same(torch.nonzero(x.to(DEV) > 0), torch.nonzero(x > 0))
  assert counter('aten::nonzero') > 0
  i = torch.tensor([3, 1, 3, 2, 1, 7])
  assert_same(torch.unique(i.to(DEV)), torch.unique(i))
  values, inverse, counts = torch.unique(i.to(DEV), return_inverse=True, return_counts=True)
  assert_same((values, inverse, counts), torch.unique(i, return_inverse=True, return_counts=True))
  assert_same(x.to(DEV)[x.to(DEV) > 0], x[x > 0])
  assert counter('aten::index') > 0


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('p', [2, 1, 3, float('inf')])
def test_norm(p, dtype):
  x = make((3, 4), dtype, seed=21)
  check(lambda t: t.norm(p), x, ops=['norm'])
  check(lambda t: torch.norm(t, p=p, dim=1), x, ops=['norm'])
  check(lambda t: torch.norm(t, p=p, dim=(0, 1), keepdim=True), x, ops=['norm'])
  check(lambda t: torch.norm(t, p=p, dim=0, dtype=torch.float64), x, ops=['norm'])


def test_norm_backward():
  x = make((3, 4), torch.float32, seed=22)
  check_grads(lambda t: t.norm(2, dim=1).sum() + t.norm(1), x)


def test_norm_bad_dim_raises():
  with pytest.raises((IndexError, RuntimeError), match='ange'):
    torch.norm(torch.ones(2, 3, device=DEV), dim=5)


def test_new_empty_strided():
  x = make((2, 3), torch.bfloat16).to(DEV)
  with lowered('new_empty_strided'):
    y = x.new_empty_strided((4, 2), (2, 1))
  assert y.device == x.device and y.dtype == torch.bfloat16 and y.shape == (4, 2)


COUNTER_CASES.update({
    'norm.Scalar': (lambda: _x().norm(), 'norm'),
    'norm.ScalarOpt_dim': (lambda: torch.norm(_x(), 2, dim=1), 'norm'),
    'norm.ScalarOpt_dtype': (lambda: torch.ops.aten.norm.ScalarOpt_dtype(_x(), 2, dtype=torch.float64), 'norm'),
    'norm.ScalarOpt_dim_dtype': (lambda: torch.norm(_x(), 2, dim=1, dtype=torch.float64), 'norm'),
    'new_empty_strided': (lambda: _x().new_empty_strided((2, 2), (2, 1)), 'new_empty_strided'),
})
