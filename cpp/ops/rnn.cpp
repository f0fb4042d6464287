// nn.LSTM, nn.GRU and nn.RNN on XLA tensors (aten::lstm.input, gru.input,
// rnn_tanh.input, rnn_relu.input, taken at their autograd key), one layer and direction
// at a time: PyTorch's oneDNN LSTM layers on the host where eager PyTorch would run them
// (the CPU device, float32), else a loop over the time steps that XLA lowers
// (ops/rnn_loop.cpp). Packed sequences (the .data overloads) take the loop too, on
// their padded form. What remains (projections, mixed dtypes) takes PyTorch's composite,
// which unrolls the steps into a few ops each.
//
// Why not the composite everywhere: it records every step's product, gate chunk and
// activations, forward and backward. A 2-layer LSTM language model over 32 steps traced
// ~1000 ops forward and as many backward (23 ms a step on the CPU), a 2-layer GRU over
// 32 steps 4,500 ops a training step, and the unrolled graphs ran one small product per
// step and weight, each repacking its weight matrix.
#include <ATen/ATen.h>
#include <ATen/ops/lstm_native.h>
#include <torch/library.h>

#include <vector>

#include "aten/bridge.h"
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
// `active`: packed sequences, padded (RnnLayerArgs::active).
std::optional<std::vector<at::Tensor>> RunLayers(const at::Tensor& input, at::TensorList hx, at::TensorList params,
                                                 const Config& k, const at::Tensor& active = {}) {
  if (!ShapesFit(input, hx, params, k)) return std::nullopt;
  const bool on_host = k.cell == RnnCell::kLstm && !active.defined() && LstmOnHost(input, hx, params);
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
                              h0, c0, /*reverse=*/direction > 0, active};
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
  return SingleStateComposite(kCell, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                              batch_first);
}

// A packed sequence ([sum of batch_sizes, features], the sequences' step t in rows
// sum(batch_sizes[:t]) ... , longest first) in its padded form.
struct Padded {
  at::Tensor input;   // [steps, batch, features]
  at::Tensor active;  // [steps, batch] bool: whether sequence b has step t
  at::Tensor rows;    // [sum of batch_sizes]: the padded row (t * batch + b) of each packed row
};

// Empty unless `batch_sizes` is a CPU int64 vector whose sizes are positive, not
// increasing and sum to the data's rows (else PyTorch's composite raises its errors).
std::optional<Padded> Pad(const at::Tensor& data, const at::Tensor& batch_sizes) {
  if (data.dim() != 2 || !IsXlaTensor(data) || batch_sizes.dim() != 1 || batch_sizes.numel() == 0 ||
      batch_sizes.device().type() != c10::DeviceType::CPU || batch_sizes.scalar_type() != at::kLong)
    return std::nullopt;
  at::Tensor sizes_cpu = batch_sizes.contiguous();
  const int64_t* sizes = sizes_cpu.data_ptr<int64_t>();
  const int64_t steps = sizes_cpu.numel(), batch = sizes[0];
  int64_t total = 0;
  for (int64_t t = 0; t < steps; ++t) {
    if (sizes[t] <= 0 || sizes[t] > (t == 0 ? batch : sizes[t - 1])) return std::nullopt;
    total += sizes[t];
  }
  if (total != data.size(0)) return std::nullopt;
  // The padded form gathers packed row `from[t * batch + b]`, or a zero row past the data.
  std::vector<int64_t> from(steps * batch, total), rows, active(steps * batch, 0);
  for (int64_t t = 0, offset = 0; t < steps; offset += sizes[t], ++t) {
    for (int64_t b = 0; b < sizes[t]; ++b) {
      from[t * batch + b] = offset + b;
      rows.push_back(t * batch + b);
      active[t * batch + b] = 1;
    }
  }
  const c10::Device device = data.device();
  auto to_device = [&](const std::vector<int64_t>& v) { return at::tensor(v, at::kLong).to(device); };
  at::Tensor with_zero_row = at::cat({data, at::zeros({1, data.size(1)}, data.options())}, 0);
  Padded p;
  p.input = with_zero_row.index_select(0, to_device(from)).view({steps, batch, data.size(1)});
  p.active = to_device(active).view({steps, batch}).to(at::kBool);
  p.rows = to_device(rows);
  return p;
}

// The packed overloads: the layers on the padded form, whose output is packed again.
std::optional<std::vector<at::Tensor>> RunPacked(const at::Tensor& data, const at::Tensor& batch_sizes,
                                                 at::TensorList hx, at::TensorList params, const Config& k) {
  std::optional<Padded> padded = Pad(data, batch_sizes);
  if (!padded) return std::nullopt;
  std::optional<std::vector<at::Tensor>> r = RunLayers(padded->input, hx, params, k, padded->active);
  if (r) {
    at::Tensor& output = (*r)[0];
    output = output.reshape({-1, output.size(2)}).index_select(0, padded->rows);
  }
  return r;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> LstmPacked(const at::Tensor& data, const at::Tensor& batch_sizes,
                                                          at::TensorList hx, at::TensorList params, bool has_biases,
                                                          int64_t num_layers, double dropout, bool train,
                                                          bool bidirectional) {
  const Config k{RnnCell::kLstm, has_biases, num_layers, dropout, train, bidirectional, /*batch_first=*/false};
  if (hx.size() == 2) {
    if (auto r = RunPacked(data, batch_sizes, hx, params, k)) return {(*r)[0], (*r)[1], (*r)[2]};
  }
  return at::native::lstm(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional);
}

template <RnnCell kCell>
std::tuple<at::Tensor, at::Tensor> SingleStatePacked(const at::Tensor& data, const at::Tensor& batch_sizes,
                                                     const at::Tensor& hx, at::TensorList params, bool has_biases,
                                                     int64_t num_layers, double dropout, bool train,
                                                     bool bidirectional) {
  const Config k{kCell, has_biases, num_layers, dropout, train, bidirectional, /*batch_first=*/false};
  if (auto r = RunPacked(data, batch_sizes, {hx}, params, k)) return {(*r)[0], (*r)[1]};
  return SingleStateComposite(kCell, data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
                              bidirectional);
}

TORCH_LIBRARY_IMPL(aten, AutogradXLA, m) {
  m.impl("lstm.input", TORCH_FN(Lstm));
  m.impl("gru.input", TORCH_FN(SingleStateRnn<RnnCell::kGru>));
  m.impl("rnn_tanh.input", TORCH_FN(SingleStateRnn<RnnCell::kRnnTanh>));
  m.impl("rnn_relu.input", TORCH_FN(SingleStateRnn<RnnCell::kRnnRelu>));
  m.impl("lstm.data", TORCH_FN(LstmPacked));
  m.impl("gru.data", TORCH_FN(SingleStatePacked<RnnCell::kGru>));
  m.impl("rnn_tanh.data", TORCH_FN(SingleStatePacked<RnnCell::kRnnTanh>));
  m.impl("rnn_relu.data", TORCH_FN(SingleStatePacked<RnnCell::kRnnRelu>));
}

}  // namespace
}  // namespace torch_xla
