"""softmax, log_softmax and _safe_softmax on the XLA device against eager CPU: values,
dtypes, shapes, input gradients, large values, masked rows, no CPU fallback, and errors
that name the op."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import DEV, FLOATS, check, check_grad, ids, make, run_grads, to_dev, tol_for
from testing.counter_cases import grad_case as _grad_case, floats as _x


# ---------------------------------------------------------------------------------
# log_softmax


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('shape,dim', [((4, 10), 1), ((4, 10), 0), ((2, 3, 5), -1), ((2, 3, 5), 1), ((7,), 0),
                                       ((), 0), ((0, 3), 1)])
def test_log_softmax(shape, dim, dtype):
  x = make(shape, dtype)
  check(lambda t: F.log_softmax(t, dim), x, ops=['_log_softmax'])
  if x.numel():
    run_grads(lambda t: F.log_softmax(t, dim), [x], [0], ops=['_log_softmax', '_log_softmax_backward_data'])


def test_log_softmax_large_values_stable():
  x = torch.tensor([[1000., 0., -1000.], [88., 89., 90.]])
  out = check(lambda t: F.log_softmax(t, 1), x, ops=['_log_softmax'])
  assert torch.isfinite(out.cpu()).all()


def test_log_softmax_dtype_arg():
  x = make((3, 4), torch.bfloat16)
  check(lambda t: F.log_softmax(t, 1, dtype=torch.float32), x, ops=['_log_softmax'])


def test_log_softmax_errors():
  with pytest.raises(Exception, match='log_softmax'):
    torch.ops.aten._log_softmax(torch.ones(3, dtype=torch.long, device=DEV), 0, False)
  with pytest.raises(Exception, match='log_softmax|out of range'):
    F.log_softmax(torch.ones(3, 4, device=DEV), 2)
  with pytest.raises(Exception, match='log_softmax_backward'):
    torch.ops.aten._log_softmax_backward_data(torch.ones(3, device=DEV), torch.ones(4, device=DEV), 0, torch.float)


# ---- softmax -----------------------------------------------------------------

@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('dim', [0, 1, -1])
def test_softmax_forward_backward(dtype, dim):
  x = make((5, 6, 7), dtype) * 4
  check_grad(lambda x: F.softmax(x, dim=dim), x, ops=('_softmax', '_softmax_backward_data'), **tol_for(dtype))


def test_softmax_is_stable_and_edge_cases():
  x = torch.tensor([[1000., 1001., 1002.], [-1000., -1000., float('-inf')]])
  check(lambda x: F.softmax(x, -1), x, ops=('_softmax',))
  check(lambda x: F.softmax(x, 0), torch.tensor(3.0), ops=('_softmax',))
  check(lambda x: F.softmax(x, -1), torch.zeros(0, 4), ops=('_softmax',))
  # dtype= converts first (an f32 softmax of a bf16 input).
  check(lambda x: F.softmax(x, -1, dtype=torch.float32), make((3, 5), torch.bfloat16), ops=('_softmax',),
        allow=())


def test_safe_softmax_masked_rows_give_zeros():
  x = make((3, 4), torch.float32)
  x[1] = float('-inf')
  check(lambda x: torch.ops.aten._safe_softmax(x, -1), x, ops=('_safe_softmax',))
  check(lambda x: torch.ops.aten._safe_softmax(x, -1, dtype=torch.float32), make((3, 4), torch.bfloat16),
        ops=('_safe_softmax',))


def test_softmax_bad_input_raises():
  with pytest.raises(RuntimeError, match='_softmax'):
    torch.ops.aten._softmax(to_dev(torch.ones(3, 4)), 2, False)
  with pytest.raises(RuntimeError, match='_softmax'):
    torch.ops.aten._softmax(to_dev(torch.ones(3, 4)), 1, True)
  with pytest.raises(RuntimeError, match='_softmax_backward_data'):
    torch.ops.aten._softmax_backward_data(to_dev(torch.ones(3, 4)), to_dev(torch.ones(3, 5)), 1, torch.float32)


# ---- counter cases ------------------------------------------------------------

def _log_softmax_backward_case():
  x = torch.randn(3, 4, device=DEV, requires_grad=True)
  F.log_softmax(x, 1).sum().backward()


COUNTER_CASES = {
    '_log_softmax': (lambda: F.log_softmax(torch.randn(3, 4, device=DEV), 1), '_log_softmax'),
    '_log_softmax_backward_data': (_log_softmax_backward_case, '_log_softmax_backward_data'),
    '_softmax': (lambda: F.softmax(_x(), -1), '_softmax'),
    '_softmax_backward_data': (_grad_case(lambda x: F.softmax(x, -1) * _x(seed=1)), '_softmax_backward_data'),
    '_safe_softmax': (lambda: torch.ops.aten._safe_softmax(_x(), -1), '_safe_softmax'),
}
