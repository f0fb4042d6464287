// nn.LSTM on the CPU device by PyTorch's CPU (oneDNN) LSTM kernels, one call per layer
// and direction inside the compiled graph (host ATen calls, host/aten_ops.cpp).
//
// On a device other than the CPU, PyTorch's lstm is a composite that unrolls the time
// steps: for each step a matrix product with the recurrent weights, a chunk into four
// gates and their activations, and autograd records all of it. A 2-layer LSTM language
// model over 32 steps traced ~1000 ops forward and as many backward (23 ms a step), and
// XLA ran the unrolled graph, ~200 small products that each repack a weight matrix, in
// 65 ms, against 20 ms for eager's whole step. Eager PyTorch runs each layer as one
// oneDNN LSTM primitive (mkldnn_rnn_layer, whose autograd formula is
// mkldnn_rnn_layer_backward); this kernel, taken at lstm's autograd key on XLA tensors,
// composes the same layer calls as PyTorch's CPU path (aten/native/mkldnn/RNN.cpp), so
// the graph holds one host call per layer and direction, forward and backward, and
// the results are eager's. Inputs eager itself would not run through oneDNN (other
// dtypes, projections, oneDNN switched off) and every other device keep the composite.
// The layers always run oneDNN's training form, which also keeps the workspace its
// backward reads: the graph's shapes must not depend on grad mode at run time. Its
// values equal the inference form's.
#include <ATen/ATen.h>
#include <ATen/ops/lstm_native.h>
#include <ATen/ops/mkldnn_rnn_layer.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

#include "aten/bridge.h"
#include "host/aten_ops.h"

namespace torch_xla {
namespace {

// ideep::rnn_kind::LSTM, the `mode` argument of mkldnn_rnn_layer.
constexpr int64_t kLstmMode = 2;

bool AllFloatXla(at::TensorList tensors) {
  for (const at::Tensor& t : tensors) {
    if (!t.defined() || !IsXlaTensor(t) || t.scalar_type() != at::kFloat) return false;
  }
  return true;
}

bool LstmOnHost(const at::Tensor& input, at::TensorList hx, at::TensorList params, bool has_biases,
                int64_t num_layers, bool bidirectional) {
  const int64_t directions = bidirectional ? 2 : 1;
  return at::globalContext().userEnabledMkldnn() && input.dim() == 3 && input.numel() > 0 && hx.size() == 2 &&
         hx[0].dim() == 3 && hx[1].dim() == 3 && hx[0].size(2) == hx[1].size(2) &&  // no projections
         static_cast<int64_t>(params.size()) == num_layers * directions * (has_biases ? 4 : 2) &&
         AllFloatXla({input}) && AllFloatXla(hx) && AllFloatXla(params) && host::HostAtenAvailable();
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> Lstm(const at::Tensor& input, at::TensorList hx,
                                                    at::TensorList params, bool has_biases, int64_t num_layers,
                                                    double dropout, bool train, bool bidirectional,
                                                    bool batch_first) {
  if (!LstmOnHost(input, hx, params, has_biases, num_layers, bidirectional)) {
    return at::native::lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
  }
  const int64_t directions = bidirectional ? 2 : 1;
  const int64_t per_layer = has_biases ? 4 : 2;
  const int64_t hidden_size = hx[0].size(2);
  // The layers run sequence-first, as PyTorch's oneDNN path does.
  at::Tensor layer_input = batch_first ? input.transpose(0, 1).contiguous() : input;
  std::vector<at::Tensor> hy, cy;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<at::Tensor> outputs;
    for (int64_t direction = 0; direction < directions; ++direction) {
      const int64_t index = layer * directions + direction;
      const at::Tensor* w = &params[index * per_layer];
      at::Tensor b_ih = has_biases ? w[2] : at::zeros({w[0].size(0)}, w[0].options());
      at::Tensor b_hh = has_biases ? w[3] : at::zeros({w[1].size(0)}, w[1].options());
      auto [output, h, c, workspace] =
          at::mkldnn_rnn_layer(layer_input, w[0], w[1], b_ih, b_hh, hx[0][index], hx[1][index],
                               /*reverse=*/direction > 0, /*batch_sizes=*/{}, kLstmMode, hidden_size, num_layers,
                               has_biases, bidirectional, /*batch_first=*/false, /*train=*/true);
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
