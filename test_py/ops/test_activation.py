"""Activations on the XLA device against eager CPU: GELU (exact and tanh), PReLU (one
weight or one per channel, input and weight gradients), RReLU (slopes drawn in
training, leaky ReLU in eval), and the threshold, sigmoid and tanh backward ops; values,
dtypes, gradients, bad input, and the counters. The activations computed element-wise
like the math functions (silu, elu, hardtanh, softplus, glu, ...): test_pointwise_ops.py."""

import pytest
import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from testing.op_testing import DEV, FLOATS, assert_same, check, check_grad, ids, lowered, make, to_dev, tol_for
from testing.counter_cases import grad_case as _grad_case, positive as _pos, floats as _x


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
def test_threshold_backward(dtype):
  g = make((3, 4), dtype, seed=1)
  x = make((3, 4), dtype, seed=2)
  x[0, 0] = 0
  x[1, 1] = 0.5
  for thr in [0, 0.5, -1]:
    check(lambda a, b: torch.ops.aten.threshold_backward(a, b, thr), g, x, ops=['threshold_backward'])


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
def test_sigmoid_tanh_backward(dtype):
  g = make((3, 4), dtype, seed=1)
  y = make((3, 4), dtype, seed=2).sigmoid()
  check(torch.ops.aten.sigmoid_backward, g, y, ops=['sigmoid_backward'])
  y = make((3, 4), dtype, seed=2).tanh()
  check(torch.ops.aten.tanh_backward, g, y, ops=['tanh_backward'])


# ---- gelu --------------------------------------------------------------------

@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('approximate', ['none', 'tanh'])
def test_gelu_forward_backward(dtype, approximate):
  x = make((4, 33), dtype) * 3
  check_grad(lambda x: F.gelu(x, approximate=approximate), x, ops=('gelu', 'gelu_backward'), **tol_for(dtype))


def test_gelu_edge_cases():
  check(lambda x: F.gelu(x), torch.tensor(0.7), ops=('gelu',))
  check(lambda x: F.gelu(x), torch.zeros(0, 3), ops=('gelu',))
  check(lambda x: F.gelu(x, approximate='tanh'), torch.tensor([-1e4, -10., 0., 10., 1e4]), ops=('gelu',))


def test_gelu_bad_input_raises():
  with pytest.raises(RuntimeError, match='gelu'):
    F.gelu(to_dev(torch.ones(3)), approximate='fast')
  with pytest.raises(RuntimeError, match='gelu'):
    torch.ops.aten.gelu(to_dev(torch.ones(3, dtype=torch.int64)))
  with pytest.raises(RuntimeError, match='gelu_backward'):
    torch.ops.aten.gelu_backward(to_dev(torch.ones(3)), to_dev(torch.ones(4)))


# ---- prelu -------------------------------------------------------------------

PRELU_TOL = {
    torch.float32: dict(rtol=1e-6, atol=1e-6),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2),
}


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('shape,channels', [((3, 4, 5, 5), 4), ((3, 4, 5), 1), ((6, 4), 4), ((7,), 1)])
def test_prelu_forward_backward(shape, channels, dtype):
  x = make(shape, dtype, seed=1)
  w = (make((channels,), dtype, seed=2) * 0.5)
  g = make(shape, dtype, seed=3)
  results = {}
  for device in ('cpu', DEV):
    xs = x.to(device).detach().requires_grad_(True)
    ws = w.to(device).detach().requires_grad_(True)
    if device == 'cpu':
      out = F.prelu(xs, ws)
      out.backward(g)
    else:
      with lowered('_prelu_kernel', '_prelu_kernel_backward'):
        out = F.prelu(xs, ws)
        out.backward(g.to(device))
        xm.mark_step()
    results[str(device)] = (out, xs.grad, ws.grad)
  for a, e in zip(results[str(DEV)], results['cpu']):
    # the weight gradient sums many products: bf16 rounds it coarser
    t = dict(PRELU_TOL[dtype])
    if dtype == torch.bfloat16 and e.shape == w.shape:
      t = dict(rtol=5e-2, atol=5e-2)
    assert_same(a, e, **t)


def test_prelu_integer_input_raises():
  x = torch.ones(3, dtype=torch.int64, device=DEV)
  with pytest.raises(RuntimeError, match='prelu: expected a floating point input and weight'):
    torch.ops.aten._prelu_kernel(x, x)


# ---- rrelu -------------------------------------------------------------------

@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
def test_rrelu_training_draws_slopes(dtype):
  xm.set_rng_state(18)
  x = make((200, 50), dtype, seed=4)
  with lowered('rrelu_with_noise'):
    y = F.rrelu(x.to(DEV), 0.1, 0.3, training=True).cpu()
  assert y.dtype == dtype
  pos = x > 0
  assert torch.equal(y[pos], x[pos])
  slope = (y[~pos].float() / x[~pos].float())
  tol = 1e-2 if dtype == torch.bfloat16 else 1e-6
  assert slope.min() >= 0.1 - tol and slope.max() <= 0.3 + tol
  assert abs(slope.mean().item() - 0.2) < 0.01


def test_rrelu_eval_is_leaky_relu():
  x = make((4, 6), torch.float32, seed=5)
  check(lambda a: F.rrelu(a, 0.1, 0.3, training=False), x, ops=('rrelu_with_noise',))


def test_rrelu_gradient():
  x = make((4, 6), torch.float32, seed=6)
  check_grad(lambda a: F.rrelu(a, 0.1, 0.3, training=False), x, ops=('rrelu_with_noise',))
  # in training the gradient is the drawn noise: y / x
  xd = x.to(DEV).requires_grad_()
  y = F.rrelu(xd, 0.1, 0.3, training=True)
  y.sum().backward()
  torch.testing.assert_close(xd.grad.cpu(), (y / xd).detach().cpu(), rtol=1e-5, atol=1e-6)


# ---- counter cases ------------------------------------------------------------

COUNTER_CASES = {
    'threshold_backward': (lambda: torch.ops.aten.threshold_backward(_pos(), _pos(), 0.5), 'threshold_backward'),
    'sigmoid_backward': (lambda: torch.ops.aten.sigmoid_backward(_pos(), _pos()), 'sigmoid_backward'),
    'tanh_backward': (lambda: torch.ops.aten.tanh_backward(_pos(), _pos()), 'tanh_backward'),
    'gelu': (lambda: F.gelu(_x()), 'gelu'),
    'gelu_backward': (_grad_case(F.gelu), 'gelu_backward'),
    '_prelu_kernel': (lambda: F.prelu(torch.randn(2, 3, device=DEV), torch.rand(3, device=DEV)), '_prelu_kernel'),
    '_prelu_kernel_backward': (lambda: torch.ops.aten._prelu_kernel_backward(
        torch.randn(2, 3, device=DEV), torch.randn(2, 3, device=DEV), torch.rand(3, device=DEV)),
                               '_prelu_kernel_backward'),
}
