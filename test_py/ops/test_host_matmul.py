"""Weight gradients (g.t() @ x over many rows, float32) on the CPU device run PyTorch's
product inside the graph, split by rows over the compute threads
(cpp/aten/host_matmul.cpp); they equal eager's to the rounding of the parts' sum. Other
product forms stay with XLA."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import DEV, assert_same, counter, lowered, make


def test_linear_layer_forward_and_gradients_match_eager():
  x, w, b = make((1024, 64), torch.float32), make((300, 64), torch.float32, seed=1), make((300,), torch.float32,
                                                                                              seed=2)
  g = make((1024, 300), torch.float32, seed=3)
  leaves = [t.clone().requires_grad_() for t in (x, w, b)]
  out = F.linear(*leaves)
  out.backward(g)
  with lowered('weight_gradient'):
    dev_leaves = [t.to(DEV).requires_grad_() for t in (x, w, b)]
    dev_out = F.linear(*dev_leaves)
    dev_out.backward(g.to(DEV))
  assert_same(dev_out, out.detach(), rtol=1e-5, atol=1e-4)
  for actual, expected in zip(dev_leaves, leaves):
    assert_same(actual.grad, expected.grad, rtol=1e-5, atol=1e-4)


def test_three_dimensional_input_matches_eager():
  """The loss's gradient (2 * out, up to a few hundred) makes the weight gradient a sum of
  1024 large terms that mostly cancel: its rounding error scales with the sum of the
  terms' magnitudes, not with the result, so each element is held to a bound from
  |g|.t() @ |x| (float32 summed in another order by the parts)."""
  x, w = make((8, 128, 256), torch.float32), make((96, 256), torch.float32, seed=1)
  leaves = [t.clone().requires_grad_() for t in (x, w)]
  out = F.linear(*leaves)
  (out ** 2).sum().backward()
  with lowered('weight_gradient'):
    dev_leaves = [t.to(DEV).requires_grad_() for t in (x, w)]
    (F.linear(*dev_leaves) ** 2).sum().backward()
  g = (2 * out).detach().reshape(-1, 96).abs()
  magnitudes = {'x': (g @ w.abs()).reshape(x.shape), 'w': g.t() @ x.reshape(-1, 256).abs()}
  for name, actual, expected in zip(('x', 'w'), dev_leaves, leaves):
    assert (actual.grad.device.type, actual.grad.dtype, actual.grad.shape) == ('xla', torch.float32, expected.grad.shape)
    error = (actual.grad.cpu() - expected.grad).abs()
    bound = 1e-5 * magnitudes[name] + 1e-4
    assert (error <= bound).all(), (name, (error / bound).max().item())


# (n, k, m, a transposed, b transposed, runs on the host)
CASES = [
    (2048, 256, 768, False, False, False),  # XLA's product
    (2048, 256, 768, False, True, False),
    (256, 2048, 768, True, False, True),  # a weight gradient: 2048 contracted rows
    (256, 2048, 768, True, True, False),
    (33, 1000, 700, True, False, True),
    (100, 256, 256, False, False, False),  # too few rows
    (256, 100, 256, True, False, False),  # too few contracted rows
    (4096, 64, 3, False, False, False),  # too few outputs
]


@pytest.mark.parametrize('case', CASES, ids=lambda c: '{}x{}x{}{}{}'.format(*c[:3], 't' if c[3] else 'n',
                                                                          't' if c[4] else 'n'))
def test_products_of_every_form_match_eager(case):
  n, k, m, a_t, b_t, on_host = case
  a = make((k, n) if a_t else (n, k), torch.float32)
  b = make((m, k) if b_t else (k, m), torch.float32, seed=1)
  op = lambda x, y: (x.t() if a_t else x) @ (y.t() if b_t else y)
  with lowered():
    actual = op(a.to(DEV), b.to(DEV))
    assert (counter('xla::weight_gradient') > 0) == on_host
  assert_same(actual, op(a, b), rtol=1e-5, atol=1e-3)


def test_bfloat16_keeps_xla_product():
  a, b = make((1024, 64), torch.bfloat16), make((1024, 512), torch.bfloat16, seed=1)
  with lowered('mm'):
    actual = a.to(DEV).t() @ b.to(DEV)
    assert counter('xla::weight_gradient') == 0
  assert_same(actual, a.t() @ b, rtol=2e-2, atol=1.0)


def test_mismatched_shapes_raise():
  with pytest.raises(RuntimeError, match='mat1 and mat2 shapes cannot be multiplied'):
    torch.ones(1024, 64, device=DEV).t() @ torch.ones(1000, 512, device=DEV)
  assert (torch.ones(1024, 64, device=DEV) @ torch.ones(64, 512, device=DEV)).sum().item() == 1024 * 64 * 512
