"""Weight gradients of linear layers (grad.t() @ input over many rows) on the CPU device
run PyTorch's matrix product inside the graph, split by rows (cpp/aten/host_matmul.cpp);
they equal eager's to float32 rounding of the parts' sum."""

import torch
import torch.nn.functional as F

from op_testing import DEV, assert_same, counter, lowered, make


def test_weight_gradient_of_a_linear_layer_matches_eager():
  x, w, b = make((1024, 64), torch.float32), make((300, 64), torch.float32, seed=1), make((300,), torch.float32,
                                                                                              seed=2)
  g = make((1024, 300), torch.float32, seed=3)
  leaves = [t.clone().requires_grad_() for t in (x, w, b)]
  F.linear(*leaves).backward(g)
  with lowered('mm_tn'):
    dev_leaves = [t.to(DEV).requires_grad_() for t in (x, w, b)]
    F.linear(*dev_leaves).backward(g.to(DEV))
    grads = [t.grad.cpu() for t in dev_leaves]
  for actual, expected in zip(dev_leaves, leaves):
    assert_same(actual.grad, expected.grad, rtol=1e-5, atol=1e-4)
  assert all(torch.isfinite(t).all() for t in grads)


def test_three_dimensional_input_matches_eager():
  x, w = make((8, 128, 256), torch.float32), make((96, 256), torch.float32, seed=1)
  leaves = [t.clone().requires_grad_() for t in (x, w)]
  (F.linear(*leaves) ** 2).sum().backward()
  with lowered('mm_tn'):
    dev_leaves = [t.to(DEV).requires_grad_() for t in (x, w)]
    (F.linear(*dev_leaves) ** 2).sum().backward()
  for actual, expected in zip(dev_leaves, leaves):
    assert_same(actual.grad, expected.grad, rtol=1e-5, atol=1e-3)


def test_transposed_products_of_every_size_match_eager():
  for rows, m, n in ((2048, 256, 768), (1000, 33, 700), (100, 256, 256), (4096, 8, 8)):
    a, b = make((rows, m), torch.float32), make((rows, n), torch.float32, seed=1)
    with lowered():
      actual = a.to(DEV).t() @ b.to(DEV)
      used = counter('xla::mm_tn') > 0
    assert used == (rows >= 512 and m * n >= 16384), (rows, m, n)
    assert_same(actual, a.t() @ b, rtol=1e-5, atol=1e-3)


def test_bfloat16_keeps_xla_product():
  a, b = make((1024, 64), torch.bfloat16), make((1024, 512), torch.bfloat16, seed=1)
  with lowered('mm'):
    actual = a.to(DEV).t() @ b.to(DEV)
    assert counter('xla::mm_tn') == 0
  assert_same(actual, a.t() @ b, rtol=2e-2, atol=1.0)


def test_mismatched_rows_raise():
  import pytest
  with pytest.raises(RuntimeError, match='mat1 and mat2 shapes cannot be multiplied'):
    torch.ones(1024, 64, device=DEV).t() @ torch.ones(1000, 512, device=DEV)
