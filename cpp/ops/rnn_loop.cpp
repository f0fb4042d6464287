// One recurrent layer (LSTM, GRU, or a tanh/relu RNN) as XLA computes it on any device:
// the input projections of all steps in one product, then a loop (stablehlo.while) over
// the steps for the recurrence; its backward (a C++ autograd function) is a loop over
// the steps in reverse that keeps each step's gate gradients, then one product each for
// the input's, the input weights' and the recurrent weights' gradients. This is the
// structure of cuDNN's and oneDNN's layers, where PyTorch's composite records a product,
// a chunk and the activations per step and direction, forward and backward, and the
// unrolled graph holds one small product per step and weight, and as many again in the
// backward.
//
// The loops count from 0 to the number of steps, a constant, so XLA knows their trip
// count. Gates and cell states are computed in float32 for bfloat16 and float16
// (AccumulationType), as cuDNN does; the hidden state is rounded to the input's type
// where it feeds the next step's product.
#include <ATen/ATen.h>
#include <ATen/ops/lstm_native.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include "ir/builder_indexing.h"
#include "ir/region.h"
#include "ops/kernel_util.h"
#include "ops/rnn.h"

namespace torch_xla {

int64_t GateCount(RnnCell cell) {
  switch (cell) {
    case RnnCell::kLstm: return 4;
    case RnnCell::kGru: return 3;
    default: return 1;
  }
}

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

// Column block k of `width` columns of a [batch, n * width] value.
Value Block(const Value& v, int64_t k, int64_t width) {
  return ir::Slice(v, {0, k * width}, {v.shape().dims[0], (k + 1) * width}, {1, 1});
}

Value Sigmoid(const Value& v) { return ir::Unary(ir::op::kLogistic, v); }
Value Tanh(const Value& v) { return ir::Unary(ir::op::kTanh, v); }
Value Relu(const Value& v) { return ir::Binary(ir::op::kMaximum, v, ScalarLike(0, v)); }
Value OneMinus(const Value& v) { return Sub(ScalarLike(1, v), v); }
// d/dx of sigmoid and tanh, from their values.
Value SigmoidSlope(const Value& s) { return Mul(s, OneMinus(s)); }
Value TanhSlope(const Value& t) { return OneMinus(Mul(t, t)); }
// x W^T for x [batch, in] and W [out, in].
Value TimesTransposed(const Value& x, const Value& w, ElementType type) {
  return ir::DotGeneral(x, w, {}, {}, {1}, {1}, type);
}

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

Value Below(const Value& i, int64_t steps) { return Cmp(ir::CompareDirection::kLt, i, Index(steps)); }

// Packed sequences: whether each sequence has step t (row t of the [steps, batch] mask),
// broadcast over `width` columns: [batch, width].
Value ActiveAt(const Value& active, const Value& t, int64_t width) {
  const int64_t batch = active.shape().dims[1];
  Value row = ir::Reshape(ir::DynamicSlice(active, {t, Index(0)}, {1, batch}), {batch});
  return ir::BroadcastInDim(row, {batch, width}, {0});
}

// A loop's carried values by name: slots are added before the loop, read and replaced in
// its body.
struct Carried {
  std::vector<Value> values;
  int Add(const Value& v) {
    values.push_back(v);
    return static_cast<int>(values.size()) - 1;
  }
};

// Columns each cell keeps of a step for its backward ([steps, batch, columns * hidden]):
// LSTM its four activated gates, GRU r, z, n and the recurrent part of n's
// pre-activation (h W_hn^T + b_hn); the plain RNNs read their output instead.
int64_t KeptColumns(RnnCell cell) { return cell == RnnCell::kLstm || cell == RnnCell::kGru ? 4 : 0; }

struct Forward {
  Value output, h, c;  // output and h in the input's type; c (LSTM) in the accumulation type
  Value kept, cells;   // with keep_for_backward: KeptColumns per step; LSTM's cell states
};

struct Weights {
  Value w_ih, w_hh;
  std::optional<Value> b_ih, b_hh;  // in the accumulation type
};

// `active` (packed sequences, [steps, batch] pred): the steps each sequence has; over
// the others its states stay as they are, and so does what the output and the kept cell
// states record (the backward reads the states before each step from them).
Forward ForwardLoop(RnnCell cell, const Value& x, const Weights& w, const Value& h0, const std::optional<Value>& c0,
                    bool reverse, bool keep, const std::optional<Value>& active) {
  const ElementType type = x.shape().type, acc = AccumulationType(type);
  const int64_t steps = x.shape().dims[0], batch = x.shape().dims[1], hidden = h0.shape().dims[1];
  const bool lstm = cell == RnnCell::kLstm, gru = cell == RnnCell::kGru;
  // Every step's input projection in one product; the biases there too, except GRU's
  // recurrent one, which the reset gate scales inside the step.
  Value projected = ir::DotGeneral(x, w.w_ih, {}, {}, {2}, {1}, acc);  // [steps, batch, gates * hidden]
  const std::vector<int64_t> dims = projected.shape().dims;
  if (w.b_ih) projected = Add(projected, ir::BroadcastInDim(*w.b_ih, dims, {2}));
  if (w.b_hh && !gru) projected = Add(projected, ir::BroadcastInDim(*w.b_hh, dims, {2}));
  Carried c;
  const int i_slot = c.Add(Index(0)), h_slot = c.Add(h0), proj_slot = c.Add(projected), w_slot = c.Add(w.w_hh);
  const int out_slot = c.Add(Full(0, type, {steps, batch, hidden}));
  const int c_slot = lstm ? c.Add(*c0) : -1;
  const int b_slot = gru ? c.Add(w.b_hh ? *w.b_hh : Full(0, acc, {3 * hidden})) : -1;
  const int kept_slot = keep && KeptColumns(cell) > 0 ? c.Add(Full(0, acc, {steps, batch, 4 * hidden})) : -1;
  const int cells_slot = keep && lstm ? c.Add(Full(0, acc, {steps, batch, hidden})) : -1;
  const int active_slot = active ? c.Add(*active) : -1;
  std::vector<Value> out = ir::While(
      c.values, [&](const std::vector<Value>& v) { return Below(v[i_slot], steps); },
      [&](const std::vector<Value>& v) {
        std::vector<Value> next = v;
        const Value& i = v[i_slot];
        Value t = StepOf(i, steps, reverse);
        Value input_part = Row(v[proj_slot], t), recurrent = TimesTransposed(v[h_slot], v[w_slot], acc);
        std::optional<Value> on;  // packed: where the sequence has this step
        if (active) on = ActiveAt(v[active_slot], t, hidden);
        Value h_acc;
        switch (cell) {
          case RnnCell::kLstm: {
            Value pre = Add(input_part, recurrent);
            Value in = Sigmoid(Block(pre, 0, hidden)), forget = Sigmoid(Block(pre, 1, hidden)),
                  g = Tanh(Block(pre, 2, hidden)), o = Sigmoid(Block(pre, 3, hidden));
            Value next_c = Add(Mul(forget, v[c_slot]), Mul(in, g));
            h_acc = Mul(o, Tanh(next_c));
            if (on) next_c = ir::Select(*on, next_c, v[c_slot]);
            next[c_slot] = next_c;
            if (keep) {
              next[kept_slot] = SetRow(v[kept_slot], ir::Concatenate({in, forget, g, o}, 1), t);
              next[cells_slot] = SetRow(v[cells_slot], next_c, t);
            }
            break;
          }
          case RnnCell::kGru: {
            recurrent = Add(recurrent, ir::BroadcastInDim(v[b_slot], recurrent.shape().dims, {1}));
            Value r = Sigmoid(Add(Block(input_part, 0, hidden), Block(recurrent, 0, hidden)));
            Value z = Sigmoid(Add(Block(input_part, 1, hidden), Block(recurrent, 1, hidden)));
            Value hn = Block(recurrent, 2, hidden);
            Value n = Tanh(Add(Block(input_part, 2, hidden), Mul(r, hn)));
            h_acc = Add(Mul(OneMinus(z), n), Mul(z, ir::Convert(v[h_slot], acc)));
            if (keep) next[kept_slot] = SetRow(v[kept_slot], ir::Concatenate({r, z, n, hn}, 1), t);
            break;
          }
          case RnnCell::kRnnTanh: h_acc = Tanh(Add(input_part, recurrent)); break;
          case RnnCell::kRnnRelu: h_acc = Relu(Add(input_part, recurrent)); break;
        }
        Value next_h = ir::Convert(h_acc, type);
        if (on) next_h = ir::Select(*on, next_h, v[h_slot]);
        next[i_slot] = Add(i, Index(1));
        next[h_slot] = next_h;
        next[out_slot] = SetRow(v[out_slot], next_h, t);
        return next;
      });
  Forward f{out[out_slot], out[h_slot], lstm ? out[c_slot] : Value(), {}, {}};
  if (kept_slot >= 0) f.kept = out[kept_slot];
  if (cells_slot >= 0) f.cells = out[cells_slot];
  return f;
}

struct BackwardIn {
  Value d_output, dh, dc;     // accumulation type; dc for LSTM only
  Value output, kept, cells;  // the forward's (output in the input's type)
  Value previous_h;           // [steps, batch, hidden], accumulation type (GRU)
  Value previous_c;           // (LSTM)
  Value w_hh;
  std::optional<Value> active;  // packed sequences (ForwardLoop)
};

struct Backward {
  // [steps, batch, gates * hidden]: gradients of the input projections' and of the
  // recurrent products' pre-activations (the same but for GRU's new gate).
  Value d_input_part, d_recurrent;
  Value dh0, dc0;  // accumulation type
};

// The reverse loop: from the gradients of the output sequence and the final states,
// each step's pre-activation gradients and the initial states' gradients.
Backward BackwardLoop(RnnCell cell, const BackwardIn& in, bool reverse) {
  const ElementType type = in.w_hh.shape().type, acc = in.d_output.shape().type;
  const int64_t steps = in.d_output.shape().dims[0], batch = in.d_output.shape().dims[1];
  const int64_t hidden = in.d_output.shape().dims[2], gates = GateCount(cell);
  const bool lstm = cell == RnnCell::kLstm, gru = cell == RnnCell::kGru;
  Carried c;
  const int i_slot = c.Add(Index(0)), dh_slot = c.Add(in.dh), dout_slot = c.Add(in.d_output),
            w_slot = c.Add(in.w_hh);
  const int grads_slot = c.Add(Full(0, acc, {steps, batch, gates * hidden}));
  const int out_slot = gru ? -1 : c.Add(in.output);
  const int kept_slot = KeptColumns(cell) > 0 ? c.Add(in.kept) : -1;
  const int dc_slot = lstm ? c.Add(in.dc) : -1;
  const int cells_slot = lstm ? c.Add(in.cells) : -1;
  const int prev_c_slot = lstm ? c.Add(in.previous_c) : -1;
  const int prev_h_slot = gru ? c.Add(in.previous_h) : -1;
  const int grads_n_slot = gru ? c.Add(Full(0, acc, {steps, batch, hidden})) : -1;
  const int active_slot = in.active ? c.Add(*in.active) : -1;
  std::vector<Value> out = ir::While(
      c.values, [&](const std::vector<Value>& v) { return Below(v[i_slot], steps); },
      [&](const std::vector<Value>& v) {
        std::vector<Value> next = v;
        const Value& i = v[i_slot];
        Value t = StepOf(i, steps, !reverse);  // the forward's steps, last first
        Value dh = Add(v[dh_slot], Row(v[dout_slot], t));
        std::optional<Value> on;  // packed: where the sequence has this step
        if (in.active) on = ActiveAt(v[active_slot], t, hidden);
        Value d_pre;                              // [batch, gates * hidden]
        std::optional<Value> dh_direct;           // what reaches h_prev other than through W_hh
        switch (cell) {
          case RnnCell::kLstm: {
            Value g_t = Row(v[kept_slot], t);
            Value in_g = Block(g_t, 0, hidden), forget = Block(g_t, 1, hidden), g = Block(g_t, 2, hidden),
                  o = Block(g_t, 3, hidden);
            Value tanh_c = Tanh(Row(v[cells_slot], t));
            Value dc = Add(v[dc_slot], Mul(Mul(dh, o), TanhSlope(tanh_c)));
            d_pre = ir::Concatenate({Mul(Mul(dc, g), SigmoidSlope(in_g)),
                                     Mul(Mul(dc, Row(v[prev_c_slot], t)), SigmoidSlope(forget)),
                                     Mul(Mul(dc, in_g), TanhSlope(g)), Mul(Mul(dh, tanh_c), SigmoidSlope(o))},
                                    1);
            next[dc_slot] = on ? ir::Select(*on, Mul(dc, forget), v[dc_slot]) : Mul(dc, forget);
            break;
          }
          case RnnCell::kGru: {
            Value k_t = Row(v[kept_slot], t);
            Value r = Block(k_t, 0, hidden), z = Block(k_t, 1, hidden), n = Block(k_t, 2, hidden),
                  hn = Block(k_t, 3, hidden);
            Value d_n = Mul(Mul(dh, OneMinus(z)), TanhSlope(n));
            Value d_r = Mul(Mul(d_n, hn), SigmoidSlope(r));
            Value d_z = Mul(Mul(dh, Sub(Row(v[prev_h_slot], t), n)), SigmoidSlope(z));
            // The recurrent product's gradient: n's part is scaled by r.
            d_pre = ir::Concatenate({d_r, d_z, Mul(d_n, r)}, 1);
            if (on) d_n = ir::Select(*on, d_n, ScalarLike(0, d_n));
            next[grads_n_slot] = SetRow(v[grads_n_slot], d_n, t);
            dh_direct = Mul(dh, z);
            break;
          }
          case RnnCell::kRnnTanh:
            d_pre = Mul(dh, TanhSlope(ir::Convert(Row(v[out_slot], t), acc)));
            break;
          case RnnCell::kRnnRelu: {
            Value h_t = Row(v[out_slot], t);
            d_pre = ir::Select(Cmp(ir::CompareDirection::kGt, h_t, ScalarLike(0, h_t)), dh, ScalarLike(0, dh));
            break;
          }
        }
        // A step a sequence lacks passes its state's gradients through unchanged.
        if (on) d_pre = ir::Select(ActiveAt(v[active_slot], t, gates * hidden), d_pre, ScalarLike(0, d_pre));
        Value dh_prev = ir::DotGeneral(ir::Convert(d_pre, type), v[w_slot], {}, {}, {1}, {0}, acc);
        if (dh_direct) dh_prev = Add(dh_prev, *dh_direct);
        if (on) dh_prev = ir::Select(*on, dh_prev, dh);
        next[i_slot] = Add(i, Index(1));
        next[dh_slot] = dh_prev;
        next[grads_slot] = SetRow(v[grads_slot], d_pre, t);
        return next;
      });
  Backward b{out[grads_slot], out[grads_slot], out[dh_slot], lstm ? out[dc_slot] : Value()};
  if (gru) {
    // The input projection's gradient: the same for r and z; n's is unscaled by r.
    const std::vector<int64_t>& d = b.d_recurrent.shape().dims;
    b.d_input_part = ir::Concatenate(
        {ir::Slice(b.d_recurrent, {0, 0, 0}, {d[0], d[1], 2 * hidden}, {1, 1, 1}), out[grads_n_slot]}, 2);
  }
  return b;
}

at::Tensor ZerosOr(const at::Tensor& grad, const at::Tensor& like) {
  return grad.defined() ? grad : at::zeros_like(like);
}

const char* CellName(RnnCell cell) {
  switch (cell) {
    case RnnCell::kLstm: return "lstm";
    case RnnCell::kGru: return "gru";
    case RnnCell::kRnnTanh: return "rnn_tanh";
    default: return "rnn_relu";
  }
}

// PyTorch's composite for one layer and direction of `cell`: (output, h_n, c_n).
variable_list CompositeLayer(RnnCell cell, const at::Tensor& x, const at::Tensor& h0, const at::Tensor& c0,
                             at::TensorList params, bool has_biases) {
  const at::Tensor h = h0.unsqueeze(0);
  const int64_t layers = 1;
  const double dropout = 0.0;
  const bool train = true, bidirectional = false, batch_first = false;
  if (cell == RnnCell::kLstm) {
    auto [y, hn, cn] = at::native::lstm(x, {h, c0.unsqueeze(0)}, params, has_biases, layers, dropout, train,
                                        bidirectional, batch_first);
    return {y, hn.squeeze(0), cn.squeeze(0)};
  }
  auto [y, hn] = SingleStateComposite(cell, x, h, params, has_biases, layers, dropout, train, bidirectional,
                                      batch_first);
  return {y, hn.squeeze(0), at::Tensor()};
}

// inputs: input, w_ih, w_hh, b_ih, b_hh, h0, c0, active. autograd::Function takes defined
// tensors only: without biases the weights stand in for them, h0 for c0 but in an LSTM
// and for `active` but for packed sequences; they get no gradient through there.
// Outputs: output, h_n, c_n (h_n again but in an LSTM).
class RnnLoopLayer : public torch::autograd::Function<RnnLoopLayer> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& w_ih,
                               const at::Tensor& w_hh, const at::Tensor& b_ih, const at::Tensor& b_hh,
                               const at::Tensor& h0, const at::Tensor& c0, const at::Tensor& active,
                               int64_t cell_code, bool has_biases, bool reverse, bool packed,
                               bool keep_for_backward) {
    const RnnCell cell = static_cast<RnnCell>(cell_code);
    const char* op = CellName(cell);
    const bool lstm = cell == RnnCell::kLstm;
    IrInput x = GetIrInput(input, op);
    const ElementType type = x.v.shape().type, acc = AccumulationType(type);
    Weights w{GetIrInput(w_ih, op).v, GetIrInput(w_hh, op).v, {}, {}};
    if (has_biases) {
      w.b_ih = ir::Convert(GetIrInput(b_ih, op).v, acc);
      w.b_hh = ir::Convert(GetIrInput(b_hh, op).v, acc);
    }
    std::optional<Value> c0_v, active_v;
    if (lstm) c0_v = ir::Convert(GetIrInput(c0, op).v, acc);
    if (packed) active_v = GetIrInput(active, op).v;
    Forward f = Checked(op, [&] {
      return ForwardLoop(cell, x.v, w, GetIrInput(h0, op).v, c0_v, reverse, keep_for_backward, active_v);
    });
    at::Tensor output = AtenFromIr(f.output, x.device);
    at::Tensor h = AtenFromIr(f.h, x.device);
    // Without a cell state the third output repeats h_n, as a tensor of its own.
    at::Tensor c = AtenFromIr(lstm ? ir::Convert(f.c, type) : f.h, x.device);
    if (!lstm) ctx->mark_non_differentiable({c});
    ctx->saved_data["cell"] = cell_code;
    ctx->saved_data["has_biases"] = has_biases;
    ctx->saved_data["reverse"] = reverse;
    if (packed) ctx->saved_data["active"] = active;
    if (keep_for_backward) {
      ctx->save_for_backward({input, w_ih, w_hh, b_ih, b_hh, h0, c0, output});
      if (f.kept.node) ctx->saved_data["kept"] = AtenFromIr(f.kept, x.device);
      if (f.cells.node) ctx->saved_data["cells"] = AtenFromIr(f.cells, x.device);
    }
    return {output, h, c};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    const RnnCell cell = static_cast<RnnCell>(ctx->saved_data["cell"].toInt());
    const char* op = CellName(cell);
    TORCH_CHECK(!saved.empty(), op, ": the layer ran without keeping what its backward needs "
                                    "(no input required grad when it ran)");
    const bool has_biases = ctx->saved_data["has_biases"].toBool();
    const bool reverse = ctx->saved_data["reverse"].toBool();
    const bool packed = ctx->saved_data.count("active") != 0;
    if (at::GradMode::is_enabled()) {
      TORCH_CHECK(!packed, op, ": a backward through packed sequences that is differentiated again (create_graph) "
                               "is not supported on XLA devices; pad the sequences instead");
      return DifferentiableBackward(ctx, cell, saved, grads, has_biases, reverse);
    }
    const bool lstm = cell == RnnCell::kLstm;
    const at::Tensor &input = saved[0], &w_ih = saved[1], &w_hh = saved[2], &h0 = saved[5], &c0 = saved[6],
                     &output = saved[7];
    IrInput x = GetIrInput(input, op);
    const ElementType type = x.v.shape().type, acc = AccumulationType(type);
    auto ir_of = [&](const at::Tensor& t) { return GetIrInput(t, op).v; };
    auto grad_in = [&](const at::Tensor& g, const at::Tensor& like) { return ir::Convert(ir_of(ZerosOr(g, like)), acc); };
    BackwardIn in;
    in.d_output = grad_in(grads[0], output);
    in.dh = grad_in(grads[1], h0);
    in.output = ir_of(output);
    in.w_hh = ir_of(w_hh);
    if (packed) in.active = ir_of(ctx->saved_data["active"].toTensor());
    if (ctx->saved_data.count("kept")) in.kept = ir_of(ctx->saved_data["kept"].toTensor());
    Value h_prev = PreviousStates(ir_of(h0), in.output, reverse);  // input's type
    if (cell == RnnCell::kGru) in.previous_h = ir::Convert(h_prev, acc);
    if (lstm) {
      in.dc = grad_in(grads[2], c0);
      in.cells = ir_of(ctx->saved_data["cells"].toTensor());
      in.previous_c = PreviousStates(ir::Convert(ir_of(c0), acc), in.cells, reverse);
    }
    Backward b = Checked(op, [&] { return BackwardLoop(cell, in, reverse); });
    Value d_input_part = ir::Convert(b.d_input_part, type), d_recurrent = ir::Convert(b.d_recurrent, type);
    auto out = [&](const Value& v) { return AtenFromIr(ir::Convert(v, type), x.device); };
    variable_list result(13);
    if (ctx->needs_input_grad(0))
      result[0] = out(ir::DotGeneral(d_input_part, ir_of(w_ih), {}, {}, {2}, {0}, acc));
    if (ctx->needs_input_grad(1)) result[1] = out(ir::DotGeneral(d_input_part, x.v, {}, {}, {0, 1}, {0, 1}, acc));
    if (ctx->needs_input_grad(2)) result[2] = out(ir::DotGeneral(d_recurrent, h_prev, {}, {}, {0, 1}, {0, 1}, acc));
    if (has_biases && ctx->needs_input_grad(3)) result[3] = out(ir::Reduce(ir::ReduceKind::kSum, b.d_input_part, {0, 1}));
    if (has_biases && ctx->needs_input_grad(4)) result[4] = out(ir::Reduce(ir::ReduceKind::kSum, b.d_recurrent, {0, 1}));
    if (ctx->needs_input_grad(5)) result[5] = out(b.dh0);
    if (lstm && ctx->needs_input_grad(6)) result[6] = out(b.dc0);
    return result;
  }

 private:
  // A backward that autograd differentiates again (create_graph): PyTorch's composite
  // recomputed on the saved inputs, differentiated by autograd with a graph.
  static variable_list DifferentiableBackward(AutogradContext* ctx, RnnCell cell, const variable_list& saved,
                                              const variable_list& grads, bool has_biases, bool reverse) {
    const bool lstm = cell == RnnCell::kLstm;
    std::vector<at::Tensor> params = {saved[1], saved[2]};
    if (has_biases) params.insert(params.end(), {saved[3], saved[4]});
    at::Tensor x = reverse ? saved[0].flip(0) : saved[0];
    variable_list outputs = CompositeLayer(cell, x, saved[5], saved[6], params, has_biases);
    if (reverse) outputs[0] = outputs[0].flip(0);
    if (!lstm) outputs.pop_back();
    variable_list wrt, grad_outputs;
    std::vector<int> slots;
    for (int k = 0; k < 7; ++k) {
      if (!ctx->needs_input_grad(k) || (!has_biases && (k == 3 || k == 4)) || (!lstm && k == 6)) continue;
      wrt.push_back(saved[k]);
      slots.push_back(k);
    }
    variable_list result(13);
    if (wrt.empty()) return result;
    for (std::size_t k = 0; k < outputs.size(); ++k) grad_outputs.push_back(ZerosOr(grads[k], outputs[k]));
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

bool RnnLoopApplies(const at::Tensor& input, at::TensorList hx, at::TensorList params) {
  const at::ScalarType dtype = input.scalar_type();
  if (!at::isFloatingType(dtype) || !UsableXla(input, dtype)) return false;
  for (at::TensorList list : {hx, params})
    for (const at::Tensor& t : list)
      if (!UsableXla(t, dtype)) return false;
  return true;
}

RnnLayerResult LoopRnnLayer(RnnCell cell, const RnnLayerArgs& a, bool keep_for_backward) {
  // XLA_COUNT's counter and tracing timer, with the counter named by the cell.
  static metrics::Counter* const counters[] = {metrics::GetCounter("xla::lstm"), metrics::GetCounter("xla::gru"),
                                               metrics::GetCounter("xla::rnn_tanh"),
                                               metrics::GetCounter("xla::rnn_relu")};
  counters[static_cast<int>(cell)]->Add();
  metrics::TracingTimer tracing;
  const bool has_biases = a.b_ih.defined();
  const bool packed = a.active.defined();
  variable_list out = RnnLoopLayer::apply(a.input, a.w_ih, a.w_hh, has_biases ? a.b_ih : a.w_ih,
                                          has_biases ? a.b_hh : a.w_hh, a.h0, a.c0.defined() ? a.c0 : a.h0,
                                          packed ? a.active : a.h0, static_cast<int64_t>(cell), has_biases,
                                          a.reverse, packed, keep_for_backward);
  return {out[0], out[1], cell == RnnCell::kLstm ? out[2] : at::Tensor()};
}

}  // namespace torch_xla
