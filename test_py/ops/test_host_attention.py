"""scaled_dot_product_attention on the CPU device runs PyTorch's CPU flash-attention
kernels inside the graph (cpp/aten/host_attention.cpp) where PyTorch would choose them
for CPU tensors, and the composite math path elsewhere. Either way the outputs and the
gradients of query, key and value match eager's."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import DEV, assert_same, counter, ids, lowered, make

FLASH = '_scaled_dot_product_flash_attention_for_cpu'


def run(q, k, v, grad, **kwargs):
  """Output and q/k/v gradients of SDPA for (q, k, v) on their device."""
  leaves = [t.detach().clone().requires_grad_(True) for t in (q, k, v)]
  out = F.scaled_dot_product_attention(*leaves, **kwargs)
  out.backward(grad)
  return [out] + [t.grad for t in leaves]


def compare(shape_q, shape_kv, dtype, flash, **kwargs):
  q, k, v = make(shape_q, dtype), make(shape_kv, dtype, seed=1), make(shape_kv, dtype, seed=2)
  grad = make(shape_q[:-1] + shape_kv[-1:], dtype, seed=3)
  dev_kwargs = {n: (t.to(DEV) if isinstance(t, torch.Tensor) else t) for n, t in kwargs.items()}
  expected = run(q, k, v, grad, **kwargs)
  with lowered():
    actual = run(q.to(DEV), k.to(DEV), v.to(DEV), grad.to(DEV), **dev_kwargs)
    assert (counter('xla::' + FLASH) > 0) == flash
    assert (counter('xla::' + FLASH + '_backward') > 0) == flash
  # Eager's flash kernel and ours are the same code; the math path sums in another order.
  tolerance = {} if flash or dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-5)
  assert_same(actual, expected, **tolerance)


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('causal', [False, True])
def test_flash_matches_eager(dtype, causal):
  compare((2, 3, 16, 8), (2, 3, 16, 8), dtype, flash=True, is_causal=causal)


def test_flash_with_float_mask_and_scale():
  mask = make((16, 24), torch.float32, seed=9)
  compare((2, 3, 16, 8), (2, 3, 24, 8), torch.float32, flash=True, attn_mask=mask, scale=0.3)


def test_bool_mask_takes_the_math_path():
  mask = make((16, 16), torch.bool, seed=9)
  mask[:, 0] = True  # every query sees at least one key
  compare((2, 3, 16, 8), (2, 3, 16, 8), torch.float32, flash=False, attn_mask=mask)


def test_unequal_head_sizes_take_the_math_path():
  # q/k head size 8, v head size 4: PyTorch's CPU flash kernel needs them equal.
  q, k, v = make((2, 3, 16, 8), torch.float32), make((2, 3, 16, 8), torch.float32, 1), make(
      (2, 3, 16, 4), torch.float32, 2)
  with lowered():
    out = F.scaled_dot_product_attention(q.to(DEV), k.to(DEV), v.to(DEV))
    assert counter('xla::' + FLASH) == 0
  assert_same(out, F.scaled_dot_product_attention(q, k, v), rtol=1e-5, atol=1e-5)


def test_dropout_takes_the_math_path():
  q = make((2, 3, 16, 8), torch.float32).to(DEV)
  with lowered(allow=()):
    out = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert counter('xla::' + FLASH) == 0
  assert out.shape == q.shape and torch.isfinite(out.cpu()).all()


def test_disabled_flash_backend_is_respected():
  q = make((2, 3, 16, 8), torch.float32).to(DEV)
  from torch.nn.attention import SDPBackend, sdpa_kernel
  with sdpa_kernel([SDPBackend.MATH]), lowered():
    F.scaled_dot_product_attention(q, q, q).cpu()
    assert counter('xla::' + FLASH) == 0


def test_multihead_attention_training_step_matches_eager():
  torch.manual_seed(0)
  cpu = torch.nn.MultiheadAttention(32, 4, batch_first=True)
  dev = torch.nn.MultiheadAttention(32, 4, batch_first=True)
  dev.load_state_dict(cpu.state_dict())
  dev = dev.to(DEV)
  x = make((2, 10, 32), torch.float32)
  results = []
  for module, inp in ((cpu, x), (dev, x.to(DEV))):
    with lowered():
      out = module(inp, inp, inp, need_weights=False)[0]
      out.square().mean().backward()
      results.append([out] + [p.grad for p in module.parameters()])
  assert counter('xla::' + FLASH + '_backward') > 0
  for a, e in zip(results[1], results[0]):
    assert_same(a, e, rtol=1e-5, atol=1e-5)
