"""Indexing ops (index_copy, index_reduce, take, put, masked_scatter, nonzero_static,
gather with int32 indices), products (addbmm, vdot, _trilinear, cdist, pdist) and
miscellaneous ops (rsub, isin, equal, _chunk_cat, _batch_norm_with_update) on the XLA
device against eager CPU PyTorch."""

import pytest
import torch
import torch.nn.functional as F

from op_testing import ALL, BF16, DEV, FLOATS, INTS, check, check_grad, ids, make, to_dev


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


def test_tensor_split_cpu_indices():
  x = make((7, 3), torch.float32)
  check(lambda t: torch.tensor_split(t, torch.tensor([1, 4]), 0), x)
  # Eager (on CUDA too) needs the split points on the CPU: a clear error otherwise.
  with pytest.raises(RuntimeError, match='tensor_split expected tensor_indices_or_sections to be on cpu'):
    torch.tensor_split(to_dev(x), to_dev(torch.tensor([1, 4])), 0)


# ---- products ----------------------------------------------------------------------------


@pytest.mark.parametrize('dtype', ALL, ids=ids)
@pytest.mark.parametrize('kw', [dict(), dict(beta=0.5, alpha=2), dict(beta=0)], ids=str)
def test_addbmm(dtype, kw):
  if not dtype.is_floating_point:
    kw = {k: int(v) for k, v in kw.items()}
  check(lambda s, a, b: torch.addbmm(s, a, b, **kw), make((3, 5), dtype), make((6, 3, 4), dtype, seed=1),
        make((6, 4, 5), dtype, seed=2), ops=('addbmm',))


def test_addbmm_grad():
  check_grad(lambda s, a, b: torch.addbmm(s, a, b), make((3, 5), torch.float32), make((2, 3, 4), torch.float32, seed=1),
             make((2, 4, 5), torch.float32, seed=2), ops=('addbmm',))


@pytest.mark.parametrize('dtype', ALL, ids=ids)
def test_vdot_vecdot(dtype):
  a, b = make((7,), dtype), make((7,), dtype, seed=1)
  check(torch.vdot, a, b, ops=('vdot',))
  if dtype.is_floating_point:
    check(lambda x, y: torch.linalg.vecdot(x, y, dim=1), make((3, 4), dtype), make((3, 4), dtype, seed=1))


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
def test_bilinear(dtype):
  x1, x2 = make((4, 3), dtype), make((4, 5), dtype, seed=1)
  w, b = make((2, 3, 5), dtype, seed=2), make((2,), dtype, seed=3)
  check(lambda a, c, ww, bb: F.bilinear(a, c, ww, bb), x1, x2, w, b, ops=('_trilinear',))


def test_bilinear_grad():
  check_grad(lambda a, c, ww: F.bilinear(a, c, ww), make((4, 3), torch.float32), make((4, 5), torch.float32, seed=1),
             make((2, 3, 5), torch.float32, seed=2), ops=('_trilinear',))


@pytest.mark.parametrize('p', [0.0, 1.0, 2.0, 1.5, float('inf')], ids=str)
def test_cdist_pdist(p):
  dtype = torch.float32  # eager cdist has no bf16 kernel on the CPU
  x1, x2 = make((2, 4, 3), dtype), make((5, 3), dtype, seed=1)
  check(lambda a, b: torch.cdist(a, b, p=p), x1, x2, ops=('_cdist_forward',))
  check(lambda a: F.pdist(a, p=p), make((5, 3), dtype, seed=2), ops=('_pdist_forward',))


# ---- rsub, isin, equal ---------------------------------------------------------------------


@pytest.mark.parametrize('dtype', ALL, ids=ids)
def test_rsub(dtype):
  a, b = make((3, 4), dtype), make((3, 4), dtype, seed=1)
  check(lambda x, y: torch.rsub(x, y, alpha=2), a, b, ops=('rsub',))
  check(lambda x: torch.rsub(x, 3), a, ops=('rsub',))
  check(lambda x: 2.5 - x, a, ops=('rsub',))


@pytest.mark.parametrize('dtype', ALL, ids=ids)
@pytest.mark.parametrize('invert', [False, True])
def test_isin(dtype, invert):
  e, t = make((3, 4), dtype), make((5,), dtype, seed=1)
  check(lambda x, y: torch.isin(x, y, invert=invert), e, t, ops=('isin',))
  check(lambda x: torch.isin(x, 2, invert=invert), e, ops=('isin',))
  check(lambda y: torch.isin(1, y, invert=invert), t, ops=('isin',))


@pytest.mark.parametrize('dtype', ALL, ids=ids)
def test_equal(dtype):
  a = make((3, 4), dtype)
  b = a.clone()
  b[1, 2] += 1
  for x, y in [(a, a.clone()), (a, b), (a, a[:2])]:
    assert torch.equal(to_dev(x), to_dev(y)) == torch.equal(x, y)


def test_equal_nan_and_corrcoef():
  x = torch.tensor([1.0, float('nan')])
  assert not torch.equal(to_dev(x), to_dev(x))
  check(torch.corrcoef, make((3, 6), torch.float32), ops=('equal',))


# ---- _chunk_cat, _batch_norm_with_update ----------------------------------------------------


@pytest.mark.parametrize('dim', [0, 1, -1])
def test_chunk_cat(dim):
  ts = [make((2, 3, 4), torch.float32), make((2, 5), torch.float32, seed=1)]
  if dim == -1:
    ts = [make((2, 3, 5), torch.float32), make((2, 3, 2), torch.float32, seed=1)]
  check(lambda *xs: torch._chunk_cat(list(xs), dim, 2), *ts, ops=('_chunk_cat',))
  check(lambda *xs: torch._chunk_cat(list(xs), dim, 3), *ts, ops=('_chunk_cat',))


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
def test_batch_norm_with_update(dtype):
  x, w, b = make((4, 3, 2), dtype), make((3,), dtype, seed=1), make((3,), dtype, seed=2)
  rm, rv = make((3,), dtype, seed=3), make((3,), dtype, 'pos', seed=4)

  def fn(x, w, b, rm, rv):
    rm, rv = rm.clone(), rv.clone()
    out, mean, invstd, _ = torch.ops.aten._batch_norm_with_update(x, w, b, rm, rv, 0.1, 1e-5)
    return out, mean, invstd, rm, rv

  check(fn, x, w, b, rm, rv, ops=('_batch_norm_with_update',), **(BF16 if dtype == torch.bfloat16 else {}))


# ---- segment_reduce ---------------------------------------------------------------------


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('reduce', ['sum', 'mean', 'max', 'min', 'prod'])
@pytest.mark.parametrize('initial', [None, 2.0], ids=str)
def test_segment_reduce(dtype, reduce, initial):
  data = make((6, 3), dtype)
  lengths = torch.tensor([2, 0, 3, 1])
  offsets = torch.tensor([0, 2, 2, 5, 6])
  r = BF16 if dtype == torch.bfloat16 else {}
  check(lambda x, l: torch.segment_reduce(x, reduce, lengths=l, initial=initial), data, lengths,
        ops=('segment_reduce',), **r)
  check(lambda x, o: torch.segment_reduce(x, reduce, offsets=o, initial=initial), data, offsets,
        ops=('segment_reduce',), **r)
  # unsafe: positions past the last segment are left out.
  check(lambda x, l: torch.segment_reduce(x, reduce, lengths=l, unsafe=True, initial=initial), data, lengths[:3],
        ops=('segment_reduce',), **r)


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


def _f():
  return make((3, 4), torch.float32).to(DEV)


COUNTER_CASES = {
    'rsub.Tensor': (lambda: torch.rsub(_f(), _f()), 'rsub'),
    'rsub.Scalar': (lambda: torch.rsub(_f(), 2.0), 'rsub'),
    'addbmm': (lambda: torch.addbmm(_f()[:, :3], _f().reshape(2, 3, 2), _f().reshape(2, 2, 3)), 'addbmm'),
    'vdot': (lambda: torch.vdot(_f()[0], _f()[1]), 'vdot'),
    'equal': (lambda: torch.equal(_f(), _f()), 'equal'),
    'isin.Tensor_Tensor': (lambda: torch.isin(_f(), _f()[0]), 'isin'),
    'isin.Tensor_Scalar': (lambda: torch.isin(_f(), 1.0), 'isin'),
    'isin.Scalar_Tensor': (lambda: torch.isin(1.0, _f()), 'isin'),
    'index_copy': (lambda: _f().index_copy(0, _index([1]).to(DEV), _f()[:1]), 'index_copy'),
    'index_reduce': (lambda: _f().index_reduce(0, _index([1]).to(DEV), _f()[:1], 'amax'), 'index_reduce'),
    'take': (lambda: torch.take(_f(), _index([1, 5]).to(DEV)), 'take'),
    'put': (lambda: _f().put(_index([1, 5]).to(DEV), _f()[0, :2]), 'put'),
    'masked_scatter': (lambda: _f().masked_scatter(_f() > 0, _f()), 'masked_scatter'),
    'nonzero_static': (lambda: torch.nonzero_static(_f(), size=4), 'nonzero_static'),
    '_trilinear': (lambda: F.bilinear(_f(), _f(), _f().reshape(3, 4, 1).expand(3, 4, 4).contiguous()), '_trilinear'),
    '_cdist_forward': (lambda: torch.cdist(_f(), _f()), '_cdist_forward'),
    '_pdist_forward': (lambda: F.pdist(_f()), '_pdist_forward'),
    '_batch_norm_with_update': (lambda: torch.ops.aten._batch_norm_with_update(
        _f().reshape(4, 3), None, None, torch.zeros(3, device=DEV), torch.ones(3, device=DEV), 0.1, 1e-5),
                                '_batch_norm_with_update'),
    'segment_reduce': (lambda: torch.segment_reduce(_f(), 'sum', lengths=torch.tensor([1, 3], device=DEV)),
                       'segment_reduce'),
    'resize_': (lambda: _f().resize_(2, 2), 'resize_'),
    '_chunk_cat': (lambda: torch._chunk_cat([_f(), _f()], 1, 2), '_chunk_cat'),
}


@pytest.mark.parametrize('accumulate', [False, True])
def test_index_put_mask_with_row_value(accumulate):
  x, row = make((5, 4), torch.float32), make((4,), torch.float32, seed=1)
  mask = torch.tensor([True, False, True, True, False])
  check(lambda t, m, v: torch.index_put(t, (m,), v, accumulate=accumulate), x, mask, row, ops=('index_put',))
  check(lambda t, m, v: torch.index_put(t, (m,), v, accumulate=accumulate), x, mask, row[:1], ops=('index_put',))


# ---- custom ops run under functionalization ---------------------------------------------


@pytest.mark.skipif(not hasattr(torch.nn, 'LinearCrossEntropyOptions'),
                    reason='torch.nn.LinearCrossEntropyOptions is new in torch 2.13')
@pytest.mark.parametrize('reduction', ['none', 'sum', 'mean'])
def test_linear_cross_entropy_chunked(reduction):
  # The chunked path is a torch.library custom op whose implementation writes through
  # views (out.narrow(...).copy_): torch_xla runs it under functionalization.
  options = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
  x, w = make((5, 3), torch.float32), make((4, 3), torch.float32, seed=1)
  target = torch.tensor([0, 3, 1, 1, 2])
  check(lambda a, b, t: F.linear_cross_entropy(a, b, t, reduction=reduction, options=options), x, w, target)
  check(lambda a, b, t: F.linear_cross_entropy(a, b, t, reduction=reduction, options=options), x[0], w, target[0])
