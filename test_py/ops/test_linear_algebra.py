"""Products and linear algebra on the XLA device against eager CPU: mm, bmm, addmm,
linear, matmul, baddbmm, addbmm, addmv, dot, vdot / vecdot, einsum, bilinear, cdist,
pdist, trace and linalg.cross; values, dtypes (float32, bfloat16, integers), broadcasting,
gradients, bad shapes, and the counters. The LAPACK ops (inverse, solve, the
factorizations): test_batch_linear_algebra.py."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import (ALL, DEV, F32, FLOATS, assert_same, check, check_grad, ids, lowered, make, to_dev,
                                tol_for)
from testing.counter_cases import floats as _f, positive as _pos, floats as _x


# --------------------------------------------------------- matrix products


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64], ids=ids)
def test_mm(dtype):
  a, b = make((3, 5), dtype, seed=1), make((5, 4), dtype, seed=2)
  check(torch.mm, a, b, ops=['mm'], **({} if dtype != torch.bfloat16 else dict(rtol=2e-2, atol=5e-2)))


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int64], ids=ids)
def test_bmm(dtype):
  a, b = make((2, 3, 5), dtype, seed=1), make((2, 5, 4), dtype, seed=2)
  check(torch.bmm, a, b, ops=['bmm'], **({} if dtype != torch.bfloat16 else dict(rtol=2e-2, atol=5e-2)))


@pytest.mark.parametrize('alpha,beta', [(1, 1), (2.0, 0.5), (1, 0), (-1.5, 1), (0.5, 2)])
@pytest.mark.parametrize('bias_shape', [(3, 4), (4,), (1, 4), (3, 1), ()])
def test_addmm(alpha, beta, bias_shape):
  bias = make(bias_shape, torch.float32, seed=3)
  a, b = make((3, 5), torch.float32, seed=1), make((5, 4), torch.float32, seed=2)
  check(lambda c, x, y: torch.addmm(c, x, y, alpha=alpha, beta=beta), bias, a, b, ops=['addmm'])


def test_addmm_beta_zero_ignores_nan_bias():
  bias = torch.full((3, 4), float('nan'))
  a, b = make((3, 5), torch.float32, seed=1), make((5, 4), torch.float32, seed=2)
  check(lambda c, x, y: torch.addmm(c, x, y, beta=0), bias, a, b, ops=['addmm'])


def test_addmm_bf16_and_int():
  args = [make((4,), torch.bfloat16, seed=3), make((3, 5), torch.bfloat16, seed=1), make((5, 4), torch.bfloat16, seed=2)]
  check(lambda c, x, y: torch.addmm(c, x, y, alpha=2, beta=0.5), *args, ops=['addmm'], rtol=2e-2, atol=1e-1)
  args = [make((4,), torch.int64, seed=3), make((3, 5), torch.int64, seed=1), make((5, 4), torch.int64, seed=2)]
  check(lambda c, x, y: torch.addmm(c, x, y, alpha=2, beta=3), *args, ops=['addmm'])


def test_linear():
  x, w, b = make((2, 3, 5), torch.float32, seed=1), make((4, 5), torch.float32, seed=2), make((4,), torch.float32, seed=3)
  check(torch.nn.functional.linear, x[0], w, b, ops=['addmm', 't_copy'])
  check(torch.nn.functional.linear, x[0], w, ops=['mm'])
  check(torch.nn.functional.linear, x, w, b)  # 3-D input goes through a view


@pytest.mark.parametrize('shapes', [((5,), (5,)), ((3, 5), (5,)), ((5,), (5, 4)), ((3, 5), (5, 4)),
                                    ((2, 3, 5), (5, 4)), ((2, 3, 5), (2, 5, 4)), ((5,), (2, 5, 4)),
                                    ((2, 3, 5), (5,)), ((2, 1, 3, 5), (4, 5, 2))],
                         ids=lambda s: f'{s[0]}@{s[1]}')
def test_matmul(shapes):
  a, b = make(shapes[0], torch.float32, seed=1), make(shapes[1], torch.float32, seed=2)
  # Matrix-vector products use dot/mv, which are not lowered (CPU fallback).
  check(torch.matmul, a, b, any_fallback=1 in (len(shapes[0]), len(shapes[1])))


def test_matmul_lowered_paths():
  check(torch.matmul, make((3, 5), torch.float32, seed=1), make((5, 4), torch.float32, seed=2), ops=['mm'])
  check(torch.matmul, make((2, 3, 5), torch.float32, seed=1), make((5, 4), torch.float32, seed=2),
        ops=['mm', '_unsafe_view'])
  check(torch.matmul, make((2, 3, 5), torch.float32, seed=1), make((2, 5, 4), torch.float32, seed=2), ops=['bmm'])


def test_mm_errors_and_recovery():
  a = torch.ones(2, 3, device=DEV)
  with pytest.raises(RuntimeError, match='2x3 and 4x5'):
    torch.mm(a, torch.ones(4, 5, device=DEV))
  with pytest.raises(RuntimeError):
    torch.mm(a, torch.ones(3, 2, dtype=torch.float64, device=DEV))
  with pytest.raises(RuntimeError):
    torch.bmm(torch.ones(2, 2, 3, device=DEV), torch.ones(3, 3, 2, device=DEV))
  with pytest.raises(RuntimeError):
    torch.addmm(torch.ones(3, device=DEV), a, torch.ones(4, 5, device=DEV))
  r = torch.mm(a, torch.ones(3, 2, device=DEV))
  assert torch.equal(r.cpu(), torch.full((2, 2), 3.0))


# ---- baddbmm, matmul, einsum -------------------------------------------------

@pytest.mark.parametrize('dtype', FLOATS + [torch.int64], ids=ids)
@pytest.mark.parametrize('beta,alpha', [(1, 1), (0.5, 2), (0, 1.5)])
def test_baddbmm(dtype, beta, alpha):
  if not dtype.is_floating_point:
    beta, alpha = int(beta), int(max(alpha, 1))
  s = make((3, 4, 5), dtype, seed=1)
  a, b = make((3, 4, 6), dtype, seed=2), make((3, 6, 5), dtype, seed=3)
  check(lambda s, a, b: torch.baddbmm(s, a, b, beta=beta, alpha=alpha), s, a, b, ops=('baddbmm',),
        **tol_for(dtype, F32))


def test_baddbmm_broadcast_self_and_beta0_ignores_nan():
  a, b = make((2, 3, 4), torch.float32, seed=2), make((2, 4, 5), torch.float32, seed=3)
  check(lambda s, a, b: torch.baddbmm(s, a, b), make((5,), torch.float32), a, b, ops=('baddbmm',))
  nan = torch.full((2, 3, 5), float('nan'))
  check(lambda s, a, b: torch.baddbmm(s, a, b, beta=0), nan, a, b, ops=('baddbmm',))


def test_baddbmm_backward():
  s = make((2, 3, 5), torch.float32, seed=1)
  a, b = make((2, 3, 4), torch.float32, seed=2), make((2, 4, 5), torch.float32, seed=3)
  check_grad(lambda s, a, b: torch.baddbmm(s, a, b, beta=0.5, alpha=2), s, a, b, ops=('baddbmm', 'bmm'))


def test_baddbmm_bad_input_raises():
  with pytest.raises(RuntimeError, match='baddbmm'):
    torch.baddbmm(to_dev(torch.ones(2, 3, 5)), to_dev(torch.ones(2, 3, 4)), to_dev(torch.ones(2, 3, 5)))
  with pytest.raises(RuntimeError, match='baddbmm'):
    torch.baddbmm(to_dev(torch.ones(2, 3, 7)), to_dev(torch.ones(2, 3, 4)), to_dev(torch.ones(2, 4, 5)))


@pytest.mark.parametrize('sa,sb', [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)),
                                   ((2, 4, 3, 8), (2, 4, 8, 5)), ((4,), (4, 5)), ((2, 3, 4), (4,)),
                                   ((1, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
                                   ((4,), (4,)), ((3, 4), (4,))])
def test_matmul_forms_lowered(sa, sb):
  a, b = make(sa, torch.float32, seed=1), make(sb, torch.float32, seed=2)
  check_grad(torch.matmul, a, b)


@pytest.mark.parametrize('dtype', FLOATS + [torch.int64], ids=ids)
def test_addmv_and_dot(dtype):
  s, m, v = make((3,), dtype, seed=1), make((3, 4), dtype, seed=2), make((4,), dtype, seed=3)
  beta, alpha = (0.5, 2.0) if dtype.is_floating_point else (2, 3)
  check(lambda s, m, v: torch.addmv(s, m, v, beta=beta, alpha=alpha), s, m, v, ops=('addmv',), **tol_for(dtype, F32))
  check(lambda s, m, v: torch.addmv(s, m, v), make((1,), dtype), m, v, ops=('addmv',), **tol_for(dtype, F32))
  check(lambda m, v: torch.mv(m, v), m, v, ops=('addmv',), **tol_for(dtype, F32))
  check(lambda a, b: torch.dot(a, b), v, make((4,), dtype, seed=4), ops=('dot',), **tol_for(dtype, F32))
  if dtype.is_floating_point:
    nan = torch.full((3,), float('nan'), dtype=dtype)
    check(lambda s, m, v: torch.addmv(s, m, v, beta=0), nan, m, v, ops=('addmv',), **tol_for(dtype, F32))


def test_addmv_dot_bad_input_raises():
  with pytest.raises(RuntimeError, match='addmv'):
    torch.addmv(to_dev(torch.ones(3)), to_dev(torch.ones(3, 4)), to_dev(torch.ones(5)))
  with pytest.raises(RuntimeError, match='dot'):
    torch.dot(to_dev(torch.ones(3)), to_dev(torch.ones(4)))
  with pytest.raises(RuntimeError, match='dot'):
    torch.dot(to_dev(torch.ones(3)), to_dev(torch.ones(3, dtype=torch.int64)))


@pytest.mark.parametrize('eq,sa,sb', [('bij,bjk->bik', (2, 3, 4), (2, 4, 5)), ('bhqd,bhkd->bhqk', (2, 3, 4, 8), (2, 3, 5, 8)),
                                      ('ij,jk->ik', (3, 4), (4, 5)), ('bi,bi->b', (3, 4), (3, 4)),
                                      ('ij->ji', (3, 4), None), ('i,j->ij', (3,), (4,))])
def test_einsum_forms_lowered(eq, sa, sb):
  inputs = [make(sa, torch.float32, seed=1)] + ([make(sb, torch.float32, seed=2)] if sb else [])
  check_grad(lambda *t: torch.einsum(eq, *t), *inputs)


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


# ---- trace / linalg.cross ----------------------------------------------------

@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.float64, torch.int32, torch.int64], ids=ids)
@pytest.mark.parametrize('shape', [(4, 4), (3, 5), (6, 2), (1, 1)])
def test_trace(shape, dtype):
  x = make(shape, dtype)
  try:
    torch.trace(x)
  except NotImplementedError:
    # torch before 2.13 has no bfloat16 trace on the CPU: float64's, rounded, instead.
    with lowered('trace'):
      actual = torch.trace(x.to(DEV))
    assert_same(actual, torch.trace(x.double()).to(dtype))
    return
  check(torch.trace, x, ops=('trace',))


def test_trace_bool_raises_like_eager():
  x = torch.ones(2, 2, dtype=torch.bool)
  for t in (x, x.to(DEV)):
    with pytest.raises(NotImplementedError, match="\"trace\" not implemented for 'Bool'"):
      torch.trace(t)


def test_trace_gradient():
  check_grad(lambda t: torch.trace(t) * 3, make((3, 4), torch.float32), ops=('trace',), rtol=0, atol=0)


def test_trace_of_a_vector_raises():
  x = torch.ones(3, device=DEV)
  with pytest.raises(RuntimeError, match='trace: expected a matrix, but got tensor with dim 1'):
    torch.trace(x)
  assert_same(x + 1, torch.ones(3) + 1)


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int64], ids=ids)
@pytest.mark.parametrize('a,b,dim', [((4, 3), (4, 3), -1), ((3, 5), (3, 5), 0), ((2, 1, 3), (1, 4, 3), 2),
                                     ((5, 3, 2), (5, 3, 2), 1)])
def test_linalg_cross(a, b, dim, dtype):
  check(lambda x, y: torch.linalg.cross(x, y, dim=dim), make(a, dtype, seed=1), make(b, dtype, seed=2),
        ops=('linalg_cross',))


def test_linalg_cross_gradients():
  # the backward is cross products again
  a, b = (make((4, 3), torch.float32, seed=s) for s in (1, 2))
  check_grad(torch.linalg.cross, a, b, ops=('linalg_cross',), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('a,b,match', [((4, 2), (4, 2), 'must have length 3'),
                                       ((4, 3), (3,), 'same number of dimensions')])
def test_linalg_cross_bad_shapes_raise(a, b, match):
  x, y = torch.ones(a, device=DEV), torch.ones(b, device=DEV)
  with pytest.raises(RuntimeError, match='linalg.cross: .*' + match):
    torch.ops.aten.linalg_cross(x, y)
  assert_same(x * 2, torch.ones(a) * 2)


# ---- counter cases ------------------------------------------------------------

COUNTER_CASES = {
    'mm': (lambda: _pos() @ _pos().t(), 'mm'),
    'bmm': (lambda: torch.bmm(_pos()[None], _pos().t()[None]), 'bmm'),
    'addmm': (lambda: torch.addmm(_pos()[0], _pos().t(), _pos()), 'addmm'),
    'baddbmm': (lambda: torch.baddbmm(_x((2, 3, 3)), _x((2, 3, 4)), _x((2, 4, 3))), 'baddbmm'),
    'addmv': (lambda: torch.mv(_x(), _x((4,))), 'addmv'),
    'dot': (lambda: torch.dot(_x((4,)), _x((4,), seed=1)), 'dot'),
    'addbmm': (lambda: torch.addbmm(_f()[:, :3], _f().reshape(2, 3, 2), _f().reshape(2, 2, 3)), 'addbmm'),
    'vdot': (lambda: torch.vdot(_f()[0], _f()[1]), 'vdot'),
    '_trilinear': (lambda: F.bilinear(_f(), _f(), _f().reshape(3, 4, 1).expand(3, 4, 4).contiguous()), '_trilinear'),
    '_cdist_forward': (lambda: torch.cdist(_f(), _f()), '_cdist_forward'),
    '_pdist_forward': (lambda: F.pdist(_f()), '_pdist_forward'),
    'trace': (lambda: torch.trace(torch.randn(3, 3, device=DEV)), 'trace'),
    'linalg_cross': (lambda: torch.linalg.cross(torch.randn(2, 3, device=DEV), torch.randn(2, 3, device=DEV)),
                     'linalg_cross'),
}
