"""Losses on the device against eager CPU, the loss and its gradients for every reduction:
mse_loss, binary_cross_entropy, soft_margin_loss, multi_margin_loss,
multilabel_margin_loss, smooth_l1_loss and huber_loss (float32, float64 and bfloat16,
broadcast targets, both sides of the quadratic zone); bad arguments raise. NLL and
cross entropy: test_loss_nll.py; CTC: test_loss_ctc.py."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import DEV, assert_same, check, check_grad, ids, lowered, make


F32_GRAD = dict(rtol=1e-5, atol=1e-5)
BF16_GRAD = dict(rtol=3e-2, atol=3e-2)


def _unit(shape, dtype=torch.float32, seed=0):
  g = torch.Generator().manual_seed(seed)
  return torch.rand(shape, generator=g).clamp(0.02, 0.98).to(dtype)


# ---- losses ------------------------------------------------------------------------------------

REDUCTIONS = ['none', 'mean', 'sum']


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_mse_loss(reduction, dtype):
  x, y = make((3, 4), dtype, seed=1), make((3, 4), dtype, seed=2)
  tol = BF16_GRAD if dtype == torch.bfloat16 else F32_GRAD
  check_grad(lambda a, b: F.mse_loss(a, b, reduction=reduction), x, y, ops=('mse_loss', 'mse_loss_backward'), **tol)


def test_mse_loss_broadcast_target():
  x, y = make((3, 4), torch.float32, seed=1), make((4,), torch.float32, seed=2)
  with pytest.warns(UserWarning):
    check_grad(lambda a, b: F.mse_loss(a, b), x, y, ops=('mse_loss', 'mse_loss_backward'), **F32_GRAD)


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('reduction', REDUCTIONS)
@pytest.mark.parametrize('weighted', [False, True])
def test_binary_cross_entropy(weighted, reduction, dtype):
  x, y = _unit((3, 5), dtype, seed=1), _unit((3, 5), dtype, seed=2)
  w = make((5,), dtype, 'pos', seed=3) if weighted else None
  tol = BF16_GRAD if dtype == torch.bfloat16 else F32_GRAD
  check_grad(lambda a, b: F.binary_cross_entropy(a, b, weight=w if w is None else w.to(a.device), reduction=reduction),
             x, y, ops=('binary_cross_entropy', 'binary_cross_entropy_backward'), **tol)


def test_binary_cross_entropy_edges():
  """0 and 1 probabilities: the log clamp keeps the loss finite (100 per element)."""
  x = torch.tensor([0.0, 1.0, 0.5, 1.0])
  y = torch.tensor([1.0, 0.0, 1.0, 1.0])
  check(lambda a, b: F.binary_cross_entropy(a, b, reduction='none'), x, y, ops=('binary_cross_entropy',))
  with pytest.raises(RuntimeError, match='size'):
    torch.ops.aten.binary_cross_entropy(torch.ones(3, device=DEV) / 2, torch.ones(4, device=DEV))


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_soft_margin_loss(reduction, dtype):
  x = make((3, 4), dtype, seed=1)
  y = torch.where(make((3, 4), torch.float32, seed=2) > 0, 1.0, -1.0).to(dtype)
  tol = BF16_GRAD if dtype == torch.bfloat16 else F32_GRAD
  # soft_margin_loss has no gradient for the target
  check_grad(lambda a: F.soft_margin_loss(a, y.to(a.device), reduction=reduction), x,
             ops=('soft_margin_loss', 'soft_margin_loss_backward'), **tol)


@pytest.mark.parametrize('reduction', REDUCTIONS)
@pytest.mark.parametrize('p,margin,weighted', [(1, 1.0, False), (2, 0.5, True), (1, 2.0, True)])
def test_multi_margin_loss(p, margin, weighted, reduction):
  x = make((4, 5), torch.float32, seed=1)
  target = torch.tensor([0, 4, 2, 2])
  w = make((5,), torch.float32, 'pos', seed=3) if weighted else None

  def fn(a):
    return F.multi_margin_loss(a, target.to(a.device), p=p, margin=margin,
                               weight=None if w is None else w.to(a.device), reduction=reduction)
  check_grad(fn, x, ops=('multi_margin_loss', 'multi_margin_loss_backward'), **F32_GRAD)


@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_multi_margin_loss_one_frame(reduction):
  x = make((5,), torch.float32, seed=1)
  for target in (torch.tensor(3), torch.tensor([3])):
    check_grad(lambda a: F.multi_margin_loss(a, target.to(a.device), reduction=reduction), x,
               ops=('multi_margin_loss', 'multi_margin_loss_backward'), **F32_GRAD)
  with pytest.raises(RuntimeError, match='inconsistent target size'):
    F.multi_margin_loss(torch.ones(2, 3, device=DEV), torch.tensor([0, 1, 2], device=DEV))


@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_multilabel_margin_loss(reduction):
  """(PyTorch's CPU kernel takes no bfloat16.)"""
  x = make((4, 5), torch.float32, seed=1)
  # targets end at the first -1; entries after it do not count; a repeated label counts twice
  target = torch.tensor([[3, 0, -1, 1, 2], [1, 1, 4, -1, -1], [-1, 2, 3, 4, 0], [0, 1, 2, 3, 4]])
  check_grad(lambda a: F.multilabel_margin_loss(a, target.to(a.device), reduction=reduction), x,
             ops=('multilabel_margin_loss_forward', 'multilabel_margin_loss_backward'), **F32_GRAD)


def test_multilabel_margin_loss_one_frame():
  x = make((5,), torch.float32, seed=1)
  target = torch.tensor([4, 1, -1, 0, 0])
  for reduction in REDUCTIONS:
    check_grad(lambda a: F.multilabel_margin_loss(a, target.to(a.device), reduction=reduction), x,
               ops=('multilabel_margin_loss_forward', 'multilabel_margin_loss_backward'), **F32_GRAD)


# ---- smooth_l1_loss / huber_loss ---------------------------------------------

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


# ---- counter cases ------------------------------------------------------------


COUNTER_CASES = {
    # losses
    'mse_loss': (lambda: F.mse_loss(torch.ones(3, device=DEV), torch.zeros(3, device=DEV)), 'mse_loss'),
    'mse_loss_backward': (lambda: torch.ops.aten.mse_loss_backward(
        torch.ones((), device=DEV), torch.ones(3, device=DEV), torch.zeros(3, device=DEV), 1), 'mse_loss_backward'),
    'binary_cross_entropy': (lambda: F.binary_cross_entropy(
        torch.full((3,), 0.3, device=DEV), torch.ones(3, device=DEV)), 'binary_cross_entropy'),
    'binary_cross_entropy_backward': (lambda: torch.ops.aten.binary_cross_entropy_backward(
        torch.ones((), device=DEV), torch.full((3,), 0.3, device=DEV), torch.ones(3, device=DEV), None, 1),
        'binary_cross_entropy_backward'),
    'soft_margin_loss': (lambda: F.soft_margin_loss(torch.ones(3, device=DEV), torch.ones(3, device=DEV)),
                         'soft_margin_loss'),
    'soft_margin_loss_backward': (lambda: torch.ops.aten.soft_margin_loss_backward(
        torch.ones((), device=DEV), torch.ones(3, device=DEV), torch.ones(3, device=DEV), 1),
        'soft_margin_loss_backward'),
    'multi_margin_loss': (lambda: F.multi_margin_loss(
        torch.ones(2, 3, device=DEV), torch.tensor([0, 2], device=DEV)), 'multi_margin_loss'),
    'multi_margin_loss_backward': (lambda: torch.ops.aten.multi_margin_loss_backward(
        torch.ones((), device=DEV), torch.ones(2, 3, device=DEV), torch.tensor([0, 2], device=DEV), 1, 1.0, None, 1),
        'multi_margin_loss_backward'),
    'multilabel_margin_loss_forward': (lambda: F.multilabel_margin_loss(
        torch.ones(2, 3, device=DEV), torch.tensor([[0, -1, 0], [2, 1, -1]], device=DEV)),
        'multilabel_margin_loss_forward'),
    'multilabel_margin_loss_backward': (lambda: torch.ops.aten.multilabel_margin_loss_backward(
        torch.ones((), device=DEV), torch.ones(2, 3, device=DEV), torch.tensor([[0, -1, 0], [2, 1, -1]], device=DEV),
        1, torch.ones(2, 3, device=DEV)), 'multilabel_margin_loss_backward'),
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
