// nn.LSTM on XLA tensors (aten::lstm.input, taken at its autograd key), one layer and
// direction at a time: PyTorch's oneDNN layers on the host where eager PyTorch would run
// them (the CPU device, float32), else a loop over the time steps that XLA lowers
// (ops/lstm_loop.cpp). What remains (projections, packed sequences, mixed dtypes) takes
// PyTorch's composite, which unrolls the steps into a few ops each.
//
// Why not the composite everywhere: it records every step's product, gate chunk and
// activations, forward and backward. A 2-layer LSTM language model over 32 steps traced
// ~1000 ops forward and as many backward (23 ms a step on the CPU), and the unrolled
// graph ran ~200 small products, each of them repacking a weight matrix.
#include <ATen/ATen.h>
#include <ATen/ops/lstm_native.h>
#include <torch/library.h>

#include <vector>

#include "ops/lstm.h"

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

// Whether every layer's weights and states have the sizes the input and the states imply
// (else PyTorch's composite raises its own errors).
bool LayerShapesFit(const at::Tensor& input, at::TensorList hx, at::TensorList params, bool has_biases,
                    int64_t num_layers, int64_t directions, bool batch_first) {
  const int64_t hidden = hx[0].size(2), batch = input.size(batch_first ? 0 : 1);
  const int64_t per_layer = has_biases ? 4 : 2;
  for (const at::Tensor& state : hx)
    if (state.size(1) != batch) return false;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    const int64_t features = layer == 0 ? input.size(2) : hidden * directions;
    for (int64_t direction = 0; direction < directions; ++direction) {
      const at::Tensor* w = &params[(layer * directions + direction) * per_layer];
      if (!w[0].sizes().equals({4 * hidden, features}) || !w[1].sizes().equals({4 * hidden, hidden})) return false;
      if (has_biases && (!w[2].sizes().equals({4 * hidden}) || !w[3].sizes().equals({4 * hidden}))) return false;
    }
  }
  return true;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> Lstm(const at::Tensor& input, at::TensorList hx,
                                                    at::TensorList params, bool has_biases, int64_t num_layers,
                                                    double dropout, bool train, bool bidirectional,
                                                    bool batch_first) {
  const int64_t directions = bidirectional ? 2 : 1;
  const bool shapes_fit = input.dim() == 3 && input.numel() > 0 && hx.size() == 2 && hx[0].dim() == 3 &&
                          hx[1].dim() == 3 && hx[0].size(2) == hx[1].size(2) &&  // no projections
                          hx[0].size(0) == num_layers * directions &&
                          static_cast<int64_t>(params.size()) == num_layers * directions * (has_biases ? 4 : 2);
  const bool on_host = shapes_fit && LstmOnHost(input, hx, params);
  const bool loop = !on_host && shapes_fit && LstmLoopApplies(input, hx, params) &&
                    LayerShapesFit(input, hx, params, has_biases, num_layers, directions, batch_first);
  if (!on_host && !loop) {
    return at::native::lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
  }
  const bool keep_for_backward = NeedsGrad(input, hx, params);
  const int64_t per_layer = has_biases ? 4 : 2;
  const at::Tensor none;
  // The layers run sequence-first, as PyTorch's own kernels do.
  at::Tensor layer_input = batch_first ? input.transpose(0, 1).contiguous() : input;
  std::vector<at::Tensor> hy, cy;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<at::Tensor> outputs;
    for (int64_t direction = 0; direction < directions; ++direction) {
      const int64_t index = layer * directions + direction;
      const at::Tensor* w = &params[index * per_layer];
      at::Tensor h0 = hx[0][index], c0 = hx[1][index];
      const LstmLayerArgs args{layer_input, w[0], w[1], has_biases ? w[2] : none, has_biases ? w[3] : none,
                               h0, c0, /*reverse=*/direction > 0};
      auto [output, h, c] = on_host ? HostLstmLayer(args, num_layers, bidirectional)
                                    : LoopLstmLayer(args, keep_for_backward);
      outputs.push_back(output);
      hy.push_back(h);
      cy.push_back(c);
    }
    layer_input = directions == 1 ? outputs[0] : at::cat(outputs, -1);
    if (dropout != 0 && train && layer < num_layers - 1) layer_input = at::dropout(layer_input, dropout, true);
  }
  at::Tensor output = batch_first ? layer_input.transpose(0, 1) : layer_input;
  return {output, at::stack(hy, 0), at::stack(cy, 0)};
}

TORCH_LIBRARY_IMPL(aten, AutogradXLA, m) { m.impl("lstm.input", TORCH_FN(Lstm)); }

}  // namespace
}  // namespace torch_xla
