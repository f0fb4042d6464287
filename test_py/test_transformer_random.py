"""Random ops of the transformer layers on the XLA device: bernoulli (dropout's mask),
native_dropout and its backward, random_ (torch.randint). Values are checked by range,
dtype and statistics; xm.set_rng_state() must repeat results exactly.
"""
import math

import pytest
import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm

from op_testing import DEV, assert_same, lowered, make, to_dev


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


# ---- counter cases -----------------------------------------------------------

def _x():
  return make((3, 4), torch.float32).to(DEV)


COUNTER_CASES = {
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
