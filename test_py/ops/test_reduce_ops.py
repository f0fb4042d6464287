"""Reductions on the XLA device against eager CPU PyTorch: sum and mean (dims, keepdim,
dtype), var / std, max / min / argmax / argmin / amax / amin, prod, logsumexp, cumsum /
cumprod, any / all, vector and matrix norms, renorm, the cumulative and NaN-aware
reductions (cummax, cummin, logcumsumexp, nansum, nanmean, count_nonzero, aminmax),
histc and segment_reduce; values, dtype and shape, gradients, bad input, and the
counters."""

import pytest
import torch

from testing.op_testing import ALL, BF16, DEV, FLOATS, check, check_grad, check_grads, ids, make
from testing.counter_cases import floats as _f, positive as _pos, typed as _x


# -------------------------------------------------------------- reductions


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.bool], ids=ids)
@pytest.mark.parametrize('dim,keepdim', [(None, False), (0, False), (1, True), (-1, False), ((0, 2), False),
                                         ((0, 2), True), ((), False), ([-3, 1], True)])
def test_sum(dtype, dim, keepdim):
  x = make((2, 3, 4), dtype, seed=4)
  if dim is None:
    fn = lambda t: t.sum()
  else:
    fn = lambda t: t.sum(dim, keepdim=keepdim)
  check(fn, x, ops=['sum'])


def test_sum_dtype_arg():
  x = make((3, 4), torch.int32, seed=4)
  check(lambda t: t.sum(dtype=torch.float32), x, ops=['sum'])
  check(lambda t: t.sum(1, dtype=torch.int32), x, ops=['sum'])
  check(lambda t: t.sum(0, dtype=torch.float64), make((3, 4), torch.float32), ops=['sum'])
  check(lambda t: t.sum(dtype=torch.float32), make((3, 4), torch.bfloat16), ops=['sum'])


def test_sum_0d_and_empty():
  check(lambda t: t.sum(), torch.tensor(2.5), ops=['sum'])
  check(lambda t: t.sum(0), torch.tensor(2.5), ops=['sum'])
  check(lambda t: t.sum(-1, keepdim=True), torch.tensor(2.5), ops=['sum'])
  check(lambda t: t.sum(), torch.zeros(0, 3), ops=['sum'])
  check(lambda t: t.sum(0), torch.zeros(0, 3), ops=['sum'])


def test_sum_bad_dim_raises():
  with pytest.raises(RuntimeError):
    torch.ones(2, 3, device=DEV).sum(2)


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('dim,keepdim', [(None, False), (0, False), (1, True), (-1, False), ((0, 2), False),
                                         ((0, 2), True), ((), False)])
def test_mean(dtype, dim, keepdim):
  x = make((2, 3, 4), dtype, seed=4)
  fn = (lambda t: t.mean()) if dim is None else (lambda t: t.mean(dim, keepdim=keepdim))
  check(fn, x, ops=['mean'])


def test_mean_dtype_and_0d():
  check(lambda t: t.mean(dtype=torch.float32), make((3, 4), torch.bfloat16), ops=['mean'])
  check(lambda t: t.mean(1, dtype=torch.float64), make((3, 4), torch.float32), ops=['mean'])
  check(lambda t: t.mean(0), torch.tensor(1.5), ops=['mean'])
  check(lambda t: t.mean(dtype=torch.float32), make((3, 4), torch.int64), ops=['mean'])


def test_mean_int_raises():
  with pytest.raises(RuntimeError, match='mean'):
    torch.ones(3, dtype=torch.int64, device=DEV).mean()


def test_bf16_sum_accumulates_precisely():
  # 1024 ones plus small values: a bf16 accumulator would lose the small ones.
  x = torch.full((4096,), 0.01, dtype=torch.bfloat16)
  check(lambda t: t.sum(), x, ops=['sum'])
  check(lambda t: t.mean(), x, ops=['mean'])


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


# ---- linalg_vector_norm, norm -------------------------------------------------------------


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


F32_GRAD = dict(rtol=1e-5, atol=1e-5)
BF16_GRAD = dict(rtol=3e-2, atol=3e-2)


# ---- cumulative and NaN-aware reductions ---------------------------------------------------------

def _with_nans_and_ties(shape, dtype, seed=0):
  x = make(shape, dtype, seed=seed)
  if dtype.is_floating_point:
    x = (x * 2).round() / 2  # ties
    flat = x.view(-1)
    flat[3] = float('nan')
    flat[-2] = float('nan')
  return x


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.bool], ids=ids)
@pytest.mark.parametrize('fn', [torch.cummax, torch.cummin], ids=['cummax', 'cummin'])
def test_cummax_cummin(fn, dtype):
  x = _with_nans_and_ties((4, 9), dtype)
  for dim in (0, 1, -1):
    check(lambda a: fn(a, dim), x, ops=(fn.__name__,))
  check(lambda a: fn(a, 0), torch.tensor(2.0).to(dtype), ops=(fn.__name__,))


@pytest.mark.parametrize('fn', [torch.cummax, torch.cummin], ids=['cummax', 'cummin'])
def test_cummax_cummin_gradient(fn):
  x = make((3, 7), torch.float32, seed=2)
  check_grad(lambda a: fn(a, 1).values, x, ops=(fn.__name__,))


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
def test_logcumsumexp(dtype):
  x = make((5, 12), dtype, seed=3) * 40
  x[0, :3] = float('-inf')
  x[1, 4] = float('inf')
  x[2, 2] = float('nan')
  x[3] = torch.tensor([-300.0, 0.0] * 6).to(dtype)  # far apart: no underflow to -inf
  for dim in (0, 1):
    check(lambda a: torch.logcumsumexp(a, dim), x, ops=('_logcumsumexp',))
  check_grad(lambda a: torch.logcumsumexp(a, 1), make((3, 6), torch.float32, seed=4), ops=('_logcumsumexp',),
             **F32_GRAD)


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32], ids=ids)
def test_nansum_nanmean(dtype):
  x = _with_nans_and_ties((4, 6), dtype, seed=1)
  check(lambda a: torch.nansum(a), x, ops=('nansum',))
  check(lambda a: torch.nansum(a, dim=1, keepdim=True), x, ops=('nansum',))
  check(lambda a: torch.nansum(a, dim=(0, 1), dtype=torch.float64), x, ops=('nansum',))
  if dtype.is_floating_point:
    check(lambda a: torch.nanmean(a, dim=0), x, ops=('nansum',))
    check_grad(lambda a: torch.nansum(a, 1), x.float(), ops=('nansum',))


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=ids)
def test_count_nonzero_aminmax(dtype):
  x = _with_nans_and_ties((3, 5), dtype, seed=2)
  check(lambda a: torch.count_nonzero(a), x, ops=('count_nonzero',))
  check(lambda a: torch.count_nonzero(a, dim=0), x, ops=('count_nonzero',))
  check(lambda a: torch.aminmax(a), x, ops=('aminmax',))
  check(lambda a: torch.aminmax(a, dim=1, keepdim=True), x, ops=('aminmax',))
  check(lambda a: torch.aminmax(a, dim=-2), x, ops=('aminmax',))
  with pytest.raises(RuntimeError, match='aminmax'):
    torch.aminmax(torch.ones(0, 3, device=DEV).to(dtype))


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
def test_histc(dtype):
  x = make((40,), dtype, seed=6) * 3
  x[0] = float('nan')
  check(lambda a: torch.histc(a, bins=7, min=-2, max=2), x, ops=('histc',))
  check(lambda a: torch.histc(a[1:], bins=5), x, ops=('histc',))  # the data's range
  check(lambda a: torch.histc(a, bins=3, min=1, max=1), torch.ones(4, dtype=dtype), ops=('histc',))
  with pytest.raises(RuntimeError, match='bins must be > 0'):
    torch.histc(x.to(DEV), bins=0)
  with pytest.raises(RuntimeError, match='max must be larger than min'):
    torch.histc(x.to(DEV), bins=3, min=2, max=1)


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('p', [1, 2, 3.5, float('inf')])
def test_renorm(p, dtype):
  x = make((3, 4, 2), dtype, seed=7) * 2
  tol = BF16_GRAD if dtype == torch.bfloat16 else F32_GRAD
  for dim in (0, 1, -1):
    check(lambda a: torch.renorm(a, p, dim, 1.5), x, ops=('renorm',), **tol)
  if dtype == torch.float32:
    check_grad(lambda a: torch.renorm(a, p, 0, 1.5), x, ops=('renorm',), **tol)
  with pytest.raises(RuntimeError, match='at least 2 dimensions'):
    torch.renorm(torch.ones(3, device=DEV), 2, 0, 1.0)


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


# ---- counter cases ------------------------------------------------------------

COUNTER_CASES = {
    'sum': (lambda: _pos().sum(), 'sum'),
    'sum.dim_IntList': (lambda: _pos().sum(1), 'sum'),
    'mean': (lambda: _pos().mean(), 'mean'),
    'mean.dim': (lambda: _pos().mean(0), 'mean'),
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
    'norm.Scalar': (lambda: _x().norm(), 'norm'),
    'norm.ScalarOpt_dim': (lambda: torch.norm(_x(), 2, dim=1), 'norm'),
    'norm.ScalarOpt_dtype': (lambda: torch.ops.aten.norm.ScalarOpt_dtype(_x(), 2, dtype=torch.float64), 'norm'),
    'norm.ScalarOpt_dim_dtype': (lambda: torch.norm(_x(), 2, dim=1, dtype=torch.float64), 'norm'),
    # cumulative and NaN-aware reductions
    'cummax': (lambda: torch.cummax(torch.ones(3, device=DEV), 0), 'cummax'),
    'cummin': (lambda: torch.cummin(torch.ones(3, device=DEV), 0), 'cummin'),
    '_logcumsumexp': (lambda: torch.logcumsumexp(torch.ones(3, device=DEV), 0), '_logcumsumexp'),
    'nansum': (lambda: torch.nansum(torch.ones(3, device=DEV)), 'nansum'),
    'count_nonzero.dim_IntList': (lambda: torch.count_nonzero(torch.ones(3, device=DEV), dim=[0]), 'count_nonzero'),
    'aminmax': (lambda: torch.aminmax(torch.ones(3, device=DEV)), 'aminmax'),
    'histc': (lambda: torch.histc(torch.ones(3, device=DEV), 4), 'histc'),
    'renorm': (lambda: torch.renorm(torch.ones(2, 3, device=DEV), 2, 0, 1.0), 'renorm'),
    'segment_reduce': (lambda: torch.segment_reduce(_f(), 'sum', lengths=torch.tensor([1, 3], device=DEV)),
                       'segment_reduce'),
}
