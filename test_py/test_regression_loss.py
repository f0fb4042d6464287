"""smooth_l1_loss and huber_loss on the device against eager CPU: the loss and the input
and target gradients, every reduction, float32, float64 and bfloat16, broadcast targets,
both sides of the quadratic zone; bad arguments raise."""

import pytest
import torch
import torch.nn.functional as F

from op_testing import DEV, assert_same, check_grad, ids, lowered, make

TOLERANCES = {
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.bfloat16: dict(rtol=2e-2, atol=2e-2),
}

LOSSES = {
    # name: (function, parameter values, ATen ops it runs)
    'smooth_l1': (lambda a, b, r, p: F.smooth_l1_loss(a, b, reduction=r, beta=p), [1.0, 0.5, 0.0],
                  ('smooth_l1_loss', 'smooth_l1_loss_backward')),
    'huber': (lambda a, b, r, p: F.huber_loss(a, b, reduction=r, delta=p), [1.0, 0.3, 2.5],
              ('huber_loss', 'huber_loss_backward')),
}


def _inputs(shape, target_shape, dtype):
  x = make(shape, dtype, seed=1) * 2
  y = make(target_shape, dtype, seed=2)
  return x, y


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('reduction', ['none', 'mean', 'sum'])
@pytest.mark.parametrize('name', list(LOSSES))
def test_loss_forward_backward(name, reduction, dtype):
  loss, params, ops = LOSSES[name]
  x, y = _inputs((4, 5, 3), (4, 5, 3), dtype)
  # equal elements: the gradient at d = 0 (sign(0) = 0 for beta = 0)
  y[0, 0] = x[0, 0]
  for param in params:
    # F.smooth_l1_loss with beta = 0 runs l1_loss instead
    check_grad(lambda a, b: loss(a, b, reduction, param), x, y, ops=ops if param else (), **TOLERANCES[dtype])


@pytest.mark.parametrize('name', list(LOSSES))
def test_loss_broadcast_target(name):
  """A target that broadcasts to the input (PyTorch warns and broadcasts)."""
  loss, params, ops = LOSSES[name]
  x, y = _inputs((3, 4), (4,), torch.float32)
  for reduction in ('none', 'mean'):
    with pytest.warns(UserWarning) as warned:
      check_grad(lambda a, b: loss(a, b, reduction, params[1]), x, y, ops=ops, rtol=1e-5, atol=1e-5)
    # once on the CPU, once on the device
    assert len([w for w in warned if issubclass(w.category, UserWarning)]) >= 2


@pytest.mark.parametrize('reduction', [0, 1, 2])
def test_smooth_l1_beta_zero_aten_ops(reduction):
  """The ATen ops themselves with beta = 0 (the L1 loss; gradient sign(d), 0 at d = 0)."""
  x, y = _inputs((3, 4), (3, 4), torch.float32)
  y[1, 2] = x[1, 2]
  grad = make(() if reduction else (3, 4), torch.float32, seed=4)
  fwd = lambda a, b: torch.ops.aten.smooth_l1_loss(a, b, reduction, 0.0)
  bwd = lambda g, a, b: torch.ops.aten.smooth_l1_loss_backward(g, a, b, reduction, 0.0)
  with lowered('smooth_l1_loss', 'smooth_l1_loss_backward'):
    actual = (fwd(x.to(DEV), y.to(DEV)), bwd(grad.to(DEV), x.to(DEV), y.to(DEV)))
  assert_same(actual[0], fwd(x, y), rtol=1e-5, atol=1e-5)
  expected_grad = grad * torch.sign(x - y) / (x.numel() if reduction == 1 else 1)
  assert_same(actual[1], expected_grad, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('call,match', [
    (lambda x: torch.ops.aten.smooth_l1_loss(x, x, 1, -1.0), 'smooth_l1_loss: .*negative values for beta'),
    (lambda x: torch.ops.aten.huber_loss(x, x, 1, 0.0), 'huber_loss: .*non-positive values for delta'),
    (lambda x: torch.ops.aten.huber_loss(x, x, 7, 1.0), 'huber_loss: expected reduction 0 \\(none\\)'),
    (lambda x: torch.ops.aten.smooth_l1_loss(x.long(), x.long(), 1, 1.0), 'smooth_l1_loss: expected floating point'),
    (lambda x: torch.ops.aten.huber_loss(x[0], x, 0, 1.0), 'huber_loss: target .* must broadcast to the input'),
])
def test_loss_bad_arguments_raise(call, match):
  x = torch.randn(2, 3, device=DEV)
  with pytest.raises(RuntimeError, match=match):
    call(x)
  assert torch.allclose((x * 2).cpu(), x.cpu() * 2)


COUNTER_CASES = {
    'smooth_l1_loss': (lambda: F.smooth_l1_loss(torch.randn(3, device=DEV), torch.randn(3, device=DEV)),
                       'smooth_l1_loss'),
    'smooth_l1_loss_backward': (lambda: torch.ops.aten.smooth_l1_loss_backward(
        torch.ones((), device=DEV), torch.randn(3, device=DEV), torch.randn(3, device=DEV), 1, 1.0),
                                'smooth_l1_loss_backward'),
    'huber_loss': (lambda: F.huber_loss(torch.randn(3, device=DEV), torch.randn(3, device=DEV)), 'huber_loss'),
    'huber_loss_backward': (lambda: torch.ops.aten.huber_loss_backward(
        torch.ones((), device=DEV), torch.randn(3, device=DEV), torch.randn(3, device=DEV), 1, 1.0),
                            'huber_loss_backward'),
}
