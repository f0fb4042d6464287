"""The transformer layers on the XLA device against eager CPU: scaled_dot_product_attention,
nn.MultiheadAttention, _native_multi_head_attention, nn.TransformerEncoderLayer (eval,
training, training steps of a small encoder), and their layer norm, GELU and softmax in
float64 and on integer input; forward and backward passes. Everything must run lowered
(xla:: counters), never through the CPU fallback (aten:: counters)."""

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from testing.device_marks import LOWERED_FOR_CPU
from testing.op_testing import DEV, FLOATS, assert_same, check_grad, ids, lowered, make, to_dev, tol_for


# ---- layer norm, GELU and softmax --------------------------------------------

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


# ---- counter cases ------------------------------------------------------------


COUNTER_CASES = {
    '_native_multi_head_attention': (lambda: _nmha({n: to_dev(t) for n, t in _nmha_inputs().items()})[0],
                                     '_native_multi_head_attention'),
}
