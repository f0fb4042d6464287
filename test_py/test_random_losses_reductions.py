"""Random distributions (moments with a fixed seed, several-sigma tolerances), losses
(value and gradient against eager CPU) and cumulative / NaN-aware reductions (against
eager CPU) on the device."""

import math

import pytest
import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm

from op_testing import DEV, check, check_grad, ids, lowered, make

F32_GRAD = dict(rtol=1e-5, atol=1e-5)
BF16_GRAD = dict(rtol=3e-2, atol=3e-2)


def _probs(*shape):
  return make(shape, torch.float32, 'pos', seed=3).exp()


def _unit(shape, dtype=torch.float32, seed=0):
  g = torch.Generator().manual_seed(seed)
  return torch.rand(shape, generator=g).clamp(0.02, 0.98).to(dtype)


COUNTER_CASES = {
    # random distributions
    'normal.Tensor_float': (lambda: torch.normal(torch.zeros(3, device=DEV), 2.0), 'normal'),
    'normal.float_Tensor': (lambda: torch.normal(1.0, torch.ones(3, device=DEV)), 'normal'),
    'normal.Tensor_Tensor': (lambda: torch.normal(torch.zeros(3, device=DEV), torch.ones(3, device=DEV)), 'normal'),
    'cauchy': (lambda: torch.empty(4, device=DEV).cauchy_(), 'cauchy'),
    'exponential': (lambda: torch.empty(4, device=DEV).exponential_(), 'exponential'),
    'geometric': (lambda: torch.empty(4, device=DEV).geometric_(0.3), 'geometric'),
    'log_normal': (lambda: torch.empty(4, device=DEV).log_normal_(), 'log_normal'),
    'multinomial': (lambda: torch.multinomial(torch.ones(2, 5, device=DEV), 3), 'multinomial'),
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
    '_ctc_loss': (lambda: torch.ops.aten._ctc_loss(
        torch.zeros(4, 1, 3, device=DEV), torch.tensor([[1, 2]], device=DEV), [4], [2]), '_ctc_loss'),
    '_ctc_loss.Tensor': (lambda: torch.ops.aten._ctc_loss.Tensor(
        torch.zeros(4, 1, 3, device=DEV), torch.tensor([[1, 2]], device=DEV), torch.tensor([4]), torch.tensor([2])),
        '_ctc_loss'),
    '_ctc_loss_backward': (lambda: torch.ops.aten._ctc_loss_backward(
        torch.ones(1, device=DEV), torch.zeros(4, 1, 3, device=DEV), torch.tensor([[1, 2]], device=DEV), [4], [2],
        torch.ones(1, device=DEV), torch.zeros(1, 4, 5, device=DEV), 0), '_ctc_loss_backward'),
    '_ctc_loss_backward.Tensor': (lambda: torch.ops.aten._ctc_loss_backward.Tensor(
        torch.ones(1, device=DEV), torch.zeros(4, 1, 3, device=DEV), torch.tensor([[1, 2]], device=DEV),
        torch.tensor([4]), torch.tensor([2]), torch.ones(1, device=DEV), torch.zeros(1, 4, 5, device=DEV), 0),
        '_ctc_loss_backward'),
    # cumulative and NaN-aware reductions
    'cummax': (lambda: torch.cummax(torch.ones(3, device=DEV), 0), 'cummax'),
    'cummin': (lambda: torch.cummin(torch.ones(3, device=DEV), 0), 'cummin'),
    '_logcumsumexp': (lambda: torch.logcumsumexp(torch.ones(3, device=DEV), 0), '_logcumsumexp'),
    'nansum': (lambda: torch.nansum(torch.ones(3, device=DEV)), 'nansum'),
    'count_nonzero.dim_IntList': (lambda: torch.count_nonzero(torch.ones(3, device=DEV), dim=[0]), 'count_nonzero'),
    'aminmax': (lambda: torch.aminmax(torch.ones(3, device=DEV)), 'aminmax'),
    'nanmedian': (lambda: torch.nanmedian(torch.ones(3, device=DEV)), 'nanmedian'),
    'nanmedian.dim': (lambda: torch.nanmedian(torch.ones(3, device=DEV), 0), 'nanmedian'),
    'mode': (lambda: torch.mode(torch.ones(3, device=DEV)), 'mode'),
    'histc': (lambda: torch.histc(torch.ones(3, device=DEV), 4), 'histc'),
    'renorm': (lambda: torch.renorm(torch.ones(2, 3, device=DEV), 2, 0, 1.0), 'renorm'),
}

# ---- random distributions ----------------------------------------------------------------------

N = 20000


def _moments(t):
  t = t.cpu().double()
  return t.mean().item(), t.std().item()


def _near(value, expected, sigma, k=5.0):
  assert abs(value - expected) <= k * sigma / math.sqrt(N), (value, expected, sigma)


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
def test_exponential_moments(dtype):
  xm.set_rng_state(11)
  with lowered('exponential'):
    t = torch.empty(N, device=DEV, dtype=dtype).exponential_(2.0)
    mean, std = _moments(t)
  assert t.dtype == dtype and t.min().item() >= 0
  _near(mean, 0.5, 0.5)
  assert abs(std - 0.5) < 0.05


def test_cauchy_quantiles():
  """A Cauchy sample has no moments: its quartiles are median -+ sigma."""
  xm.set_rng_state(12)
  with lowered('cauchy'):
    t = torch.empty(N, device=DEV).cauchy_(1.0, 2.0).cpu()
  q = torch.quantile(t, torch.tensor([0.25, 0.5, 0.75])).tolist()
  for got, want in zip(q, [-1.0, 1.0, 3.0]):
    assert abs(got - want) < 0.15, q


@pytest.mark.parametrize('dtype', [torch.float32, torch.int64], ids=ids)
def test_geometric_moments(dtype):
  xm.set_rng_state(13)
  p = 0.3
  with lowered('geometric'):
    t = torch.empty(N, device=DEV, dtype=dtype).geometric_(p)
    mean, std = _moments(t)
  assert t.min().item() >= 1 and t.dtype == dtype
  assert torch.equal(t.cpu(), t.cpu().round())
  _near(mean, 1 / p, math.sqrt(1 - p) / p)


def test_log_normal_moments():
  xm.set_rng_state(14)
  with lowered('log_normal'):
    t = torch.empty(N, device=DEV).log_normal_(0.5, 0.25)
  mean, std = _moments(t.cpu().log())
  _near(mean, 0.5, 0.25)
  assert abs(std - 0.25) < 0.01


def test_normal_tensor_overloads():
  xm.set_rng_state(15)
  mean = torch.tensor([-3.0, 0.0, 5.0]).repeat(N // 3, 1)
  std = torch.tensor([0.5, 1.0, 2.0]).repeat(N // 3, 1)
  with lowered('normal'):
    a = torch.normal(mean.to(DEV), std.to(DEV)).cpu()
    b = torch.normal(mean.to(DEV), 2.0).cpu()
    c = torch.normal(1.5, std.to(DEV)).cpu()
  n = mean.shape[0]
  for got, m, s in ((a, mean[0], std[0]), (b, mean[0], torch.full((3,), 2.0)), (c, torch.full((3,), 1.5), std[0])):
    assert got.shape == mean.shape
    for j in range(3):
      assert abs(got[:, j].mean().item() - m[j].item()) < 5 * s[j].item() / math.sqrt(n)
      assert abs(got[:, j].std().item() - s[j].item()) < 0.05 * s[j].item()


def test_normal_broadcasts_mean_and_std():
  out = torch.normal(torch.zeros(4, 1, device=DEV), torch.ones(3, device=DEV))
  assert out.shape == (4, 3)


def test_random_repeats_with_seed():
  def draw():
    xm.set_rng_state(77)
    return [torch.empty(5, device=DEV).exponential_().cpu(), torch.multinomial(_probs(6).to(DEV), 3).cpu()]
  first, second = draw(), draw()
  for a, b in zip(first, second):
    assert torch.equal(a, b)


def test_multinomial_with_replacement_frequencies():
  xm.set_rng_state(16)
  p = torch.tensor([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 2.0, 0.0]])
  with lowered('multinomial'):
    s = torch.multinomial(p.to(DEV), N, replacement=True).cpu()
  assert s.shape == (2, N) and s.dtype == torch.int64
  for row in range(2):
    freq = torch.bincount(s[row], minlength=4).double() / N
    want = p[row] / p[row].sum()
    assert freq[want == 0].sum() == 0
    assert torch.all((freq - want).abs() < 5 * (want * (1 - want) / N).sqrt() + 1e-9), (freq, want)


def test_multinomial_without_replacement():
  xm.set_rng_state(17)
  p = torch.tensor([0.5, 0.0, 0.25, 0.25, 1.0])
  rows = 3000
  with lowered('multinomial'):
    s = torch.multinomial(p.repeat(rows, 1).to(DEV), 4).cpu()
  assert s.shape == (rows, 4)
  # distinct categories, the zero-weight one never drawn
  assert torch.all(s.sort(dim=1).values == torch.tensor([0, 2, 3, 4]))
  # the first draw follows the normalized weights
  freq = torch.bincount(s[:, 0], minlength=5).double() / rows
  want = p / p.sum()
  assert torch.all((freq - want).abs() < 5 * (want * (1 - want) / rows).sqrt() + 1e-9), freq
  one = torch.multinomial(p.to(DEV), 2)
  assert one.shape == (2,)


def test_multinomial_bad_arguments():
  with pytest.raises(RuntimeError, match='without replacement'):
    torch.multinomial(torch.ones(3, device=DEV), 4)
  with pytest.raises(RuntimeError, match='1 or 2 dim'):
    torch.multinomial(torch.ones(2, 2, 2, device=DEV), 1)


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


def _ctc_inputs(seed=0):
  g = torch.Generator().manual_seed(seed)
  log_probs = torch.randn(8, 4, 5, generator=g).log_softmax(-1)
  # repeated labels (no skip between them), an empty target, a target as long as allowed
  targets = torch.tensor([[1, 1, 2], [3, 0, 0], [0, 0, 0], [4, 2, 4]])
  return log_probs, targets, [8, 6, 5, 7], [3, 1, 0, 3]


@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_ctc_loss_int_lists(reduction):
  lp, tg, il, tl = _ctc_inputs()
  check_grad(lambda a: F.ctc_loss(a, tg.to(a.device), il, tl, blank=0, reduction=reduction), lp,
             ops=('_ctc_loss', '_ctc_loss_backward'), **F32_GRAD)


def test_ctc_loss_cpu_length_tensors_and_concatenated_targets():
  """Lengths as CPU tensors, as CUDA users pass them. (With reduction='mean', PyTorch's
  ctc_loss divides the device losses by the CPU target_lengths tensor itself, which the
  device's div rejects: a non-scalar CPU operand.)"""
  lp, tg, il, tl = _ctc_inputs(1)
  flat = torch.cat([tg[i, :n] for i, n in enumerate(tl)])
  for targets in (tg, flat):
    check(lambda a, t: F.ctc_loss(a, t, torch.tensor(il), torch.tensor(tl), reduction='none'), lp, targets,
          ops=('_ctc_loss',))
    check(lambda a, t: F.ctc_loss(a, t, il, tl, reduction='mean'), lp, targets, ops=('_ctc_loss',))
    check_grad(lambda a: F.ctc_loss(a, targets.to(a.device), torch.tensor(il), torch.tensor(tl), reduction='sum'),
               lp, ops=('_ctc_loss', '_ctc_loss_backward'), **F32_GRAD)


def test_ctc_loss_log_alpha_and_impossible_alignments():
  lp, tg, il, tl = _ctc_inputs(2)
  # another blank index (no target uses it); a target too long for its input (3 labels, 2
  # equal: 4 frames needed)
  tg[tg == 4] = 1
  tg[1, :3] = torch.tensor([2, 2, 1])
  il[1], tl[1] = 3, 3
  nll, alpha = torch.ops.aten._ctc_loss(lp, tg, il, tl, 4)
  with lowered('_ctc_loss'):
    nll_x, alpha_x = torch.ops.aten._ctc_loss(lp.to(DEV), tg.to(DEV), il, tl, 4)
  torch.testing.assert_close(nll_x.cpu(), nll)
  assert torch.isinf(nll[1]) and torch.isinf(nll_x[1].cpu())
  # PyTorch leaves log_alpha uninitialized past each input length and extended target
  for b in range(4):
    torch.testing.assert_close(alpha_x[b, :il[b], :2 * tl[b] + 1].cpu(), alpha[b, :il[b], :2 * tl[b] + 1])
  check_grad(lambda a: F.ctc_loss(a, tg.to(a.device), il, tl, blank=4, reduction='sum', zero_infinity=True), lp,
             ops=('_ctc_loss', '_ctc_loss_backward'), **F32_GRAD)
  # without zero_infinity the impossible sample's gradient is not finite, on both sides
  lp_x = lp.to(DEV).requires_grad_()
  F.ctc_loss(lp_x, tg.to(DEV), il, tl, blank=4, reduction='none')[1].backward()
  lp_c = lp.clone().requires_grad_()
  F.ctc_loss(lp_c, tg, il, tl, blank=4, reduction='none')[1].backward()
  assert torch.equal(torch.isfinite(lp_x.grad.cpu()), torch.isfinite(lp_c.grad))


def test_ctc_loss_bad_arguments():
  lp, tg, il, tl = _ctc_inputs()
  with pytest.raises(RuntimeError, match='input_lengths'):
    torch.ops.aten._ctc_loss(lp.to(DEV), tg.to(DEV), [9, 1, 1, 1], tl)
  with pytest.raises(RuntimeError, match='blank'):
    torch.ops.aten._ctc_loss(lp.to(DEV), tg.to(DEV), il, tl, 5)


# ---- cumulative and NaN-aware reductions ---------------------------------------------------------

def _with_nans_and_ties(shape, dtype, seed=0):
  x = make(shape, dtype, seed=seed)
  if dtype.is_floating_point:
    x = (x * 2).round() / 2  # ties
    flat = x.view(-1)
    flat[3] = float('nan')
    flat[-2] = float('nan')
  return x


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.bool], ids=ids)
@pytest.mark.parametrize('fn', [torch.cummax, torch.cummin], ids=['cummax', 'cummin'])
def test_cummax_cummin(fn, dtype):
  x = _with_nans_and_ties((4, 9), dtype)
  for dim in (0, 1, -1):
    check(lambda a: fn(a, dim), x, ops=(fn.__name__,))
  check(lambda a: fn(a, 0), torch.tensor(2.0).to(dtype), ops=(fn.__name__,))


@pytest.mark.parametrize('fn', [torch.cummax, torch.cummin], ids=['cummax', 'cummin'])
def test_cummax_cummin_gradient(fn):
  x = make((3, 7), torch.float32, seed=2)
  check_grad(lambda a: fn(a, 1).values, x, ops=(fn.__name__,))


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
def test_logcumsumexp(dtype):
  x = make((5, 12), dtype, seed=3) * 40
  x[0, :3] = float('-inf')
  x[1, 4] = float('inf')
  x[2, 2] = float('nan')
  x[3] = torch.tensor([-300.0, 0.0] * 6).to(dtype)  # far apart: no underflow to -inf
  for dim in (0, 1):
    check(lambda a: torch.logcumsumexp(a, dim), x, ops=('_logcumsumexp',))
  check_grad(lambda a: torch.logcumsumexp(a, 1), make((3, 6), torch.float32, seed=4), ops=('_logcumsumexp',),
             **F32_GRAD)


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32], ids=ids)
def test_nansum_nanmean(dtype):
  x = _with_nans_and_ties((4, 6), dtype, seed=1)
  check(lambda a: torch.nansum(a), x, ops=('nansum',))
  check(lambda a: torch.nansum(a, dim=1, keepdim=True), x, ops=('nansum',))
  check(lambda a: torch.nansum(a, dim=(0, 1), dtype=torch.float64), x, ops=('nansum',))
  if dtype.is_floating_point:
    check(lambda a: torch.nanmean(a, dim=0), x, ops=('nansum',))
    check_grad(lambda a: torch.nansum(a, 1), x.float(), ops=('nansum',))


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=ids)
def test_count_nonzero_aminmax(dtype):
  x = _with_nans_and_ties((3, 5), dtype, seed=2)
  check(lambda a: torch.count_nonzero(a), x, ops=('count_nonzero',))
  check(lambda a: torch.count_nonzero(a, dim=0), x, ops=('count_nonzero',))
  check(lambda a: torch.aminmax(a), x, ops=('aminmax',))
  check(lambda a: torch.aminmax(a, dim=1, keepdim=True), x, ops=('aminmax',))
  check(lambda a: torch.aminmax(a, dim=-2), x, ops=('aminmax',))
  with pytest.raises(RuntimeError, match='aminmax'):
    torch.aminmax(torch.ones(0, 3, device=DEV).to(dtype))


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32], ids=ids)
def test_nanmedian(dtype):
  x = _with_nans_and_ties((5, 6), dtype, seed=3)
  for dim in (0, 1):
    check(lambda a: torch.nanmedian(a, dim), x, ops=('nanmedian',))
  check(lambda a: torch.nanmedian(a, 1, keepdim=True).values, x, ops=('nanmedian',))
  check(lambda a: torch.nanmedian(a), x, ops=('nanmedian',))
  check(lambda a: torch.nanmedian(a), torch.tensor([]).to(dtype) if dtype.is_floating_point else x,
        ops=('nanmedian',))


def test_nanmedian_all_nan():
  """A slice of NaNs only: the median is NaN at one of its indices (which one PyTorch's CPU
  kernel returns depends on std::nth_element)."""
  x = torch.full((2, 6), float('nan'), device=DEV)
  with lowered('nanmedian'):
    values, indices = torch.nanmedian(x, 1)
    assert torch.isnan(values.cpu()).all()
    assert ((indices.cpu() >= 0) & (indices.cpu() < 6)).all()
    assert torch.isnan(torch.nanmedian(x).cpu())


def test_nanmedian_gradient():
  x = make((4, 5), torch.float32, seed=4)
  x[1, 2] = float('nan')
  check_grad(lambda a: torch.nanmedian(a, 1).values, x, ops=('nanmedian',))


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.bool], ids=ids)
def test_mode(dtype):
  g = torch.Generator().manual_seed(5)
  x = torch.randint(0, 4, (5, 9), generator=g).to(dtype)
  for dim in (0, 1):
    check(lambda a: torch.mode(a, dim), x, ops=('mode',))
  check(lambda a: torch.mode(a, 1, keepdim=True), x, ops=('mode',))
  check(lambda a: torch.mode(a, 0), torch.tensor(3).to(dtype), ops=('mode',))
  check(lambda a: torch.mode(a, 0), torch.tensor([2]).to(dtype), ops=('mode',))


def test_mode_long_slices():
  """Past 16 elements PyTorch's CPU kernel (std::sort, unstable) returns the index of some
  occurrence of the mode; here it is the last one. The values agree."""
  g = torch.Generator().manual_seed(1)
  x = torch.randint(0, 4, (6, 40), generator=g).float()
  expected = torch.mode(x, 1)
  with lowered('mode'):
    values, indices = torch.mode(x.to(DEV), 1)
    values, indices = values.cpu(), indices.cpu()
  assert torch.equal(values, expected.values)
  assert torch.equal(x.gather(1, indices[:, None])[:, 0], values)
  assert torch.equal(indices, torch.stack([(row == v).nonzero().max() for row, v in zip(x, values)]))


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
def test_histc(dtype):
  x = make((40,), dtype, seed=6) * 3
  x[0] = float('nan')
  check(lambda a: torch.histc(a, bins=7, min=-2, max=2), x, ops=('histc',))
  check(lambda a: torch.histc(a[1:], bins=5), x, ops=('histc',))  # the data's range
  check(lambda a: torch.histc(a, bins=3, min=1, max=1), torch.ones(4, dtype=dtype), ops=('histc',))
  with pytest.raises(RuntimeError, match='bins must be > 0'):
    torch.histc(x.to(DEV), bins=0)
  with pytest.raises(RuntimeError, match='max must be larger than min'):
    torch.histc(x.to(DEV), bins=3, min=2, max=1)


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('p', [1, 2, 3.5, float('inf')])
def test_renorm(p, dtype):
  x = make((3, 4, 2), dtype, seed=7) * 2
  tol = BF16_GRAD if dtype == torch.bfloat16 else F32_GRAD
  for dim in (0, 1, -1):
    check(lambda a: torch.renorm(a, p, dim, 1.5), x, ops=('renorm',), **tol)
  if dtype == torch.float32:
    check_grad(lambda a: torch.renorm(a, p, 0, 1.5), x, ops=('renorm',), **tol)
  with pytest.raises(RuntimeError, match='at least 2 dimensions'):
    torch.renorm(torch.ones(3, device=DEV), 2, 0, 1.0)
