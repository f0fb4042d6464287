"""trace and linalg.cross on the device against eager CPU: values and dtypes (float32,
bfloat16, integers, bool for trace), non-square matrices, broadcasting, gradients; bad
shapes raise."""

import pytest
import torch

from op_testing import DEV, assert_same, check, check_grad, ids, lowered, make


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


COUNTER_CASES = {
    'trace': (lambda: torch.trace(torch.randn(3, 3, device=DEV)), 'trace'),
    'linalg_cross': (lambda: torch.linalg.cross(torch.randn(2, 3, device=DEV), torch.randn(2, 3, device=DEV)),
                     'linalg_cross'),
}
