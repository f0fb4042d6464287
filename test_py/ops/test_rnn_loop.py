"""nn.LSTM, nn.GRU and nn.RNN as a loop over the time steps that XLA lowers
(cpp/ops/rnn_loop.cpp): what every device runs, except the LSTM on the CPU device's
oneDNN path. There the LSTM takes the loop where eager PyTorch would not use oneDNN
(oneDNN switched off, dtypes other than float32), which is how these tests reach it.
Outputs, final states and every gradient match eager's; the graph holds one loop per
layer and direction instead of the unrolled steps."""

import pytest
import torch
import torch_xla

from testing.op_testing import DEV, assert_same, counter, lowered, make


CELLS = {
    'lstm': (torch.nn.LSTM, {}),
    'gru': (torch.nn.GRU, {}),
    'rnn_tanh': (torch.nn.RNN, {}),
    'rnn_relu': (torch.nn.RNN, {'nonlinearity': 'relu'}),
}


def run(module, x, state=None):
  """Output, states and parameter/input gradients of one forward and backward."""
  x = x.detach().clone().requires_grad_(True)
  out, state = module(x, state) if state is not None else module(x)
  h, c = state if isinstance(state, tuple) else (state, state.new_zeros(()))
  (out.square().sum() + h.sum() + 2 * c.sum()).backward()
  return [out, h, c, x.grad] + [p.grad for p in module.parameters()]


def pair(dtype=torch.float32, cell='lstm', **kwargs):
  cls, extra = CELLS[cell]
  torch.manual_seed(0)
  cpu = cls(8, 6, **extra, **kwargs).to(dtype)
  dev = cls(8, 6, **extra, **kwargs).to(dtype)
  dev.load_state_dict(cpu.state_dict())
  return cpu, dev.to(DEV)


def without_onednn():
  return torch.backends.mkldnn.flags(enabled=False)


@pytest.mark.parametrize('cell,layers,bidirectional,batch_first,bias', [
    ('lstm', 1, False, False, True), ('lstm', 2, False, True, True), ('lstm', 2, True, False, True),
    ('lstm', 1, True, True, False), ('gru', 2, True, True, True), ('gru', 1, False, False, False),
    ('rnn_tanh', 2, True, False, True), ('rnn_relu', 1, True, True, False)])
def test_loop_matches_eager(cell, layers, bidirectional, batch_first, bias):
  cpu, dev = pair(cell=cell, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
  x = make((3, 5, 8), torch.float32)
  expected = run(cpu, x)
  with without_onednn(), lowered(cell):
    actual = run(dev, x.to(DEV))
    # One loop per layer and direction.
    assert counter('xla::' + cell) == layers * (2 if bidirectional else 1)
    assert counter('xla::mkldnn_rnn_layer') == 0
  assert_same(actual, expected)


@pytest.mark.parametrize('cell', list(CELLS))
def test_loop_with_initial_state_and_float64(cell):
  cpu, dev = pair(torch.float64, cell, num_layers=2)
  x = make((4, 3, 8), torch.float64)
  h0, c0 = make((2, 3, 6), torch.float64, seed=1), make((2, 3, 6), torch.float64, seed=2)
  state = (h0, c0) if cell == 'lstm' else h0
  expected = run(cpu, x, state)
  with lowered(cell):  # float64: oneDNN would not take it
    actual = run(dev, x.to(DEV), tuple(t.to(DEV) for t in state) if cell == 'lstm' else h0.to(DEV))
  assert_same(actual, expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize('cell', ['lstm', 'gru'])
def test_bfloat16_loop_is_as_close_to_float64_as_eager(cell):
  """Gates and cell states in float32 (as cuDNN computes them): no further from the
  float64 result than eager's bfloat16 composite, within twice its error."""
  ref, dev = pair(torch.float64, cell, num_layers=2)
  eager, _ = pair(torch.bfloat16, cell, num_layers=2)
  eager.load_state_dict(ref.state_dict())
  dev = dev.to(torch.bfloat16)
  dev.load_state_dict(ref.state_dict())
  x = make((6, 4, 8), torch.float32)
  expected = run(ref, x.double())
  eager_results = run(eager, x.to(torch.bfloat16))
  with lowered(cell):
    actual = run(dev, x.to(torch.bfloat16).to(DEV))
  for a, e, r in zip(actual, eager_results, expected):
    assert a.dtype == e.dtype
    error = (a.cpu().double() - r).abs().max().item()
    eager_error = (e.double() - r).abs().max().item()
    assert error <= 2 * eager_error + 1e-3, (error, eager_error)


@pytest.mark.parametrize('cell', ['lstm', 'gru', 'rnn_relu'])
def test_double_backward_matches_eager(cell):
  """A gradient penalty differentiates the layer's backward again (create_graph)."""
  cpu, dev = pair(cell=cell)

  def penalty(module, x):
    x = x.clone().requires_grad_(True)
    out, _ = module(x)
    grad, = torch.autograd.grad(out.square().sum(), x, create_graph=True)
    grad.square().sum().backward()
    return [grad, x.grad] + [p.grad for p in module.parameters()]

  x = make((3, 2, 8), torch.float32)
  expected = penalty(cpu, x)
  with without_onednn(), lowered(cell):
    actual = penalty(dev, x.to(DEV))
  assert_same(actual, expected)


@pytest.mark.parametrize('cell', ['lstm', 'gru'])
def test_inference_under_no_grad(cell):
  cpu, dev = pair(cell=cell, num_layers=2)
  x = make((4, 3, 8), torch.float32)
  with torch.no_grad():
    expected = cpu(x)
    with without_onednn(), lowered(cell):
      actual = dev(x.to(DEV))
  assert_same(actual[0], expected[0])
  assert_same(actual[1], expected[1])


@pytest.mark.parametrize('cell', ['lstm', 'gru'])
def test_autocast_runs_the_layers_in_bfloat16(cell):
  """Under torch.autocast('xla') the layers take bfloat16 inputs and weights, as eager
  CUDA's autocast runs cuDNN's layers; the gradients reach the float32 weights."""
  cpu, dev = pair(cell=cell, num_layers=2)
  x = make((6, 4, 8), torch.float32)
  expected = cpu(x)[0]
  with lowered(cell):
    with torch.autocast('xla', dtype=torch.bfloat16):
      out = dev(x.to(DEV))[0]
    out.float().square().sum().backward()
  assert out.dtype == torch.bfloat16
  assert (out.cpu().float() - expected).abs().max().item() < 3e-2
  for p in dev.parameters():
    assert p.grad is not None and p.grad.dtype == torch.float32


@pytest.mark.parametrize('batch_first', [False, True])
def test_pack_and_pad_sequences_match_eager(batch_first):
  """pack_padded_sequence (PyTorch's kernel, slices of slices of the input, below
  functionalization), its backward and pad_packed_sequence (which read the batch sizes
  that functionalization wraps) on XLA data."""
  from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
  x = make((4, 5, 3) if batch_first else (5, 4, 3), torch.float32)
  lengths = torch.tensor([5, 3, 2, 1])

  def round_trip(device):
    leaf = x.to(device).detach().requires_grad_(True)
    packed = pack_padded_sequence(leaf, lengths, batch_first=batch_first)
    padded, out_lengths = pad_packed_sequence(packed, batch_first=batch_first, padding_value=-1.0)
    (padded * padded).sum().backward()
    return packed.data, packed.batch_sizes, padded, out_lengths, leaf.grad

  data, sizes, padded, out_lengths, grad = round_trip('cpu')
  xdata, xsizes, xpadded, xout_lengths, xgrad = round_trip(DEV)
  assert xsizes.tolist() == sizes.tolist() and xout_lengths.tolist() == out_lengths.tolist()
  assert_same([xdata, xpadded, xgrad], [data, padded, grad])


@pytest.mark.parametrize('cell,enforce_sorted,layers,bidirectional', [('lstm', True, 2, False),
                                                                       ('gru', False, 1, True),
                                                                       ('rnn_tanh', True, 1, True)])
def test_packed_sequences_match_eager(cell, enforce_sorted, layers, bidirectional):
  """nn.utils.rnn.pack_padded_sequence: the loop runs on the padded form, each sequence's
  states standing still over the steps it lacks, and packs its output again."""
  from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
  cpu, dev = pair(cell=cell, num_layers=layers, bidirectional=bidirectional)
  lengths = torch.tensor([5, 3, 2, 1]) if enforce_sorted else torch.tensor([3, 5, 1, 2])
  x = make((5, 4, 8), torch.float32)

  def packed_run(module, device):
    leaf = x.to(device).detach().requires_grad_(True)
    out, state = module(pack_padded_sequence(leaf, lengths, enforce_sorted=enforce_sorted))
    padded, out_lengths = pad_packed_sequence(out)
    h, c = state if isinstance(state, tuple) else (state, state.new_zeros(()))
    (padded.square().sum() + h.sum() + 2 * c.sum()).backward()
    assert out_lengths.tolist() == lengths.tolist()
    return [padded, h, c, leaf.grad] + [p.grad for p in module.parameters()]

  expected = packed_run(cpu, 'cpu')
  with lowered(cell):
    actual = packed_run(dev, DEV)
    assert counter('xla::' + cell) == layers * (2 if bidirectional else 1)
  assert_same(actual, expected)


def test_packed_sequences_refuse_a_differentiated_backward():
  from torch.nn.utils.rnn import pack_padded_sequence
  _, dev = pair(cell='gru')
  x = make((4, 2, 8), torch.float32).to(DEV).requires_grad_(True)
  out, _ = dev(pack_padded_sequence(x, torch.tensor([4, 2])))
  with pytest.raises(RuntimeError, match='gru: a backward through packed sequences that is differentiated again'):
    torch.autograd.grad(out.data.square().sum(), x, create_graph=True)


@pytest.mark.parametrize('cell', list(CELLS))
def test_graph_holds_one_loop_and_two_products_per_layer(cell):
  """The forward of one layer: the input projection of all steps in one product, and
  the loop whose body holds the recurrent product."""
  _, dev = pair(cell=cell)
  with torch.no_grad(), without_onednn():
    out, _ = dev(make((7, 3, 8), torch.float32).to(DEV))
    text = torch_xla._XLAC._get_stablehlo([out])
  assert text.count('stablehlo.while') == 1
  assert text.count('stablehlo.dot_general') == 2


def test_projections_keep_the_composite():
  cpu, dev = pair(proj_size=4)
  x = make((4, 3, 8), torch.float32)
  expected = run(cpu, x)
  with without_onednn(), lowered():
    actual = run(dev, x.to(DEV))
    assert counter('xla::lstm') == 0
  assert_same(actual, expected, rtol=1e-5, atol=1e-5)


def test_bad_sizes_raise_pytorchs_errors():
  _, dev = pair()
  with without_onednn():
    with pytest.raises(RuntimeError, match='input.size\\(-1\\) must be equal to input_size'):
      dev(torch.ones(3, 5, 7, device=DEV))
    # torch.lstm called directly with weights of the wrong size: PyTorch's composite raises.
    params = [p.detach() for p in dev.parameters()]
    params[1] = params[1][:, :5]
    with pytest.raises(RuntimeError, match='mat1 and mat2 shapes cannot be multiplied|size mismatch'):
      h = torch.zeros(1, 5, 6, device=DEV)
      torch.lstm(torch.ones(3, 5, 8, device=DEV), (h, h), params, True, 1, 0.0, False, False, False)[0].cpu()
    assert dev(torch.ones(3, 5, 8, device=DEV))[0].shape == (3, 5, 6)
