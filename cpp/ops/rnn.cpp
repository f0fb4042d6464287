// nn.LSTM, nn.GRU and nn.RNN on XLA tensors (aten::lstm.input, gru.input,
// rnn_tanh.input, rnn_relu.input, taken at their autograd key), one layer and direction
// at a time: PyTorch's oneDNN LSTM layers on the host where eager PyTorch would run them
// (the CPU device, float32), else a loop over the time steps that XLA lowers
// (ops/rnn_loop.cpp). What remains (projections, packed sequences, mixed dtypes) takes
// PyTorch's composite, which unrolls the steps into a few ops each.
//
// Why not the composite everywhere: it records every step's product, gate chunk and
// activations, forward and backward. A 2-layer LSTM language model over 32 steps traced
// ~1000 ops forward and as many backward (23 ms a step on the CPU), a 2-layer GRU over
// 32 steps 4,500 ops a training step, and the unrolled graphs ran one small product per
// step and weight, each repacking its weight matrix.
#include <ATen/ATen.h>
#include <ATen/ops/gru_native.h>
#include <ATen/ops/lstm_native.h>
#include <ATen/ops/rnn_relu_native.h>
#include <ATen/ops/rnn_tanh_native.h>
#include <torch/library.h>

#include <vector>

#include "ops/rnn.h"

namespace torch_xla {
namespace {

bool NeedsGrad(const at::Tensor& input, at::TensorList hx, at::TensorList params) {
  if (!at::GradMode::is_enabled()) return false;
  if (input.requires_grad()) return true;
  for (at::TensorList list : {hx, params})
    for (const at::Tensor& t : list)
      if (t.defined() && t.requires_grad()) return true;
  return false;
}

struct Config {
  RnnCell cell;
  bool has_biases;
  int64_t num_layers;
  double dropout;
  bool train, bidirectional, batch_first;
  int64_t directions() const { return bidirectional ? 2 : 1; }
  int64_t per_layer() const { return has_biases ? 4 : 2; }
};

// Whether the input, the states (hx: h, and c for LSTM, [layers * directions, batch,
// hidden]) and every layer's weights have the sizes they imply for each other (else
// PyTorch's composite raises its own errors). Projections (LSTM's proj_size) do not fit.
bool ShapesFit(const at::Tensor& input, at::TensorList hx, at::TensorList params, const Config& k) {
  if (input.dim() != 3 || input.numel() == 0 || hx.empty()) return false;
  const int64_t hidden = hx[0].dim() == 3 ? hx[0].size(2) : -1, batch = input.size(k.batch_first ? 0 : 1);
  const int64_t gates = GateCount(k.cell);
  for (const at::Tensor& state : hx)
    if (!state.defined() || !state.sizes().equals({k.num_layers * k.directions(), batch, hidden})) return false;
  if (static_cast<int64_t>(params.size()) != k.num_layers * k.directions() * k.per_layer()) return false;
  for (int64_t layer = 0; layer < k.num_layers; ++layer) {
    const int64_t features = layer == 0 ? input.size(2) : hidden * k.directions();
    for (int64_t direction = 0; direction < k.directions(); ++direction) {
      const at::Tensor* w = &params[(layer * k.directions() + direction) * k.per_layer()];
      if (!w[0].sizes().equals({gates * hidden, features}) || !w[1].sizes().equals({gates * hidden, hidden}))
        return false;
      if (k.has_biases && (!w[2].sizes().equals({gates * hidden}) || !w[3].sizes().equals({gates * hidden})))
        return false;
    }
  }
  return true;
}

// The layers one after another (dropout between them in training), each direction's
// output concatenated; returns the output and the final states, stacked like hx. Empty
// when neither implementation takes these tensors (the caller runs the composite).
std::optional<std::vector<at::Tensor>> RunLayers(const at::Tensor& input, at::TensorList hx, at::TensorList params,
                                                 const Config& k) {
  if (!ShapesFit(input, hx, params, k)) return std::nullopt;
  const bool on_host = k.cell == RnnCell::kLstm && LstmOnHost(input, hx, params);
  if (!on_host && !RnnLoopApplies(input, hx, params)) return std::nullopt;
  const bool keep_for_backward = NeedsGrad(input, hx, params);
  const bool lstm = k.cell == RnnCell::kLstm;
  const at::Tensor none;
  // The layers run sequence-first, as PyTorch's own kernels do.
  at::Tensor layer_input = k.batch_first ? input.transpose(0, 1).contiguous() : input;
  std::vector<at::Tensor> hy, cy;
  for (int64_t layer = 0; layer < k.num_layers; ++layer) {
    std::vector<at::Tensor> outputs;
    for (int64_t direction = 0; direction < k.directions(); ++direction) {
      const int64_t index = layer * k.directions() + direction;
      const at::Tensor* w = &params[index * k.per_layer()];
      at::Tensor h0 = hx[0][index], c0 = lstm ? hx[1][index] : none;
      const RnnLayerArgs args{layer_input, w[0], w[1], k.has_biases ? w[2] : none, k.has_biases ? w[3] : none,
                              h0, c0, /*reverse=*/direction > 0};
      auto [output, h, c] = on_host ? HostLstmLayer(args, k.num_layers, k.bidirectional)
                                    : LoopRnnLayer(k.cell, args, keep_for_backward);
      outputs.push_back(output);
      hy.push_back(h);
      cy.push_back(c);
    }
    layer_input = k.directions() == 1 ? outputs[0] : at::cat(outputs, -1);
    if (k.dropout != 0 && k.train && layer < k.num_layers - 1) layer_input = at::dropout(layer_input, k.dropout, true);
  }
  std::vector<at::Tensor> result = {k.batch_first ? layer_input.transpose(0, 1) : layer_input, at::stack(hy, 0)};
  if (lstm) result.push_back(at::stack(cy, 0));
  return result;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> Lstm(const at::Tensor& input, at::TensorList hx,
                                                    at::TensorList params, bool has_biases, int64_t num_layers,
                                                    double dropout, bool train, bool bidirectional,
                                                    bool batch_first) {
  const Config k{RnnCell::kLstm, has_biases, num_layers, dropout, train, bidirectional, batch_first};
  if (hx.size() == 2) {
    if (auto r = RunLayers(input, hx, params, k)) return {(*r)[0], (*r)[1], (*r)[2]};
  }
  return at::native::lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
}

// gru.input, rnn_tanh.input and rnn_relu.input: one state tensor.
template <RnnCell kCell>
std::tuple<at::Tensor, at::Tensor> SingleStateRnn(const at::Tensor& input, const at::Tensor& hx,
                                                  at::TensorList params, bool has_biases, int64_t num_layers,
                                                  double dropout, bool train, bool bidirectional,
                                                  bool batch_first) {
  const Config k{kCell, has_biases, num_layers, dropout, train, bidirectional, batch_first};
  if (auto r = RunLayers(input, {hx}, params, k)) return {(*r)[0], (*r)[1]};
  switch (kCell) {
    case RnnCell::kGru:
      return at::native::gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
    case RnnCell::kRnnTanh:
      return at::native::rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                                  batch_first);
    default:
      return at::native::rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                                  batch_first);
  }
}

TORCH_LIBRARY_IMPL(aten, AutogradXLA, m) {
  m.impl("lstm.input", TORCH_FN(Lstm));
  m.impl("gru.input", TORCH_FN(SingleStateRnn<RnnCell::kGru>));
  m.impl("rnn_tanh.input", TORCH_FN(SingleStateRnn<RnnCell::kRnnTanh>));
  m.impl("rnn_relu.input", TORCH_FN(SingleStateRnn<RnnCell::kRnnRelu>));
}

}  // namespace
}  // namespace torch_xla
