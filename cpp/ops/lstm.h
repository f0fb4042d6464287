#pragma once
// One LSTM layer in one direction, as nn.LSTM's kernel (ops/lstm.cpp) composes them into
// layers and directions: PyTorch's gate order (input, forget, cell, output), no
// projections, the input sequence-first. Two implementations: PyTorch's own oneDNN layer
// called on the host inside the graph (the CPU device, ops/host_lstm.cpp) and a loop over
// the time steps lowered by XLA (every device, ops/lstm_loop.cpp).
#include <ATen/core/Tensor.h>

#include <tuple>

namespace torch_xla {

struct LstmLayerArgs {
  const at::Tensor& input;  // [steps, batch, input features]
  const at::Tensor& w_ih;   // [4 * hidden, input features]
  const at::Tensor& w_hh;   // [4 * hidden, hidden]
  const at::Tensor& b_ih;   // [4 * hidden]; undefined without biases
  const at::Tensor& b_hh;
  const at::Tensor& h0;  // [batch, hidden]
  const at::Tensor& c0;
  bool reverse;  // the layer's second direction: steps from last to first
};

// output [steps, batch, hidden], h_n, c_n [batch, hidden].
using LstmLayerResult = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

// Whether PyTorch's oneDNN layers take this LSTM on the host (as eager PyTorch would
// on the CPU): float32 XLA tensors on a device where host calls are available.
bool LstmOnHost(const at::Tensor& input, at::TensorList hx, at::TensorList params);
LstmLayerResult HostLstmLayer(const LstmLayerArgs& args, int64_t num_layers, bool bidirectional);

// Whether the loop lowering takes this LSTM: floating XLA tensors of one dtype (no
// Python subclasses, which PyTorch's composite dispatches to).
bool LstmLoopApplies(const at::Tensor& input, at::TensorList hx, at::TensorList params);
// `keep_for_backward`: whether autograd will differentiate the result, so that the loop
// keeps each step's gates and cell state for the backward loop.
LstmLayerResult LoopLstmLayer(const LstmLayerArgs& args, bool keep_for_backward);

}  // namespace torch_xla
