"""nll_loss / nll_loss2d / cross_entropy (and the chunked linear_cross_entropy) on the XLA
device against eager CPU: values, dtypes, shapes, input gradients, weights and ignored
targets, no CPU fallback, and errors that name the op."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import DEV, FLOATS, check, ids, make, run_grads


# ---------------------------------------------------------------------------------
# nll_loss, cross_entropy


def nll_inputs(shape, classes, dtype, ignore=None, seed=0):
  x = F.log_softmax(make(shape, torch.float32, seed=seed), 1 if len(shape) > 1 else 0).to(dtype)
  tshape = (shape[0],) + tuple(shape[2:]) if len(shape) > 1 else ()
  t = torch.randint(0, classes, tshape, generator=torch.Generator().manual_seed(seed + 1))
  if ignore is not None and t.dim() > 0:
    t.view(-1)[::3] = ignore
  return x, t


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('reduction', ['none', 'mean', 'sum'])
@pytest.mark.parametrize('weighted', [False, True])
@pytest.mark.parametrize('ignore', [None, 2, -100])
def test_nll_loss_2d_input(dtype, reduction, weighted, ignore):
  x, t = nll_inputs((6, 5), 5, dtype, ignore=ignore)
  w = (torch.rand(5, generator=torch.Generator().manual_seed(3)) + 0.5).to(dtype) if weighted else None
  kw = dict(reduction=reduction, ignore_index=-100 if ignore is None else ignore)
  op = 'nll_loss_forward'
  run_grads(lambda a, b, c: F.nll_loss(a, b, weight=c, **kw), [x, t, w], [0],
           ops=[op, 'nll_loss_backward'])


@pytest.mark.parametrize('reduction', ['none', 'mean', 'sum'])
def test_nll_loss_1d_input(reduction):
  x, t = nll_inputs((5,), 5, torch.float32)
  run_grads(lambda a, b: F.nll_loss(a, b, reduction=reduction), [x, t], [0], ops=['nll_loss_forward'])
  out = check(lambda a, b: torch.ops.aten.nll_loss_forward(a, b, None, {'none': 0, 'mean': 1, 'sum': 2}[reduction],
                                                           -100), x, t, ops=['nll_loss_forward'])


def test_nll_loss_total_weight_and_all_ignored():
  x, t = nll_inputs((4, 3), 3, torch.float32)
  for red in (0, 1, 2):
    check(lambda a, b: torch.ops.aten.nll_loss_forward(a, b, None, red, -100), x, t, ops=['nll_loss_forward'])
  t_ign = torch.full((4,), 1)
  # every target ignored: mean is 0/0 = nan, as in eager
  check(lambda a, b: F.nll_loss(a, b, ignore_index=1), x, t_ign, ops=['nll_loss_forward'])


def test_nll_loss_byte_target():
  x, t = nll_inputs((4, 3), 3, torch.float32)
  check(lambda a, b: F.nll_loss(a, b), x, t.to(torch.uint8), ops=['nll_loss_forward'])


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('reduction', ['none', 'mean', 'sum'])
def test_cross_entropy(dtype, reduction):
  x = make((8, 10), dtype)
  t = torch.randint(0, 10, (8,), generator=torch.Generator().manual_seed(5))
  run_grads(lambda a, b: F.cross_entropy(a, b, reduction=reduction), [x, t], [0],
           ops=['_log_softmax', '_log_softmax_backward_data', 'nll_loss_forward', 'nll_loss_backward'])


@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
@pytest.mark.parametrize('reduction', ['none', 'mean', 'sum'])
@pytest.mark.parametrize('weighted', [False, True])
def test_cross_entropy_spatial(dtype, reduction, weighted):
  x = make((2, 4, 3, 5), dtype)
  t = torch.randint(0, 4, (2, 3, 5), generator=torch.Generator().manual_seed(5))
  t[0, 0, :2] = -100
  w = (torch.rand(4, generator=torch.Generator().manual_seed(3)) + 0.5).to(dtype) if weighted else None
  run_grads(lambda a, b, c: F.cross_entropy(a, b, weight=c, reduction=reduction), [x, t, w], [0],
           ops=['nll_loss2d_forward', 'nll_loss2d_backward'])


def test_nll_loss_errors():
  x = torch.randn(4, 3, device=DEV)
  with pytest.raises(Exception, match='nll_loss.*batch_size'):
    torch.ops.aten.nll_loss_forward(x, torch.zeros(5, dtype=torch.long, device=DEV), None, 1, -100)
  with pytest.raises(Exception, match='nll_loss.*Long'):
    torch.ops.aten.nll_loss_forward(x, torch.zeros(4, dtype=torch.int32, device=DEV), None, 1, -100)
  with pytest.raises(Exception, match='nll_loss.*weight'):
    torch.ops.aten.nll_loss_forward(x, torch.zeros(4, dtype=torch.long, device=DEV), torch.ones(2, device=DEV), 1,
                                    -100)
  with pytest.raises(Exception, match='nll_loss2d'):
    torch.ops.aten.nll_loss2d_forward(x, torch.zeros(4, dtype=torch.long, device=DEV), None, 1, -100)
  with pytest.raises(Exception, match='nll_loss_backward'):
    torch.ops.aten.nll_loss_backward(torch.ones(3, device=DEV), x, torch.zeros(4, dtype=torch.long, device=DEV),
                                     None, 0, -100, torch.tensor(0., device=DEV))
  assert (x + 1).cpu().shape == (4, 3)  # the process lives on


def test_nll_loss_takes_floating_class_indices_as_torch_xla_does():
  # Eager PyTorch refuses a float target; torch_xla reads it as class indices.
  x = torch.randn(4, 3)
  t = torch.tensor([0, 2, 1, 2])
  out = F.cross_entropy(x.to(DEV), t.float().to(DEV))
  torch.testing.assert_close(out.cpu(), F.cross_entropy(x, t))


# ---- custom ops run under functionalization ---------------------------------------------


@pytest.mark.skipif(not hasattr(torch.nn, 'LinearCrossEntropyOptions'),
                    reason='torch.nn.LinearCrossEntropyOptions is new in torch 2.13')
@pytest.mark.parametrize('reduction', ['none', 'sum', 'mean'])
def test_linear_cross_entropy_chunked(reduction):
  # The chunked path is a torch.library custom op whose implementation writes through
  # views (out.narrow(...).copy_): torch_xla runs it under functionalization.
  options = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
  x, w = make((5, 3), torch.float32), make((4, 3), torch.float32, seed=1)
  target = torch.tensor([0, 3, 1, 1, 2])
  check(lambda a, b, t: F.linear_cross_entropy(a, b, t, reduction=reduction, options=options), x, w, target)
  check(lambda a, b, t: F.linear_cross_entropy(a, b, t, reduction=reduction, options=options), x[0], w, target[0])


# ---- counter cases ------------------------------------------------------------

def _ce_case(spatial, backward):

  def run():
    x = torch.randn(2, 3, 4, 4, device=DEV, requires_grad=True) if spatial else torch.randn(
        4, 3, device=DEV, requires_grad=True)
    t = torch.zeros((2, 4, 4) if spatial else (4,), dtype=torch.long, device=DEV)
    out = F.nll_loss(x, t)
    if backward:
      out.backward()

  return run


COUNTER_CASES = {
    'nll_loss_forward': (_ce_case(False, False), 'nll_loss_forward'),
    'nll_loss_backward': (_ce_case(False, True), 'nll_loss_backward'),
    'nll_loss2d_forward': (_ce_case(True, False), 'nll_loss2d_forward'),
    'nll_loss2d_backward': (_ce_case(True, True), 'nll_loss2d_backward'),
}
