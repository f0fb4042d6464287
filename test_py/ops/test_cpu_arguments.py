"""Arguments PyTorch lets stay on the CPU when the other operands are on an accelerator
(as CUDA users pass them) are accepted with XLA operands too: index tensors of
indexing and index_put, tensor_split's split points, 0-dim CPU tensors as scalars, CTC
loss's lengths. Values against eager; no CPU fallback where the op is lowered."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import DEV, check, lowered, make


def test_indexing_with_cpu_index_tensors():
  x = make((5, 4), torch.float32)
  idx = torch.tensor([0, 3, 1])
  check(lambda t: t[idx], x, ops=['index'])
  check(lambda t: t[idx, idx], x, ops=['index'])
  check(lambda t: t[:, torch.tensor([2, 0])], x, ops=['index'])


def test_index_put_with_cpu_index_tensors():
  x = make((5, 4), torch.float32)
  idx = torch.tensor([0, 3, 1])

  def put(t):
    t = t.clone()
    t[idx] = torch.ones(4, device=t.device)
    t.index_put_((idx, torch.tensor([1, 1, 2])), torch.tensor(7.0, device=t.device), accumulate=True)
    return t

  check(put, x, ops=['index_put'])


def test_tensor_split_with_cpu_split_points():
  x = make((7, 3), torch.float32)
  check(lambda t: torch.tensor_split(t, torch.tensor([1, 4])), x)
  check(lambda t: torch.tensor_split(t, torch.tensor(3), dim=0), x)


def test_zero_dim_cpu_tensors_are_scalars():
  x = make((5, 4), torch.float32)
  check(lambda t: t + torch.tensor(2.0), x, ops=['add'])
  check(lambda t: torch.where(t > 0, t, torch.tensor(-1.0)), x, ops=['where'])
  check(lambda t: torch.clamp(t, min=torch.tensor(0.0)), x)
  check(lambda t: t.masked_fill(t > 0, torch.tensor(3.0)), x)


def test_a_cpu_operand_of_an_elementwise_op_moves_to_the_device():
  # As torch_xla does: the CPU operand is copied to the XLA operand's device, either side.
  x, y = make((5,), torch.float32), make((5,), torch.float32, seed=3)
  with lowered('add', 'mul'):
    left, right = x.to(DEV) + y, y * x.to(DEV)
  assert left.device.type == right.device.type == 'xla'
  torch.testing.assert_close(left.cpu(), x + y)
  torch.testing.assert_close(right.cpu(), y * x)


def test_a_cpu_operand_the_op_needs_on_the_device_is_a_clear_error():
  x = make((5, 4), torch.float32).to(DEV)
  with pytest.raises(RuntimeError, match='gather.*XLA device.*cpu tensor'):
    torch.gather(x, 0, torch.zeros(3, 4, dtype=torch.long))


@pytest.mark.parametrize('reduction', ['mean', 'sum', 'none'])
def test_ctc_loss_with_cpu_lengths(reduction):
  # As CUDA users call it: log-probabilities and targets on the device, lengths on the
  # CPU (the default reduction divides by the CPU target lengths).
  g = torch.Generator().manual_seed(0)
  log_probs = torch.randn(8, 2, 5, generator=g).log_softmax(2)
  targets = torch.randint(1, 5, (2, 4), generator=g)
  input_lengths, target_lengths = torch.tensor([8, 6]), torch.tensor([4, 2])

  def loss(lp, t):
    return F.ctc_loss(lp, t, input_lengths, target_lengths, reduction=reduction)

  check(loss, log_probs, targets, ops=['_ctc_loss'], rtol=1e-4, atol=1e-4)
