"""Embedding on the XLA device against eager CPU: the forward (a lowered index_select),
the dense backward with padding_idx and scale_grad_by_freq, bad input, and the counter."""

import pytest
import torch

import torch_xla.core.xla_model as xm
from testing.op_testing import DEV, FLOATS, assert_same, check, ids, lowered, make
from testing.counter_cases import typed as _x


@pytest.mark.parametrize('kw', [dict(), dict(padding_idx=1), dict(scale_grad_by_freq=True),
                                dict(padding_idx=0, scale_grad_by_freq=True)], ids=str)
def test_embedding_forward_backward(kw):
  torch.manual_seed(0)
  emb = torch.nn.Embedding(7, 4, **kw)
  idx = torch.tensor([[1, 3, 3, 0], [6, 1, 1, 1]])
  g = make((2, 4, 4), torch.float32, seed=2)
  emb(idx).backward(g)
  emb_x = torch.nn.Embedding(7, 4, **kw)
  emb_x.load_state_dict(emb.state_dict())
  emb_x = emb_x.to(DEV)
  # aten::embedding's composite forward reshapes with a view (the transformer layers' op).
  with lowered('index_select', 'embedding_dense_backward'):
    out = emb_x(idx.to(DEV))
    out.backward(g.to(DEV))
    xm.mark_step()
  assert_same(emb_x.weight.grad, emb.weight.grad)


@pytest.mark.parametrize('padding_idx,scale', [(-1, False), (2, False), (-1, True), (0, True)])
@pytest.mark.parametrize('dtype', FLOATS, ids=ids)
def test_embedding_dense_backward(padding_idx, scale, dtype):
  g = make((2, 5, 3), dtype)
  idx = torch.tensor([[0, 2, 2, 4, 0], [5, 2, 0, 0, 1]])
  check(lambda g, i: torch.ops.aten.embedding_dense_backward(g, i, 6, padding_idx, scale), g, idx,
        ops=('embedding_dense_backward',))


def test_embedding_backward_bad_input_raises():
  with pytest.raises(RuntimeError, match='embedding_dense_backward'):
    torch.ops.aten.embedding_dense_backward(torch.ones(3, 4, device=DEV), torch.zeros(2, dtype=torch.int64,
                                                                                      device=DEV), 5, -1, False)


def test_embedding_forward_runs_lowered():
  weight = make((10, 4), torch.float32, seed=6)
  idx = torch.tensor([[1, 3], [9, 0]])
  check(lambda w, i: torch.nn.functional.embedding(i, w), weight, idx, ops=['view', 'index_select'])


# ---- counter cases ------------------------------------------------------------

def _i(*shape, high=3):
  return torch.zeros(shape, dtype=torch.int64).fill_(high - 1).to(DEV)


COUNTER_CASES = {
    'embedding_dense_backward': (lambda: torch.ops.aten.embedding_dense_backward(_x(), _i(3), 5, -1, False),
                                 'embedding_dense_backward'),
}


@pytest.mark.parametrize('mode,sparse,weighted', [('sum', False, False), ('sum', True, False), ('sum', True, True),
                                                  ('mean', False, False), ('mean', True, False),
                                                  ('max', False, False)])
def test_embedding_bag_backward_matches_eager(mode, sparse, weighted):
  # The bags [0, 3), [3, 3) (empty), [3, 7). With sparse=True eager's gradient is a sparse
  # COO tensor; XLA tensors are dense, so the device gives its dense form.
  idx = torch.tensor([1, 1, 4, 3, 9, 1, 0])
  offsets = torch.tensor([0, 3, 3])
  weights = make((7,), torch.float32, seed=3) if weighted else None
  w = make((10, 5), torch.float32, seed=1).requires_grad_()
  g = make((3, 5), torch.float32, seed=2)
  torch.nn.functional.embedding_bag(idx, w, offsets, mode=mode, sparse=sparse, per_sample_weights=weights).backward(g)
  expected = w.grad.to_dense() if sparse else w.grad
  w_x = w.detach().to(DEV).requires_grad_()
  out = torch.nn.functional.embedding_bag(idx.to(DEV), w_x, offsets.to(DEV), mode=mode, sparse=sparse,
                                          per_sample_weights=None if weights is None else weights.to(DEV))
  out.backward(g.to(DEV))
  assert not w_x.grad.is_sparse
  assert_same(w_x.grad, expected)
