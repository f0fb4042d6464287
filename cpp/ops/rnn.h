#pragma once
// One layer of a recurrent network (nn.LSTM, nn.GRU, nn.RNN) in one direction, as their
// kernels (ops/rnn.cpp) compose them into layers and directions: PyTorch's gate order,
// no projections, the input sequence-first. Two implementations: PyTorch's own oneDNN
// LSTM layer called on the host inside the graph (the CPU device, ops/host_lstm.cpp) and
// a loop over the time steps lowered by XLA (every device and cell, ops/rnn_loop.cpp).
#include <ATen/core/Tensor.h>
#include <ATen/ops/gru_native.h>
#include <ATen/ops/rnn_relu_native.h>
#include <ATen/ops/rnn_tanh_native.h>

#include <tuple>

namespace torch_xla {

enum class RnnCell {
  kLstm,     // gates (input, forget, cell, output); states h and c
  kGru,      // gates (reset, update, new); state h
  kRnnTanh,  // h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)
  kRnnRelu,  // the same with relu
};

// Gates per hidden unit: the rows of w_ih and w_hh are gates * hidden.
int64_t GateCount(RnnCell cell);

// PyTorch's composite of a single-state cell (GRU, tanh or relu RNN) on the arguments of
// either of its overloads (a padded input, or packed data and its batch sizes): what
// runs where the loop does not.
template <typename... Args>
std::tuple<at::Tensor, at::Tensor> SingleStateComposite(RnnCell cell, const Args&... args) {
  switch (cell) {
    case RnnCell::kGru: return at::native::gru(args...);
    case RnnCell::kRnnTanh: return at::native::rnn_tanh(args...);
    default: return at::native::rnn_relu(args...);
  }
}

struct RnnLayerArgs {
  const at::Tensor& input;  // [steps, batch, input features]
  const at::Tensor& w_ih;   // [gates * hidden, input features]
  const at::Tensor& w_hh;   // [gates * hidden, hidden]
  const at::Tensor& b_ih;   // [gates * hidden]; undefined without biases
  const at::Tensor& b_hh;
  const at::Tensor& h0;  // [batch, hidden]
  const at::Tensor& c0;  // LSTM only; undefined for the others
  bool reverse;          // the layer's second direction: steps from last to first
  // Packed sequences: [steps, batch] bool, where each sequence has a step (the input is
  // padded). A sequence's states stay as they are over the steps it lacks. Undefined for
  // a full batch.
  const at::Tensor& active;
};

// output [steps, batch, hidden], h_n, c_n [batch, hidden] (c_n undefined but for LSTM).
using RnnLayerResult = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

// Whether PyTorch's oneDNN layers take this LSTM on the host (as eager PyTorch would
// on the CPU): float32 XLA tensors on a device where host calls are available.
bool LstmOnHost(const at::Tensor& input, at::TensorList hx, at::TensorList params);
RnnLayerResult HostLstmLayer(const RnnLayerArgs& args, int64_t num_layers, bool bidirectional);

// Whether the loop lowering takes these tensors: floating XLA tensors of one dtype (no
// Python subclasses, which PyTorch's composite dispatches to).
bool RnnLoopApplies(const at::Tensor& input, at::TensorList hx, at::TensorList params);
// `keep_for_backward`: whether autograd will differentiate the result, so that the loop
// keeps what the backward loop reads of each step (gates, cell states).
RnnLayerResult LoopRnnLayer(RnnCell cell, const RnnLayerArgs& args, bool keep_for_backward);

}  // namespace torch_xla
