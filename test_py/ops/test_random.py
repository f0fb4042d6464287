"""Random ops on the XLA device: rand / uniform, randn / normal (and its tensor overloads),
exponential, cauchy, geometric, log_normal, multinomial, bernoulli (dropout's mask),
dropout and native_dropout with their backward, random_ (torch.randint). Values are
checked by range, dtype and statistics (moments with a fixed seed, several-sigma
tolerances); xm.set_rng_state() must repeat results exactly."""

import math

import pytest
import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from testing.device_marks import needs_devices
from testing.op_testing import DEV, assert_same, ids, lowered, make, to_dev
from testing.counter_cases import positive as _pos, floats as _x


# ------------------------------------------------------------------ random


def test_rand_statistics():
  xm.set_rng_state(123)
  with lowered('uniform', 'empty'):
    x = torch.rand(20000, device=DEV)
  c = x.cpu()
  assert c.dtype == torch.float32 and c.shape == (20000,)
  assert c.min() >= 0 and c.max() < 1
  assert abs(c.mean().item() - 0.5) < 0.02
  assert abs(c.std().item() - (1 / 12) ** 0.5) < 0.02
  # Not all equal, and spread over the whole range.
  assert c.min() < 0.01 and c.max() > 0.99


def test_uniform_range():
  xm.set_rng_state(7)
  x = torch.empty(20000, device=DEV)
  with lowered('uniform'):
    x.uniform_(-3, 5)
  c = x.cpu()
  assert c.min() >= -3 and c.max() < 5
  assert abs(c.mean().item() - 1.0) < 0.15
  assert abs(c.std().item() - 8 / 12**0.5) < 0.15
  b = torch.empty(1000, dtype=torch.bfloat16, device=DEV).uniform_(2, 4).cpu()
  assert b.dtype == torch.bfloat16 and b.min() >= 2 and b.max() <= 4
  d = torch.empty(1000, dtype=torch.float64, device=DEV).uniform_().cpu()
  assert d.dtype == torch.float64 and d.min() >= 0 and d.max() < 1
  assert len(set(d.tolist())) > 990


def test_uniform_errors():
  with pytest.raises(RuntimeError):
    torch.empty(3, device=DEV).uniform_(2, 1)


def test_randn_statistics():
  xm.set_rng_state(321)
  with lowered('normal', 'empty'):
    x = torch.randn(200, 100, device=DEV)
  c = x.cpu()
  assert c.shape == (200, 100) and c.dtype == torch.float32
  assert torch.isfinite(c).all()
  assert abs(c.mean().item()) < 0.03
  assert abs(c.std().item() - 1) < 0.03
  # About 68% within one standard deviation.
  assert abs((c.abs() < 1).float().mean().item() - 0.6827) < 0.02


def test_normal_inplace_statistics():
  xm.set_rng_state(5)
  x = torch.empty(20000, device=DEV)
  with lowered('normal'):
    x.normal_(3.0, 0.5)
  c = x.cpu()
  assert abs(c.mean().item() - 3) < 0.02
  assert abs(c.std().item() - 0.5) < 0.02
  b = torch.empty(5000, dtype=torch.bfloat16, device=DEV).normal_(-1, 2).cpu().float()
  assert abs(b.mean().item() + 1) < 0.15 and abs(b.std().item() - 2) < 0.15
  z = torch.empty(10, device=DEV).normal_(4.0, 0.0).cpu()
  assert torch.equal(z, torch.full((10,), 4.0))
  with pytest.raises(RuntimeError):
    torch.empty(3, device=DEV).normal_(0, -1)


def test_random_int_tensor_raises():
  with pytest.raises(RuntimeError):
    torch.empty(3, dtype=torch.int32, device=DEV).uniform_()


def test_rng_repeatability():
  xm.set_rng_state(42)
  a = torch.rand(100, device=DEV)
  b = torch.randn(100, device=DEV)
  a2 = torch.rand(100, device=DEV)
  ca, cb, ca2 = a.cpu(), b.cpu(), a2.cpu()
  assert not torch.equal(ca, ca2)  # the state advances
  xm.set_rng_state(42)
  assert torch.equal(torch.rand(100, device=DEV).cpu(), ca)
  assert torch.equal(torch.randn(100, device=DEV).cpu(), cb)
  assert torch.equal(torch.rand(100, device=DEV).cpu(), ca2)
  xm.set_rng_state(43)
  assert not torch.equal(torch.rand(100, device=DEV).cpu(), ca)


def test_rng_repeatability_across_mark_step():
  xm.set_rng_state(9)
  a = torch.rand(50, device=DEV)
  xm.mark_step()
  b = torch.rand(50, device=DEV)
  xm.mark_step()
  ca, cb = a.cpu(), b.cpu()
  assert not torch.equal(ca, cb)
  xm.set_rng_state(9)
  a = torch.rand(50, device=DEV)
  b = torch.rand(50, device=DEV)
  assert torch.equal(a.cpu(), ca) and torch.equal(b.cpu(), cb)


@needs_devices(2)
def test_rng_state_per_device():
  xm.set_rng_state(11, DEV)
  a = torch.rand(20, device=DEV).cpu()
  xm.set_rng_state(11, 'xla:1')
  b = torch.rand(20, device='xla:1').cpu()
  assert torch.equal(a, b)
  xm.set_rng_state(1234)
  assert isinstance(xm.get_rng_state(), int)


def _probs(*shape):
  return make(shape, torch.float32, 'pos', seed=3).exp()


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


def _stats(t):
  t = t.cpu().double()
  return t.mean().item(), t.var().item()


# ---- bernoulli ---------------------------------------------------------------

@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.float64, torch.int64, torch.bool],
                         ids=str)
@pytest.mark.parametrize('p', [0.0, 0.3, 1.0])
def test_bernoulli_p_values_and_statistics(dtype, p):
  x = torch.empty(200, 100, dtype=dtype, device=DEV)
  with lowered('bernoulli'):
    y = x.bernoulli_(p)
    xm.mark_step()
  assert y.dtype == dtype and y.shape == (200, 100)
  c = y.cpu()
  assert ((c == 0) | (c == 1)).all()
  mean, var = _stats(c)
  assert abs(mean - p) < 0.015
  assert abs(var - p * (1 - p)) < 0.015


def test_bernoulli_probability_tensor():
  # 2000 draws per column: the column means' standard deviation is at most 0.0112, and
  # 0.05 is 4.5 of it (a fixed seed keeps the draws the same from run to run).
  xm.set_rng_state(1234)
  probs = torch.linspace(0, 1, 11).repeat(2000, 1)
  with lowered('bernoulli'):
    y = torch.bernoulli(to_dev(probs)).cpu()
  assert y.dtype == torch.float32
  assert torch.allclose(y.mean(0), torch.linspace(0, 1, 11), atol=0.05)
  assert (y[:, 0] == 0).all() and (y[:, -1] == 1).all()
  # bernoulli_(tensor p), p broadcast to self.
  with lowered('bernoulli'):
    z = torch.empty(2000, 11, device=DEV).bernoulli_(to_dev(torch.linspace(0, 1, 11))).cpu()
  assert torch.allclose(z.mean(0), torch.linspace(0, 1, 11), atol=0.05)


def test_bernoulli_repeats_with_seed_and_differs_otherwise():
  def draw(seed):
    xm.set_rng_state(seed)
    a = torch.empty(64, 64, device=DEV).bernoulli_(0.5)
    b = torch.empty(64, 64, device=DEV).bernoulli_(0.5)
    return a.cpu(), b.cpu()
  a1, b1 = draw(1234)
  a2, b2 = draw(1234)
  a3, _ = draw(4321)
  assert torch.equal(a1, a2) and torch.equal(b1, b2)
  assert not torch.equal(a1, b1)  # the state advances between draws
  assert not torch.equal(a1, a3)


def test_bernoulli_bad_p_raises():
  with pytest.raises(RuntimeError, match='bernoulli'):
    torch.empty(3, device=DEV).bernoulli_(1.5)
  with pytest.raises(RuntimeError, match='bernoulli'):
    torch.bernoulli(torch.ones(3, dtype=torch.int64, device=DEV))
  assert torch.empty(3, device=DEV).bernoulli_(0.5).cpu().shape == (3,)


# ---- dropout -----------------------------------------------------------------

@pytest.mark.parametrize('p', [0.1, 0.5])
def test_dropout_scaling_and_backward_use_same_mask(p):
  x = to_dev(make((256, 64), torch.float32, kind='pos')).requires_grad_()
  with lowered('bernoulli'):
    y = F.dropout(x, p, training=True)
    y.backward(torch.ones_like(y))
    xm.mark_step()
  yc, xc, gc = y.detach().cpu(), x.detach().cpu(), x.grad.cpu()
  kept = yc != 0
  # Kept values scaled by 1 / (1 - p); the gradient is the same mask and scale.
  torch.testing.assert_close(yc[kept], xc[kept] / (1 - p))
  torch.testing.assert_close(gc, kept.float() / (1 - p))
  assert abs(kept.float().mean().item() - (1 - p)) < 0.02


def test_dropout_eval_and_p0_p1():
  x = make((8, 8), torch.float32)
  with lowered():
    assert_same(F.dropout(to_dev(x), 0.5, training=False), x)
    assert_same(F.dropout(to_dev(x), 0.0, training=True), x)
    assert_same(F.dropout(to_dev(x), 1.0, training=True), torch.zeros(8, 8))


def test_dropout_repeats_with_seed():
  x = to_dev(torch.ones(32, 32))
  xm.set_rng_state(7)
  a = F.dropout(x, 0.5).cpu()
  xm.set_rng_state(7)
  b = F.dropout(x, 0.5).cpu()
  xm.set_rng_state(8)
  c = F.dropout(x, 0.5).cpu()
  assert torch.equal(a, b) and not torch.equal(a, c)


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=str)
def test_native_dropout_and_backward(dtype):
  p = 0.4
  x = to_dev(make((128, 64), dtype, kind='pos'))
  with lowered('native_dropout', 'native_dropout_backward'):
    out, mask = torch.native_dropout(x, p, True)
    g = torch.ops.aten.native_dropout_backward(torch.ones_like(out), mask, 1 / (1 - p))
    xm.mark_step()
  assert out.dtype == dtype and mask.dtype == torch.bool and g.dtype == dtype
  oc, mc, xc, gc = out.cpu(), mask.cpu(), x.cpu(), g.cpu()
  expected_out = xc * mc * (1 / (1 - p))
  torch.testing.assert_close(oc, expected_out.to(dtype))
  torch.testing.assert_close(gc, (mc.to(dtype) * (1 / (1 - p))).to(dtype))
  assert abs(mc.float().mean().item() - (1 - p)) < 0.02
  # Not training: the input and an all-true mask, as on the CPU.
  with lowered('native_dropout'):
    out, mask = torch.native_dropout(x, p, False)
  e_out, e_mask = torch.native_dropout(xc, p, False)
  assert_same(out, e_out)
  assert_same(mask, e_mask)


def test_native_dropout_bad_input_raises():
  x = to_dev(torch.ones(4))
  with pytest.raises(RuntimeError, match='native_dropout_backward'):
    torch.ops.aten.native_dropout_backward(x, x, 2.0)
  with pytest.raises(RuntimeError, match='native_dropout'):
    torch.native_dropout(x, 1.5, True)


# ---- random_ / randint ---------------------------------------------------------

@pytest.mark.parametrize('dtype', [torch.int64, torch.int32, torch.uint8, torch.float32, torch.bfloat16,
                                   torch.float64], ids=str)
def test_randint_range_dtype_and_statistics(dtype):
  with lowered('random'):
    t = torch.randint(3, 13, (200, 100), dtype=dtype, device=DEV)
    xm.mark_step()
  assert t.dtype == dtype and t.shape == (200, 100)
  c = t.cpu().double()
  assert c.min().item() == 3 and c.max().item() == 12
  assert (c == c.round()).all()
  mean, var = _stats(c)
  assert abs(mean - 7.5) < 0.1
  assert abs(var - (10 ** 2 - 1) / 12) < 0.3  # discrete uniform variance


def test_random_overloads():
  with lowered('random'):
    a = torch.empty(10000, dtype=torch.int64, device=DEV).random_(5).cpu()             # random_.to
    b = torch.empty(10000, dtype=torch.int64, device=DEV).random_(-7, -2).cpu()        # random_.from
    c = torch.empty(10000, dtype=torch.int32, device=DEV).random_().cpu()              # random_
    d = torch.empty(10000, dtype=torch.float32, device=DEV).random_().cpu()
    e = torch.empty(10000, dtype=torch.bool, device=DEV).random_().cpu()
    h = torch.empty(10000, dtype=torch.float64, device=DEV).random_().cpu()          # [0, 2^53]
    f = torch.empty(10000, dtype=torch.int64, device=DEV).random_(-3, None).cpu()     # [from, int64 max]
    g = torch.empty(10000, dtype=torch.int64, device=DEV).random_(-2**63, None).cpu()  # the whole int64 range
  assert a.min() == 0 and a.max() == 4
  assert b.min() == -7 and b.max() == -3
  assert c.min() >= 0 and c.max() > 2**30
  assert d.min() >= 0 and d.max() <= 2**24 and d.max() > 2**23 and (d == d.round()).all()
  assert set(e.unique().tolist()) == {False, True}
  assert h.min() >= 0 and h.max() <= 2**53 and h.max() > 2**52 and (h == h.round()).all()
  assert f.min() >= -3 and f.float().mean() > 2**61
  assert g.min() < -2**61 and g.max() > 2**61
  big = torch.empty(10000, dtype=torch.int64, device=DEV).random_(0, 2**40).cpu()     # 64-bit draws
  assert big.min() >= 0 and big.max() < 2**40 and big.max() > 2**39


def test_randint_repeats_with_seed_and_differs_otherwise():
  def draw(seed):
    xm.set_rng_state(seed)
    return torch.randint(0, 1000, (50, 50), device=DEV).cpu()
  a, b, c = draw(99), draw(99), draw(100)
  assert torch.equal(a, b) and not torch.equal(a, c)


def test_random_bad_range_raises():
  with pytest.raises(RuntimeError, match='random_'):
    torch.empty(3, dtype=torch.int64, device=DEV).random_(5, 2)
  with pytest.raises(RuntimeError, match='random_'):
    torch.empty(3, dtype=torch.uint8, device=DEV).random_(0, 1000)
  assert torch.randint(0, 3, (2,), device=DEV).cpu().shape == (2,)


# ---- counter cases ------------------------------------------------------------

COUNTER_CASES = {
    'uniform': (lambda: _pos().uniform_(), 'uniform'),
    'normal_functional': (lambda: _pos().normal_(), 'normal'),
    # random distributions
    'normal.Tensor_float': (lambda: torch.normal(torch.zeros(3, device=DEV), 2.0), 'normal'),
    'normal.float_Tensor': (lambda: torch.normal(1.0, torch.ones(3, device=DEV)), 'normal'),
    'normal.Tensor_Tensor': (lambda: torch.normal(torch.zeros(3, device=DEV), torch.ones(3, device=DEV)), 'normal'),
    'cauchy': (lambda: torch.empty(4, device=DEV).cauchy_(), 'cauchy'),
    'exponential': (lambda: torch.empty(4, device=DEV).exponential_(), 'exponential'),
    'geometric': (lambda: torch.empty(4, device=DEV).geometric_(0.3), 'geometric'),
    'log_normal': (lambda: torch.empty(4, device=DEV).log_normal_(), 'log_normal'),
    'multinomial': (lambda: torch.multinomial(torch.ones(2, 5, device=DEV), 3), 'multinomial'),
    'bernoulli': (lambda: torch.bernoulli(torch.full((3, 4), 0.5, device=DEV)), 'bernoulli'),
    'bernoulli.p': (lambda: _x().bernoulli_(0.5), 'bernoulli'),
    'bernoulli.Tensor': (lambda: _x().bernoulli_(torch.full((4,), 0.5, device=DEV)), 'bernoulli'),
    'native_dropout': (lambda: torch.native_dropout(_x(), 0.5, True)[0], 'native_dropout'),
    'native_dropout_backward': (lambda: torch.ops.aten.native_dropout_backward(_x(), _x() > 0, 2.0),
                                'native_dropout_backward'),
    'random': (lambda: torch.empty(3, 4, dtype=torch.int64, device=DEV).random_(), 'random'),
    'random.from': (lambda: torch.randint(2, 9, (3, 4), device=DEV), 'random'),
    'random.to': (lambda: torch.empty(3, 4, dtype=torch.int64, device=DEV).random_(9), 'random'),
}


@pytest.mark.parametrize('dtype', [torch.complex64, torch.complex128])
def test_normal_of_a_complex_tensor_draws_both_parts(dtype):
  # As eager: each part has the mean and std / sqrt(2), the value variance std^2.
  t = torch.empty(20000, dtype=dtype, device=DEV).normal_(mean=0.5, std=2.0).cpu()
  assert t.dtype == dtype
  for part in (t.real, t.imag):
    assert abs(part.mean().item() - 0.5) < 0.05
    assert abs(part.std().item() - 2.0 / 2 ** 0.5) < 0.05
  assert torch.randn(4, dtype=dtype, device=DEV).dtype == dtype
