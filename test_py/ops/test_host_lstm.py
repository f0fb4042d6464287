"""nn.LSTM on the CPU device runs PyTorch's oneDNN LSTM layers inside the graph
(cpp/ops/host_lstm.cpp), forward and backward, where eager PyTorch would run them;
outputs, final states and every gradient match eager's."""

import pytest
import torch

from testing.op_testing import DEV, assert_same, counter, lowered, make

HOST_OPS = ('mkldnn_rnn_layer', 'mkldnn_rnn_layer_backward')


def run(module, x, state=None):
  """Output, states and parameter/input gradients of one forward and backward."""
  x = x.detach().clone().requires_grad_(True)
  out, (h, c) = module(x, state) if state is not None else module(x)
  (out.square().sum() + h.sum() + 2 * c.sum()).backward()
  return [out, h, c, x.grad] + [p.grad for p in module.parameters()]


def pair(**kwargs):
  torch.manual_seed(0)
  cpu = torch.nn.LSTM(8, 6, **kwargs)
  dev = torch.nn.LSTM(8, 6, **kwargs)
  dev.load_state_dict(cpu.state_dict())
  return cpu, dev.to(DEV)


@pytest.mark.parametrize('layers,bidirectional,batch_first,bias', [
    (1, False, False, True), (2, False, True, True), (2, True, False, True), (1, True, True, False)])
def test_lstm_matches_eager(layers, bidirectional, batch_first, bias):
  cpu, dev = pair(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
  x = make((3, 5, 8), torch.float32)
  expected = run(cpu, x)
  with lowered(*HOST_OPS):
    actual = run(dev, x.to(DEV))
  assert_same(actual, expected)


def test_lstm_with_initial_state():
  cpu, dev = pair(num_layers=2)
  x, h0, c0 = make((4, 3, 8), torch.float32), make((2, 3, 6), torch.float32, seed=1), make((2, 3, 6), torch.float32,
                                                                                            seed=2)
  expected = run(cpu, x, (h0, c0))
  with lowered(*HOST_OPS):
    actual = run(dev, x.to(DEV), (h0.to(DEV), c0.to(DEV)))
  assert_same(actual, expected)


def test_lstm_inference_under_no_grad():
  cpu, dev = pair(num_layers=2)
  x = make((4, 3, 8), torch.float32)
  cpu.eval(), dev.eval()
  with torch.no_grad():
    expected = cpu(x)
    with lowered('mkldnn_rnn_layer'):
      actual = dev(x.to(DEV))
  assert_same(actual[0], expected[0])
  assert_same(list(actual[1]), list(expected[1]))


def test_lstm_dropout_between_layers_trains():
  _, dev = pair(num_layers=2, dropout=0.5)
  with lowered(*HOST_OPS, 'bernoulli'):
    grads = run(dev, make((4, 3, 8), torch.float32).to(DEV))
  assert all(torch.isfinite(g.cpu()).all() for g in grads)


def test_other_lstms_do_not_call_onednn():
  """Projections keep PyTorch's composite; float64 takes the loop (test_lstm_loop.py)."""
  for kwargs, dtype in (({'proj_size': 4}, torch.float32), ({}, torch.float64)):
    cpu, dev = pair(**kwargs)
    cpu, dev = cpu.to(dtype), dev.to(dtype)
    x = make((4, 3, 8), dtype)
    expected = run(cpu, x)
    with lowered():
      actual = run(dev, x.to(DEV))
      assert counter('xla::mkldnn_rnn_layer') == 0
    assert_same(actual, expected, rtol=1e-5, atol=1e-5)


def test_lstm_bad_input_raises():
  _, dev = pair()
  with pytest.raises(RuntimeError, match='input.size\\(-1\\) must be equal to input_size'):
    dev(torch.ones(3, 5, 7, device=DEV))
  assert dev(torch.ones(3, 5, 8, device=DEV))[0].shape == (3, 5, 6)


def test_workspace_is_computed_in_its_result_buffer():
  # An even batch splits into equal halves, whose oneDNN workspaces are allocated right
  # in their pieces of the graph's workspace buffer (cpp/aten/provided_cpu_memory.h)
  # instead of being copied there; the backward reads them from there.
  cpu, dev = pair(num_layers=2)
  x = make((6, 4, 8), torch.float32)
  expected = run(cpu, x)
  before = counter('HostAtenPieceInPlace')
  with lowered(*HOST_OPS):
    actual = run(dev, x.to(DEV))
  assert_same(actual, expected)
  # At least one part of each of the two layers (one part a layer on one thread).
  assert counter('HostAtenPieceInPlace') - before >= 2
