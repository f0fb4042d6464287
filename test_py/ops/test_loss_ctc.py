"""ctc_loss on the device against eager CPU: the loss and its gradient for every reduction,
lengths as lists and as CPU tensors, padded and concatenated targets, log_alpha,
impossible alignments (with and without zero_infinity); bad arguments raise."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import DEV, check, check_grad, lowered


F32_GRAD = dict(rtol=1e-5, atol=1e-5)


REDUCTIONS = ['none', 'mean', 'sum']


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


# ---- counter cases ------------------------------------------------------------


COUNTER_CASES = {
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
}
