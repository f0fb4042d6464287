"""Transformer layers on the XLA device against eager CPU: layer norm, GELU, softmax,
baddbmm / matmul / einsum, scaled_dot_product_attention, nn.MultiheadAttention
and their backward passes. Everything must run lowered (xla:: counters), never through
the CPU fallback (aten:: counters).
"""
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.core.xla_model as xm

from op_testing import (BF16, DEV, F32, FLOATS, assert_same, check, check_grad, counter, fallbacks, ids, lowered,
                        make, to_dev)
from device_marks import LOWERED_FOR_CPU

def tol_for(dtype, f32=None):
  if dtype == torch.bfloat16:
    return dict(rtol=2e-2, atol=2e-2)
  return f32 or dict(rtol=1e-5, atol=1e-5)


# ---- layer norm --------------------------------------------------------------

@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('affine', ['both', 'weight', 'none'])
@pytest.mark.parametrize('shape,norm', [((4, 16), (16,)), ((2, 3, 8), (8,)), ((2, 3, 4, 5), (4, 5)),
                                        ((6,), (6,))])
def test_layer_norm_forward_and_stats(dtype, affine, shape, norm):
  x = make(shape, dtype) * 3 + 1
  w = make(norm, dtype, seed=1) if affine != 'none' else None
  b = make(norm, dtype, seed=2) if affine == 'both' else None
  fn = lambda x, w, b: torch.native_layer_norm(x, norm, w, b, 1e-5)
  expected = fn(x, w, b)
  with lowered('native_layer_norm'):
    actual = fn(to_dev(x), to_dev(w), to_dev(b))
  for a, e in zip(actual, expected):
    assert_same(a, e, **tol_for(dtype))


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('affine', ['both', 'weight', 'bias', 'none'])
def test_layer_norm_backward(dtype, affine):
  norm = (3, 8)
  x = make((2, 5, 3, 8), dtype) * 2
  w = make(norm, dtype, seed=1) if affine in ('both', 'weight') else None
  b = make(norm, dtype, seed=2) if affine in ('both', 'bias') else None
  inputs = [x] + [t for t in (w, b) if t is not None]

  def fn(x, *params):
    it = iter(params)
    ww = next(it) if w is not None else None
    bb = next(it) if b is not None else None
    return F.layer_norm(x, norm, ww, bb, eps=1e-6)

  check_grad(fn, *inputs, ops=('native_layer_norm', 'native_layer_norm_backward'), **tol_for(dtype, F32))


def test_layer_norm_bf16_input_f32_params_stats_f32():
  x = make((4, 8), torch.bfloat16)
  w, b = make((8,), torch.float32, seed=1), make((8,), torch.float32, seed=2)
  expected = torch.native_layer_norm(x, (8,), w, b, 1e-5)
  with lowered('native_layer_norm'):
    actual = torch.native_layer_norm(to_dev(x), (8,), to_dev(w), to_dev(b), 1e-5)
  for a, e in zip(actual, expected):
    assert_same(a, e, **tol_for(torch.bfloat16))


def test_layer_norm_module_and_empty_batch():
  ln = nn.LayerNorm(16)
  with torch.no_grad():
    ln.weight.copy_(make((16,), torch.float32, seed=3))
    ln.bias.copy_(make((16,), torch.float32, seed=4))
  x = make((3, 7, 16), torch.float32)
  expected = ln(x)
  ln_x = ln.to(DEV)
  with lowered('native_layer_norm'):
    assert_same(ln_x(to_dev(x)), expected, **F32)
  empty = torch.zeros(0, 16)
  with lowered('native_layer_norm'):
    out = ln_x(to_dev(empty))
  assert out.shape == (0, 16)


def test_layer_norm_bad_input_raises():
  x = to_dev(make((4, 6), torch.float32))
  with pytest.raises(RuntimeError, match='native_layer_norm'):
    torch.native_layer_norm(x, (5,), None, None, 1e-5)
  with pytest.raises(RuntimeError, match='native_layer_norm'):
    torch.native_layer_norm(x, (6,), to_dev(torch.ones(5)), None, 1e-5)
  assert (x + 1).cpu().shape == (4, 6)  # the process lives on


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


def test_float64_layer_norm_gelu_softmax():
  x = make((4, 9), torch.float64) * 3
  w, b = make((9,), torch.float64, seed=1), make((9,), torch.float64, seed=2)
  f64 = dict(rtol=1e-10, atol=1e-10)
  check_grad(lambda x, w, b: F.layer_norm(x, (9,), w, b), x, w, b,
             ops=('native_layer_norm', 'native_layer_norm_backward'), **f64)
  check_grad(lambda x: F.gelu(x), x, ops=('gelu', 'gelu_backward'), **f64)
  check_grad(lambda x: F.gelu(x, approximate='tanh'), x, ops=('gelu', 'gelu_backward'), **f64)
  check_grad(lambda x: F.softmax(x, 0), x, ops=('_softmax', '_softmax_backward_data'), **f64)


@pytest.mark.parametrize('fn', [lambda x: F.softmax(x, -1), lambda x: F.layer_norm(x, (4,)), F.gelu],
                         ids=['softmax', 'layer_norm', 'gelu'])
def test_integer_inputs_raise_like_eager(fn):
  x = torch.arange(12).reshape(3, 4)
  with pytest.raises(RuntimeError):
    fn(x)
  with pytest.raises(RuntimeError):
    fn(to_dev(x))
  assert (to_dev(x) + 1).cpu().sum().item() == 78


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


# ---- scaled_dot_product_attention --------------------------------------------

def sdpa_inputs(dtype=torch.float32, b=2, h=3, l=5, s=6, e=8, ev=4):
  return (make((b, h, l, e), dtype, seed=1), make((b, h, s, e), dtype, seed=2), make((b, h, s, ev), dtype, seed=3))


SDPA_OPS = ('_safe_softmax', '_softmax_backward_data', 'bmm')
# Attention in nn.MultiheadAttention / TransformerEncoderLayer on the CPU device: PyTorch's
# flash-attention kernels inside the graph (test_host_attention.py). Other devices take
# PyTorch's math path (the products and softmax of SDPA_OPS).
FLASH_OPS = (('_scaled_dot_product_flash_attention_for_cpu', '_scaled_dot_product_flash_attention_for_cpu_backward')
             if LOWERED_FOR_CPU else SDPA_OPS)


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
def test_sdpa_plain(dtype):
  check_grad(F.scaled_dot_product_attention, *sdpa_inputs(dtype), **tol_for(dtype, dict(rtol=1e-5, atol=1e-5)))
  with lowered(*SDPA_OPS):
    q, k, v = (to_dev(t).requires_grad_() for t in sdpa_inputs(dtype))
    F.scaled_dot_product_attention(q, k, v).sum().backward()
    xm.mark_step()


@pytest.mark.parametrize('scale', [None, 0.3])
def test_sdpa_float_mask_and_scale(scale):
  q, k, v = sdpa_inputs()
  mask = make((5, 6), torch.float32, seed=4)
  check_grad(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.device), scale=scale),
             q, k, v)


def test_sdpa_bool_mask_with_fully_masked_row():
  q, k, v = sdpa_inputs()
  mask = make((2, 1, 5, 6), torch.bool, seed=5)
  mask[0, 0, 2] = False  # a row with nothing to attend to gives zeros
  check_grad(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.device)), q, k, v)


def test_sdpa_causal():
  q, k, v = sdpa_inputs(s=5)
  check_grad(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)


def test_sdpa_dropout_p0_matches_and_dropout_statistics():
  q, k, v = sdpa_inputs()
  check_grad(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.0), q, k, v)
  # With dropout, v = identity-like ones: the output is the kept attention mass, 1 in expectation.
  b, h, l, s = 4, 4, 64, 64
  q = torch.zeros(b, h, l, 8, device=DEV)
  k = torch.zeros(b, h, s, 8, device=DEV)
  v = torch.ones(b, h, s, 1, device=DEV)
  with lowered('bernoulli'):
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25).cpu()
  # Each output is (kept count / s) / 0.75; mean 1, std sqrt(0.25 / 0.75 / s).
  assert abs(out.mean().item() - 1) < 0.02
  assert abs(out.std().item() - math.sqrt(0.25 / 0.75 / s)) < 0.02


def test_sdpa_bad_input_raises():
  q, k, v = (to_dev(t) for t in sdpa_inputs())
  with pytest.raises(RuntimeError):
    F.scaled_dot_product_attention(q, k[:, :, :, :5], v)
  assert (q + 1).cpu().shape == q.shape


# ---- nn.MultiheadAttention and the encoder layer ------------------------------

def _copy_module(m):
  import copy
  return copy.deepcopy(m).to(DEV)


@pytest.mark.parametrize('train', [True, False])
def test_multihead_attention_paths_lowered(train):
  torch.manual_seed(0)
  mha = nn.MultiheadAttention(32, 4, batch_first=True, dropout=0.0)
  mha.train(train)
  x = make((2, 7, 32), torch.float32)
  mask = torch.triu(torch.full((7, 7), float('-inf')), 1)
  fn = lambda m, x: m(x, x, x, attn_mask=mask.to(x.device), need_weights=False)[0]
  expected = fn(mha, x)
  mx = _copy_module(mha)
  with lowered():
    actual = fn(mx, to_dev(x))
    xm.mark_step()
  assert_same(actual, expected, rtol=1e-4, atol=1e-5)


def test_multihead_attention_key_padding_mask_and_weights():
  torch.manual_seed(0)
  mha = nn.MultiheadAttention(32, 4, batch_first=True)
  x = make((2, 7, 32), torch.float32)
  pad = torch.zeros(2, 7, dtype=torch.bool)
  pad[1, 5:] = True
  fn = lambda m, x, pad: m(x, x, x, key_padding_mask=pad)
  expected = fn(mha, x, pad)
  mx = _copy_module(mha)
  with lowered('_softmax', 'baddbmm'):
    actual = fn(mx, to_dev(x), to_dev(pad))
    xm.mark_step()
  assert_same(actual[0], expected[0], rtol=1e-4, atol=1e-5)
  assert_same(actual[1], expected[1], rtol=1e-4, atol=1e-5)


def _nmha_inputs(dtype=torch.float32, B=2, T=5, D=16):
  return dict(q=make((B, T, D), dtype, seed=1), w=make((3 * D, D), dtype, seed=2) * 0.3,
              b=make((3 * D,), dtype, seed=3), pw=make((D, D), dtype, seed=4) * 0.3, pb=make((D,), dtype, seed=5))


def _nmha(i, k=None, v=None, mask=None, H=4, **kw):
  k = i['q'] if k is None else k
  v = i['q'] if v is None else v
  return torch._native_multi_head_attention(i['q'], k, v, i['q'].shape[-1], H, i['w'], i['b'], i['pw'], i['pb'],
                                            mask, **kw)


def _nmha_masks(B=2, T=5, H=4):
  m0 = torch.zeros(T, T, dtype=torch.bool)
  m0[:, 3] = True
  m0[1, :] = True  # a fully masked row: NaN, as on the CPU
  m1 = torch.zeros(B, T, dtype=torch.bool)
  m1[1, 2:] = True
  m2 = make((B, H, T, T), torch.bool, seed=6)
  mf = torch.zeros(T, T)
  mf[:, 2] = -1e9  # a float mask: nonzero means masked
  return [(None, None), (m0, 0), (m1, 1), (m2, 2), (mf, 0)]


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('mask_case', range(5), ids=['none', 'src', 'padding', 'full', 'float'])
@pytest.mark.parametrize('need_weights,average', [(True, True), (True, False), (False, True)])
def test_native_multi_head_attention(dtype, mask_case, need_weights, average):
  i = _nmha_inputs(dtype)
  mask, mask_type = _nmha_masks()[mask_case]
  kw = dict(need_weights=need_weights, average_attn_weights=average, mask_type=mask_type)
  expected = _nmha(i, mask=mask, **kw)
  idev = {n: to_dev(t) for n, t in i.items()}
  with lowered('_native_multi_head_attention'):
    actual = _nmha(idev, mask=to_dev(mask), **kw)
    xm.mark_step()
  assert_same(actual[0], expected[0], **tol_for(dtype, dict(rtol=1e-4, atol=1e-5)))
  if need_weights:
    assert_same(actual[1], expected[1], **tol_for(dtype, dict(rtol=1e-4, atol=1e-5)))
  else:
    assert actual[1] is None and expected[1] is None


def test_native_multi_head_attention_separate_key_value_and_bad_input():
  i = _nmha_inputs()
  k, v = make((2, 5, 16), torch.float32, seed=8), make((2, 5, 16), torch.float32, seed=9)
  expected = _nmha(i, k, v)
  idev = {n: to_dev(t) for n, t in i.items()}
  with lowered('_native_multi_head_attention'):
    actual = _nmha(idev, to_dev(k), to_dev(v))
  assert_same(actual[0], expected[0], rtol=1e-4, atol=1e-5)
  assert_same(actual[1], expected[1], rtol=1e-4, atol=1e-5)
  with pytest.raises(RuntimeError, match='_native_multi_head_attention'):
    _nmha(idev, mask=to_dev(torch.zeros(5, 5, dtype=torch.bool)))  # no mask_type
  with pytest.raises(RuntimeError, match='_native_multi_head_attention'):
    _nmha(idev, H=3)  # 16 is not divisible by 3
  with pytest.raises(RuntimeError, match='_native_multi_head_attention'):
    _nmha(idev, mask=to_dev(torch.zeros(2, 5, dtype=torch.bool)), mask_type=0)


def test_encoder_layer_eval_no_fallback():
  torch.manual_seed(0)
  layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, activation='gelu', batch_first=True).eval()
  x = make((2, 7, 32), torch.float32)
  with torch.no_grad():
    expected = layer(x)
    lx = _copy_module(layer)
    with lowered('native_layer_norm', 'gelu'):
      actual = lx(to_dev(x))
      xm.mark_step()
  assert_same(actual, expected, rtol=1e-4, atol=1e-4)


def test_encoder_layer_train_backward_no_fallback():
  torch.manual_seed(0)
  layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation='gelu', batch_first=True)
  x = make((2, 7, 32), torch.float32)
  out_c = layer(x)
  out_c.square().mean().backward()
  lx = _copy_module(layer)
  lx.zero_grad()
  with lowered('native_layer_norm', 'native_layer_norm_backward', 'gelu', 'gelu_backward', *FLASH_OPS):
    out_x = lx(to_dev(x))
    out_x.square().mean().backward()
    xm.mark_step()
  assert_same(out_x, out_c, rtol=1e-4, atol=1e-5)
  for (name, pc), px in zip(layer.named_parameters(), lx.parameters()):
    assert_same(px.grad, pc.grad, rtol=1e-3, atol=1e-5), name


class _EncoderNet(nn.Module):
  """The workload: an embedding, a 2-layer encoder (d_model 256, 4 heads, ff 1024, GELU) and a head."""

  def __init__(self, dropout):
    super().__init__()
    self.emb = nn.Embedding(100, 256)
    layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=dropout, activation='gelu', batch_first=True)
    self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    self.head = nn.Linear(256, 10)

  def forward(self, tokens):
    return self.head(self.enc(self.emb(tokens)).mean(1))


def _train_step(model, tokens, labels):
  opt = torch.optim.SGD(model.parameters(), lr=0.1)
  loss = F.cross_entropy(model(tokens), labels, label_smoothing=0.1)
  loss.backward()
  opt.step()
  return loss


def test_encoder_training_step_matches_eager():
  torch.manual_seed(0)
  model = _EncoderNet(dropout=0.0)
  tokens, labels = torch.randint(0, 100, (8, 16)), torch.randint(0, 10, (8,))
  model_x = _copy_module(model)
  loss = _train_step(model, tokens, labels)
  met_clear = lowered('native_layer_norm_backward', 'gelu_backward', *FLASH_OPS)
  with met_clear:
    loss_x = _train_step(model_x, to_dev(tokens), to_dev(labels))
    xm.mark_step()
  torch.testing.assert_close(loss_x.cpu(), loss.detach(), rtol=1e-5, atol=1e-5)
  for (name, p), px in zip(model.named_parameters(), model_x.parameters()):
    torch.testing.assert_close(px.detach().cpu(), p.detach(), rtol=1e-4, atol=1e-5, msg=lambda m: f'{name}: {m}')


def test_encoder_training_step_with_dropout_runs_lowered():
  torch.manual_seed(0)
  model_x = _EncoderNet(dropout=0.1).to(DEV)
  tokens, labels = torch.randint(0, 100, (8, 16)), torch.randint(0, 10, (8,))
  with lowered('bernoulli', 'native_layer_norm_backward'):
    loss = _train_step(model_x, to_dev(tokens), to_dev(labels))
    xm.mark_step()
  assert math.isfinite(loss.item()) and abs(loss.item() - math.log(10)) < 0.5


# ---- counter cases -----------------------------------------------------------

def _x(shape=(3, 4), seed=0):
  return make(shape, torch.float32, seed=seed).to(DEV)


def _grad_case(fn, shape=(3, 4)):
  def run():
    x = _x(shape).requires_grad_()
    fn(x).sum().backward()
    return x.grad
  return run


COUNTER_CASES = {
    'native_layer_norm': (lambda: F.layer_norm(_x(), (4,)), 'native_layer_norm'),
    'native_layer_norm_backward': (_grad_case(lambda x: F.layer_norm(x, (4,)) * _x(seed=1)),
                                   'native_layer_norm_backward'),
    'gelu': (lambda: F.gelu(_x()), 'gelu'),
    'gelu_backward': (_grad_case(F.gelu), 'gelu_backward'),
    '_softmax': (lambda: F.softmax(_x(), -1), '_softmax'),
    '_softmax_backward_data': (_grad_case(lambda x: F.softmax(x, -1) * _x(seed=1)), '_softmax_backward_data'),
    '_safe_softmax': (lambda: torch.ops.aten._safe_softmax(_x(), -1), '_safe_softmax'),
    '_native_multi_head_attention': (lambda: _nmha({n: to_dev(t) for n, t in _nmha_inputs().items()})[0],
                                     '_native_multi_head_attention'),
    'baddbmm': (lambda: torch.baddbmm(_x((2, 3, 3)), _x((2, 3, 4)), _x((2, 4, 3))), 'baddbmm'),
    'addmv': (lambda: torch.mv(_x(), _x((4,))), 'addmv'),
    'dot': (lambda: torch.dot(_x((4,)), _x((4,), seed=1)), 'dot'),
}
