"""Indexing on the XLA device against eager CPU PyTorch: gather, scatter (and its
reductions), index_select, index_add, index_copy, index_reduce, index_fill, masked_fill,
masked_scatter, take, put, advanced indexing (x[idx]), index_put and nonzero_static;
values, gradients, bad input, and the counters.

Out-of-range indices: PyTorch raises on the CPU, but index values live on the device
and are not read before running, so we follow XLA instead: reads (gather, index_select,
x[idx]) clamp an out-of-range index into range, writes (scatter, scatter_add,
index_add, index_put, embedding backward) drop the update. Negative indices wrap as
in PyTorch. See test_out_of_range_indices_clamp_or_drop."""

import pytest
import torch

import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from testing.op_testing import (ALL, BF16, DEV, assert_same, check, check_grads, counter, grads, ids, lowered, make,
                                to_dev)
from testing.counter_cases import floats as _f, typed as _x


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
  # int32 indices are accepted, as in eager (test_gather_int32_index); floats are not.
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


# ---- index_select / index_add ---------------------------------------------------------------


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


def _index(values):
  return torch.tensor(values, dtype=torch.long)


# ---- index_copy, index_reduce ------------------------------------------------------------


@pytest.mark.parametrize('dtype', ALL, ids=ids)
def test_index_copy(dtype):
  x, src = make((5, 3), dtype), make((2, 3), dtype, seed=1)
  check(lambda t, s, i: t.index_copy(0, i, s), x, src, _index([3, 4]), ops=('index_copy',))
  check(lambda t, s, i: t.index_copy(1, i, s), x, make((5, 2), dtype, seed=2), _index([2, 0]), ops=('index_copy',))


def test_index_copy_scalar_and_in_place():
  check(lambda t, s, i: t.index_copy(0, i, s), torch.tensor(1.5), torch.tensor(2.5), _index([0]),
        ops=('index_copy',))

  def fn(t, s, i):
    t = t.clone()
    t.index_copy_(0, i, s)
    return t

  check(fn, make((4, 2), torch.float32), make((2, 2), torch.float32, seed=1), _index([1, 2]), ops=('index_copy',))


@pytest.mark.parametrize('dtype', ALL, ids=ids)
@pytest.mark.parametrize('reduce', ['prod', 'mean', 'amax', 'amin'])
@pytest.mark.parametrize('include_self', [True, False])
def test_index_reduce(dtype, reduce, include_self):
  x, src = make((5, 3), dtype, 'nonzero'), make((4, 3), dtype, 'nonzero', seed=1)
  idx = _index([0, 2, 0, 4])  # a repeated target, and targets without rows
  check(lambda t, s, i: t.index_reduce(0, i, s, reduce, include_self=include_self), x, src, idx,
        ops=('index_reduce',))


def test_index_reduce_bad_reduce():
  with pytest.raises(RuntimeError, match='index_reduce'):
    to_dev(torch.ones(3)).index_reduce(0, to_dev(_index([0])), to_dev(torch.ones(1)), 'sum')


# ---- take, put, masked_scatter, nonzero_static, gather --------------------------------------


@pytest.mark.parametrize('dtype', ALL, ids=ids)
def test_take_put(dtype):
  x = make((3, 4), dtype)
  # Distinct places (-2 is 10): where indices repeat, put without accumulate keeps any
  # one of the values (PyTorch leaves it undefined; GPUs keep another than the CPU).
  idx = _index([[0, 11], [-2, 5]])
  check(lambda t, i: torch.take(t, i), x, idx, ops=('take',))
  src = make((2, 2), dtype, seed=1)
  check(lambda t, i, s: t.put(i, s), x, idx, src, ops=('put',))
  check(lambda t, i, s: t.put(i, s, accumulate=True), x, _index([[1, 1], [2, 3]]), src, ops=('put',))


@pytest.mark.parametrize('dtype', ALL, ids=ids)
def test_masked_scatter(dtype):
  x, src = make((3, 4), dtype), make((13,), dtype, seed=1)
  mask = make((3, 4), torch.bool, seed=2)
  check(lambda t, m, s: t.masked_scatter(m, s), x, mask, src, ops=('masked_scatter',))
  # A mask broadcast over self's rows.
  check(lambda t, m, s: t.masked_scatter(m, s), x, mask[0], src, ops=('masked_scatter',))


@pytest.mark.parametrize('dtype', [torch.float32, torch.int64, torch.bool], ids=ids)
@pytest.mark.parametrize('size', [0, 3, 20])
def test_nonzero_static(dtype, size):
  x = make((3, 4), dtype)
  check(lambda t: torch.nonzero_static(t, size=size), x, ops=('nonzero_static',))
  check(lambda t: torch.nonzero_static(t, size=size, fill_value=7), x.reshape(2, 2, 3), ops=('nonzero_static',))


def test_gather_int32_index():
  x = make((4, 5), torch.float32)
  check(lambda t, i: torch.gather(t, 1, i), x, torch.tensor([[0, 4], [1, 1], [3, 2], [4, 0]], dtype=torch.int32),
        ops=('gather',))


@pytest.mark.parametrize('accumulate', [False, True])
def test_index_put_mask_with_row_value(accumulate):
  x, row = make((5, 4), torch.float32), make((4,), torch.float32, seed=1)
  mask = torch.tensor([True, False, True, True, False])
  check(lambda t, m, v: torch.index_put(t, (m,), v, accumulate=accumulate), x, mask, row, ops=('index_put',))
  check(lambda t, m, v: torch.index_put(t, (m,), v, accumulate=accumulate), x, mask, row[:1], ops=('index_put',))


# ---- counter cases ------------------------------------------------------------

def _i(*shape, high=3):
  return torch.zeros(shape, dtype=torch.int64).fill_(high - 1).to(DEV)


COUNTER_CASES = {
    'index_select': (lambda: torch.index_select(_x(), 0, _i(2)), 'index_select'),
    'index_add': (lambda: torch.index_add(_x(), 0, _i(2), _x()[:2]), 'index_add'),
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
    'index_copy': (lambda: _f().index_copy(0, _index([1]).to(DEV), _f()[:1]), 'index_copy'),
    'index_reduce': (lambda: _f().index_reduce(0, _index([1]).to(DEV), _f()[:1], 'amax'), 'index_reduce'),
    'take': (lambda: torch.take(_f(), _index([1, 5]).to(DEV)), 'take'),
    'put': (lambda: _f().put(_index([1, 5]).to(DEV), _f()[0, :2]), 'put'),
    'masked_scatter': (lambda: _f().masked_scatter(_f() > 0, _f()), 'masked_scatter'),
    'nonzero_static': (lambda: torch.nonzero_static(_f(), size=4), 'nonzero_static'),
}
