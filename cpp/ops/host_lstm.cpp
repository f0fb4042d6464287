// One LSTM layer on the CPU device by PyTorch's CPU (oneDNN) LSTM kernel, called on the
// host inside the compiled graph (host ATen calls, host/aten_ops.cpp): what eager PyTorch
// runs on the CPU for each layer and direction (mkldnn_rnn_layer, whose autograd formula
// is mkldnn_rnn_layer_backward), so the graph holds one host call per layer and
// direction, forward and backward, and the results are eager's. The checks follow
// PyTorch's CPU path (aten/native/mkldnn/RNN.cpp): inputs eager itself would not run
// through oneDNN (other dtypes, oneDNN switched off) take the loop (ops/rnn_loop.cpp).
// The layers always run oneDNN's training form, which also keeps the workspace its
// backward reads: the graph's shapes must not depend on grad mode at run time. Its
// values equal the inference form's.
#include <ATen/ATen.h>
#include <ATen/ops/mkldnn_rnn_layer.h>

#include "aten/bridge.h"
#include "host/aten_ops.h"
#include "ops/rnn.h"

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

}  // namespace

bool LstmOnHost(const at::Tensor& input, at::TensorList hx, at::TensorList params) {
  return at::globalContext().userEnabledMkldnn() && AllFloatXla({input}) && AllFloatXla(hx) &&
         AllFloatXla(params) && host::HostAtenAvailable();
}

RnnLayerResult HostLstmLayer(const RnnLayerArgs& a, int64_t num_layers, bool bidirectional) {
  const bool has_biases = a.b_ih.defined();
  at::Tensor b_ih = has_biases ? a.b_ih : at::zeros({a.w_ih.size(0)}, a.w_ih.options());
  at::Tensor b_hh = has_biases ? a.b_hh : at::zeros({a.w_hh.size(0)}, a.w_hh.options());
  auto [output, h, c, workspace] =
      at::mkldnn_rnn_layer(a.input, a.w_ih, a.w_hh, b_ih, b_hh, a.h0, a.c0, a.reverse, /*batch_sizes=*/{},
                           kLstmMode, a.h0.size(-1), num_layers, has_biases, bidirectional,
                           /*batch_first=*/false, /*train=*/true);
  return {output, h, c};
}

}  // namespace torch_xla
