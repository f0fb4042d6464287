// One LSTM layer as XLA computes it on any device: the input projections of all steps
// in one product, then a loop (stablehlo.while) over the steps for the recurrence; its
// backward (a C++ autograd function) is a loop over the steps in reverse that keeps
// each step's gate gradients, then one product each for the input's, the input
// weights' and the recurrent weights' gradients. This is the structure of cuDNN's and
// oneDNN's LSTM layers, where PyTorch's composite records a product, a chunk and four
// activations per step and direction, forward and backward, and the unrolled graph
// holds one small product per step and weight, and as many again in the backward.
//
// The loop counts from 0 to the number of steps, a constant, so XLA knows its trip
// count. Gates and cell states are computed in float32 for bfloat16 and float16
// (AccumulationType), as cuDNN does; the hidden state is rounded to the input's type
// where it feeds the next step's product.
#include <ATen/ATen.h>
#include <ATen/ops/lstm_native.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/autograd.h>

#include "ir/builder_indexing.h"
#include "ir/region.h"
#include "ops/kernel_util.h"
#include "ops/lstm.h"

namespace torch_xla {
namespace {

using ir::Value;
using runtime::ElementType;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

Value Index(int64_t i) { return ir::Constant(static_cast<double>(i), ir::Shape(ElementType::kS64, {})); }

// Row t of a [steps, batch, n] sequence, as [batch, n].
Value Row(const Value& seq, const Value& t) {
  const std::vector<int64_t>& d = seq.shape().dims;
  return ir::Reshape(ir::DynamicSlice(seq, {t, Index(0), Index(0)}, {1, d[1], d[2]}), {d[1], d[2]});
}

// seq with row t replaced by `row` ([batch, n]).
Value SetRow(const Value& seq, const Value& row, const Value& t) {
  const std::vector<int64_t>& d = row.shape().dims;
  return ir::DynamicUpdateSlice(seq, ir::Reshape(row, {1, d[0], d[1]}), {t, Index(0), Index(0)});
}

// Gate k (0 input, 1 forget, 2 cell, 3 output) of [batch, 4 * hidden] pre-activations or gates.
Value Gate(const Value& gates, int64_t k) {
  const int64_t batch = gates.shape().dims[0], hidden = gates.shape().dims[1] / 4;
  return ir::Slice(gates, {0, k * hidden}, {batch, (k + 1) * hidden}, {1, 1});
}

Value Sigmoid(const Value& v) { return ir::Unary(ir::op::kLogistic, v); }
Value Tanh(const Value& v) { return ir::Unary(ir::op::kTanh, v); }
Value OneMinus(const Value& v) { return Sub(ScalarLike(1, v), v); }

// The step of the loop counter i: i itself going forward, steps - 1 - i in reverse.
Value StepOf(const Value& i, int64_t steps, bool reverse) { return reverse ? Sub(Index(steps - 1), i) : i; }

// The states before each step, [steps, batch, hidden]: the initial state, then the
// states after each step but the last (in the direction of the layer).
Value PreviousStates(const Value& initial, const Value& states, bool reverse) {
  const std::vector<int64_t>& d = states.shape().dims;
  Value first = ir::Reshape(initial, {1, d[1], d[2]});
  if (d[0] == 1) return first;
  if (reverse) return ir::Concatenate({ir::Slice(states, {1, 0, 0}, d, {1, 1, 1}), first}, 0);
  return ir::Concatenate({first, ir::Slice(states, {0, 0, 0}, {d[0] - 1, d[1], d[2]}, {1, 1, 1})}, 0);
}

struct Forward {
  Value output, h, c;  // output in the input's type; c in the accumulation type
  Value gates, cells;  // each step's activated gates and cell state (with keep_for_backward)
};

// x [steps, batch, in], weights as given, h0 in x's type, c0 in the accumulation type.
Forward ForwardLoop(const Value& x, const Value& w_ih, const Value& w_hh, const Value* bias, const Value& h0,
                    const Value& c0, bool reverse, bool keep) {
  const ElementType type = x.shape().type, acc = AccumulationType(type);
  const int64_t steps = x.shape().dims[0], batch = x.shape().dims[1], hidden = h0.shape().dims[1];
  Value projected = ir::DotGeneral(x, w_ih, {}, {}, {2}, {1}, acc);  // [steps, batch, 4 * hidden]
  if (bias != nullptr) projected = Add(projected, ir::BroadcastInDim(*bias, projected.shape().dims, {2}));
  std::vector<Value> init = {Index(0), h0, c0, projected, w_hh, Full(0, type, {steps, batch, hidden})};
  if (keep) {
    init.push_back(Full(0, acc, {steps, batch, hidden}));
    init.push_back(Full(0, acc, {steps, batch, 4 * hidden}));
  }
  std::vector<Value> out = ir::While(
      init, [&](const std::vector<Value>& c) { return Cmp(ir::CompareDirection::kLt, c[0], Index(steps)); },
      [&](const std::vector<Value>& c) {
        const Value &i = c[0], &h = c[1], &cell = c[2], &proj = c[3], &w = c[4];
        Value t = StepOf(i, steps, reverse);
        Value pre = Add(Row(proj, t), ir::DotGeneral(h, w, {}, {}, {1}, {1}, acc));
        Value in = Sigmoid(Gate(pre, 0)), forget = Sigmoid(Gate(pre, 1)), g = Tanh(Gate(pre, 2)),
              o = Sigmoid(Gate(pre, 3));
        Value next_c = Add(Mul(forget, cell), Mul(in, g));
        Value next_h = ir::Convert(Mul(o, Tanh(next_c)), type);
        std::vector<Value> next = {Add(i, Index(1)), next_h, next_c, proj, w, SetRow(c[5], next_h, t)};
        if (keep) {
          next.push_back(SetRow(c[6], next_c, t));
          next.push_back(SetRow(c[7], ir::Concatenate({in, forget, g, o}, 1), t));
        }
        return next;
      });
  Forward f{out[5], out[1], out[2], {}, {}};
  if (keep) f.cells = out[6], f.gates = out[7];
  return f;
}

struct Backward {
  Value gate_grads;  // [steps, batch, 4 * hidden], gradients of the pre-activations
  Value dh0, dc0;    // in the accumulation type
};

// The reverse loop: from the gradients of the output sequence and the final states (all
// in the accumulation type), each step's pre-activation gradients and the initial
// states' gradients.
Backward BackwardLoop(const Value& d_output, const Value& dh, const Value& dc, const Value& gates, const Value& cells,
                      const Value& previous_cells, const Value& w_hh, bool reverse) {
  const ElementType type = w_hh.shape().type, acc = d_output.shape().type;
  const int64_t steps = gates.shape().dims[0];
  std::vector<Value> init = {Index(0), dh, dc, d_output, gates, cells, previous_cells, w_hh,
                             Full(0, acc, gates.shape().dims)};
  std::vector<Value> out = ir::While(
      init, [&](const std::vector<Value>& c) { return Cmp(ir::CompareDirection::kLt, c[0], Index(steps)); },
      [&](const std::vector<Value>& c) {
        const Value& i = c[0];
        // The forward's steps, last first.
        Value t = StepOf(i, steps, !reverse);
        Value dh_t = Add(c[1], Row(c[3], t));
        Value g_t = Row(c[4], t);
        Value in = Gate(g_t, 0), forget = Gate(g_t, 1), g = Gate(g_t, 2), o = Gate(g_t, 3);
        Value tanh_c = Tanh(Row(c[5], t));
        Value dc_t = Add(c[2], Mul(Mul(dh_t, o), OneMinus(Mul(tanh_c, tanh_c))));
        Value d_in = Mul(Mul(dc_t, g), Mul(in, OneMinus(in)));
        Value d_forget = Mul(Mul(dc_t, Row(c[6], t)), Mul(forget, OneMinus(forget)));
        Value d_g = Mul(Mul(dc_t, in), OneMinus(Mul(g, g)));
        Value d_o = Mul(Mul(dh_t, tanh_c), Mul(o, OneMinus(o)));
        Value d_pre = ir::Concatenate({d_in, d_forget, d_g, d_o}, 1);  // [batch, 4 * hidden]
        Value dh_prev = ir::DotGeneral(ir::Convert(d_pre, type), c[7], {}, {}, {1}, {0}, acc);
        return std::vector<Value>{Add(i, Index(1)), dh_prev, Mul(dc_t, forget), c[3], c[4], c[5], c[6], c[7],
                                  SetRow(c[8], d_pre, t)};
      });
  return Backward{out[8], out[1], out[2]};
}

at::Tensor ZerosOr(const at::Tensor& grad, const at::Tensor& like) {
  return grad.defined() ? grad : at::zeros_like(like);
}

// inputs: input, w_ih, w_hh, b_ih, b_hh, h0, c0 (without biases the weights stand in for
// them: autograd::Function takes defined tensors only; they get no gradient through there).
class LstmLoopLayer : public torch::autograd::Function<LstmLoopLayer> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& w_ih,
                               const at::Tensor& w_hh, const at::Tensor& b_ih, const at::Tensor& b_hh,
                               const at::Tensor& h0, const at::Tensor& c0, bool has_biases, bool reverse,
                               bool keep_for_backward) {
    IrInput x = GetIrInput(input, "lstm");
    const ElementType acc = AccumulationType(x.v.shape().type);
    std::optional<Value> bias;
    if (has_biases)
      bias = Add(ir::Convert(GetIrInput(b_ih, "lstm").v, acc), ir::Convert(GetIrInput(b_hh, "lstm").v, acc));
    Forward f = Checked("lstm", [&] {
      return ForwardLoop(x.v, GetIrInput(w_ih, "lstm").v, GetIrInput(w_hh, "lstm").v, bias ? &*bias : nullptr,
                         GetIrInput(h0, "lstm").v, ir::Convert(GetIrInput(c0, "lstm").v, acc), reverse,
                         keep_for_backward);
    });
    at::Tensor output = AtenFromIr(f.output, x.device);
    at::Tensor h = AtenFromIr(f.h, x.device);
    at::Tensor c = AtenFromIr(ir::Convert(f.c, x.v.shape().type), x.device);
    ctx->saved_data["has_biases"] = has_biases;
    ctx->saved_data["reverse"] = reverse;
    if (keep_for_backward) {
      ctx->save_for_backward({input, w_ih, w_hh, b_ih, b_hh, h0, c0, output});
      ctx->saved_data["gates"] = AtenFromIr(f.gates, x.device);
      ctx->saved_data["cells"] = AtenFromIr(f.cells, x.device);
    }
    return {output, h, c};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    TORCH_CHECK(!saved.empty(), "lstm: the layer was run without keeping what its backward needs "
                                "(no input required grad when it ran)");
    const bool has_biases = ctx->saved_data["has_biases"].toBool();
    const bool reverse = ctx->saved_data["reverse"].toBool();
    if (at::GradMode::is_enabled()) return DifferentiableBackward(ctx, saved, grads, has_biases, reverse);
    const at::Tensor &input = saved[0], &w_ih = saved[1], &w_hh = saved[2], &h0 = saved[5], &c0 = saved[6],
                     &output = saved[7];
    IrInput x = GetIrInput(input, "lstm_backward");
    const ElementType type = x.v.shape().type, acc = AccumulationType(type);
    auto grad_in = [&](const at::Tensor& g, const at::Tensor& like) {
      return ir::Convert(GetIrInput(ZerosOr(g, like), "lstm_backward").v, acc);
    };
    Value w_ih_v = GetIrInput(w_ih, "lstm_backward").v;
    Value h_prev = PreviousStates(GetIrInput(h0, "lstm_backward").v, GetIrInput(output, "lstm_backward").v, reverse);
    Value cells = GetIrInput(ctx->saved_data["cells"].toTensor(), "lstm_backward").v;
    Value c_prev = PreviousStates(ir::Convert(GetIrInput(c0, "lstm_backward").v, acc), cells, reverse);
    Backward b = Checked("lstm_backward", [&] {
      return BackwardLoop(grad_in(grads[0], output), grad_in(grads[1], h0), grad_in(grads[2], c0),
                          GetIrInput(ctx->saved_data["gates"].toTensor(), "lstm_backward").v, cells, c_prev,
                          GetIrInput(w_hh, "lstm_backward").v, reverse);
    });
    Value d_pre = ir::Convert(b.gate_grads, type);  // [steps, batch, 4 * hidden]
    auto out = [&](const Value& v) { return AtenFromIr(ir::Convert(v, type), x.device); };
    variable_list result(10);
    if (ctx->needs_input_grad(0)) result[0] = out(ir::DotGeneral(d_pre, w_ih_v, {}, {}, {2}, {0}, acc));
    if (ctx->needs_input_grad(1)) result[1] = out(ir::DotGeneral(d_pre, x.v, {}, {}, {0, 1}, {0, 1}, acc));
    if (ctx->needs_input_grad(2)) result[2] = out(ir::DotGeneral(d_pre, h_prev, {}, {}, {0, 1}, {0, 1}, acc));
    if (has_biases && (ctx->needs_input_grad(3) || ctx->needs_input_grad(4))) {
      at::Tensor d_bias = out(ir::Reduce(ir::ReduceKind::kSum, b.gate_grads, {0, 1}));
      if (ctx->needs_input_grad(3)) result[3] = d_bias;
      if (ctx->needs_input_grad(4)) result[4] = d_bias;
    }
    if (ctx->needs_input_grad(5)) result[5] = out(b.dh0);
    if (ctx->needs_input_grad(6)) result[6] = out(b.dc0);
    return result;
  }

 private:
  // A backward that autograd differentiates again (create_graph): PyTorch's composite
  // LSTM recomputed on the saved inputs, differentiated by autograd with a graph.
  static variable_list DifferentiableBackward(AutogradContext* ctx, const variable_list& saved,
                                              const variable_list& grads, bool has_biases, bool reverse) {
    const at::Tensor& input = saved[0];
    std::vector<at::Tensor> params = {saved[1], saved[2]};
    if (has_biases) params.insert(params.end(), {saved[3], saved[4]});
    at::Tensor x = reverse ? input.flip(0) : input;
    auto [y, h, c] = at::native::lstm(x, {saved[5].unsqueeze(0), saved[6].unsqueeze(0)}, params, has_biases, 1, 0.0,
                                      /*train=*/true, /*bidirectional=*/false, /*batch_first=*/false);
    if (reverse) y = y.flip(0);
    variable_list outputs = {y, h.squeeze(0), c.squeeze(0)};
    variable_list wrt;
    std::vector<int> slots;
    for (int k = 0; k < 7; ++k) {
      if (!ctx->needs_input_grad(k) || (!has_biases && (k == 3 || k == 4))) continue;
      wrt.push_back(saved[k]);
      slots.push_back(k);
    }
    variable_list result(10);
    if (wrt.empty()) return result;
    variable_list grad_outputs = {ZerosOr(grads[0], y), ZerosOr(grads[1], outputs[1]), ZerosOr(grads[2], outputs[2])};
    variable_list d = torch::autograd::grad(outputs, wrt, grad_outputs, /*retain_graph=*/true,
                                            /*create_graph=*/true, /*allow_unused=*/true);
    for (std::size_t j = 0; j < slots.size(); ++j) result[slots[j]] = d[j];
    return result;
  }
};

bool UsableXla(const at::Tensor& t, at::ScalarType dtype) {
  return t.defined() && IsXlaTensor(t) && t.scalar_type() == dtype && !t.key_set().has(c10::DispatchKey::Python);
}

}  // namespace

bool LstmLoopApplies(const at::Tensor& input, at::TensorList hx, at::TensorList params) {
  const at::ScalarType dtype = input.scalar_type();
  if (!at::isFloatingType(dtype) || !UsableXla(input, dtype)) return false;
  for (at::TensorList list : {hx, params})
    for (const at::Tensor& t : list)
      if (!UsableXla(t, dtype)) return false;
  return true;
}

LstmLayerResult LoopLstmLayer(const LstmLayerArgs& a, bool keep_for_backward) {
  XLA_COUNT("lstm");
  const bool has_biases = a.b_ih.defined();
  variable_list out = LstmLoopLayer::apply(a.input, a.w_ih, a.w_hh, has_biases ? a.b_ih : a.w_ih,
                                           has_biases ? a.b_hh : a.w_hh, a.h0, a.c0, has_biases, a.reverse,
                                           keep_for_backward);
  return {out[0], out[1], out[2]};
}

}  // namespace torch_xla
