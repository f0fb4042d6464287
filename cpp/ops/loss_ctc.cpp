// The connectionist temporal classification loss (_ctc_loss) and its backward, by the
// forward-backward recursions of PyTorch's CPU kernel (see below). Low-precision inputs
// compute in f32 and round at the end.
#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Shape;
using ir::Value;
using runtime::ElementType;

}  // namespace

// ---- ctc_loss ---------------------------------------------------------------------------------
// The CTC forward (alpha) recursion of Graves et al. over the extended target l' (blanks
// around and between the labels, length 2 S + 1), as PyTorch's CPU kernel:
//   alpha[0][0] = lp[0][blank], alpha[0][1] = lp[0][l'1]
//   alpha[t][s] = logsumexp(alpha[t-1][s], alpha[t-1][s-1], alpha[t-1][s-2] if l's != l's-2)
//                 + lp[t][l's]
//   nll = -logsumexp(alpha[T-1][2S], alpha[T-1][2S-1])
// The lengths are host integers, so the loop over time unrolls into the graph (max input
// length steps of element-wise work on [batch, 2 S + 1]); each sample's alpha stops changing
// after its own input length. log_alpha (for the backward) is -inf outside each sample's
// input length and extended target (PyTorch leaves those entries uninitialized).
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// A host integer per sample as a [N] s64 value.
Value HostInts(const std::vector<int64_t>& values) {
  std::vector<Value> parts;
  for (int64_t v : values) parts.push_back(ir::Constant(static_cast<double>(v), Shape(ElementType::kS64, {1})));
  return parts.size() == 1 ? parts[0] : ir::Concatenate(parts, 0);
}

// logsumexp of values of equal shape, -inf when all are -inf.
Value LogSumExp(const std::vector<Value>& v) {
  Value m = v[0];
  for (size_t i = 1; i < v.size(); ++i) m = ir::Binary(ir::op::kMaximum, m, v[i]);
  m = ir::Select(ir::Compare(CompareDirection::kEq, m, ScalarLike(kNegInf, m)), ScalarLike(0, m), m);
  Value sum = ir::Unary(ir::op::kExp, Sub(v[0], m));
  for (size_t i = 1; i < v.size(); ++i) sum = Add(sum, ir::Unary(ir::op::kExp, Sub(v[i], m)));
  return Add(ir::Unary(ir::op::kLog, sum), m);
}

// v shifted by k positions along the last dimension of [N, L], -inf entering.
Value ShiftRight(const Value& v, int64_t k) {
  int64_t n = v.shape().dims[0], l = v.shape().dims[1];
  if (k >= l) return ScalarLike(kNegInf, v);
  Value pad = ir::Constant(kNegInf, Shape(v.shape().type, {}));
  return ir::Pad(ir::Slice(v, {0, 0}, {n, l - k}, {1, 1}), pad, {0, k}, {0, 0}, {0, 0});
}

// The per-sample pieces of both recursions, on [N, L] with L = 2 S_max + 1.
struct Ctc {
  int64_t t_max, n, c, l, steps;  // steps: the longest input length
  Value lp;                       // [T, N, C] in the compute type
  Value prime;                    // [N, L] extended labels
  Value emit;                     // [T, N, L] lp[t, n, prime[n, s]]
  Value s_iota, in_len, tg_len;   // [N, L]
  Value in_target;                // [N, L] s < 2 S_n + 1
  Value neg_inf;                  // [N, L]
  ElementType type, acc;
  int device;
  Value EmitAt(int64_t t) const { return ir::Reshape(ir::Slice(emit, {t, 0, 0}, {t + 1, n, l}, {1, 1, 1}), {n, l}); }
  // The sample is still in its input at time t: t < input length.
  Value LiveAt(int64_t t) const {
    return ir::Compare(CompareDirection::kGt, in_len, ScalarLike(static_cast<double>(t), in_len));
  }
};

Ctc CtcSetup(const char* op, const at::Tensor& log_probs, const at::Tensor& targets, at::IntArrayRef input_lengths,
             at::IntArrayRef target_lengths, int64_t blank) {
  TORCH_CHECK(log_probs.dim() == 3, op, ": expected log_probs [time, batch, classes], got ", DescribeTensor(log_probs));
  CheckFloatingArg(log_probs, op, "log_probs");
  int64_t t_max = log_probs.size(0), n = log_probs.size(1), c = log_probs.size(2);
  TORCH_CHECK(blank >= 0 && blank < c, op, ": blank must be in label range (blank ", blank, ", ", c, " classes)");
  TORCH_CHECK(static_cast<int64_t>(input_lengths.size()) == n, op, ": input_lengths must be of size batch_size (",
              input_lengths.size(), " vs ", n, ")");
  TORCH_CHECK(static_cast<int64_t>(target_lengths.size()) == n, op, ": target_lengths must be of size batch_size (",
              target_lengths.size(), " vs ", n, ")");
  TORCH_CHECK(!at::isFloatingType(targets.scalar_type()) && targets.scalar_type() != at::kBool, op,
              ": expected integer targets, got ", DescribeTensor(targets));
  int64_t s_max = 0, total = 0, steps = 0;
  for (int64_t i = 0; i < n; ++i) {
    TORCH_CHECK(input_lengths[i] >= 0 && input_lengths[i] <= t_max, op, ": Expected input_lengths to have value at most ",
                t_max, ", but got value ", input_lengths[i], " (sample ", i, ")");
    TORCH_CHECK(target_lengths[i] >= 0, op, ": target_lengths must be non-negative, got ", target_lengths[i]);
    s_max = std::max(s_max, target_lengths[i]);
    steps = std::max(steps, input_lengths[i]);
    total += target_lengths[i];
  }
  bool concatenated = targets.dim() == 1;
  if (concatenated) {
    TORCH_CHECK(targets.size(0) >= total, op, ": Expected tensor to have size at least ", total,
                " at dimension 0, but got ", DescribeTensor(targets));
  } else {
    TORCH_CHECK(targets.dim() == 2 && targets.size(0) == n && targets.size(1) >= s_max, op,
                ": expected targets [batch, >= max target length ", s_max, "] or concatenated, got ",
                DescribeTensor(targets));
  }
  int device = CommonDevice({&log_probs, &targets}, op);
  ElementType type = ElementTypeOf(log_probs.scalar_type());
  ElementType acc = AccumulationType(type);
  return Checked(op, [&] {
    int64_t l = 2 * s_max + 1;
    Value lp = IrOperand(log_probs, acc, op);
    // labels [N, S]: each sample's targets, padded with blanks
    Value tg = IrOperand(targets, ElementType::kS64, op);
    Value blank_pad = ir::Constant(static_cast<double>(blank), Shape(ElementType::kS64, {}));
    Value labels;
    if (s_max == 0) {
      labels = ir::Constant(blank, Shape(ElementType::kS64, {n, 0}));
    } else if (concatenated) {
      std::vector<Value> rows;
      int64_t offset = 0;
      for (int64_t i = 0; i < n; ++i) {
        int64_t len = target_lengths[i];
        Value row = ir::Slice(tg, {offset}, {offset + len}, {1});
        row = ir::Pad(row, blank_pad, {0}, {s_max - len}, {0});
        rows.push_back(ir::Reshape(row, {1, s_max}));
        offset += len;
      }
      labels = n == 1 ? rows[0] : ir::Concatenate(rows, 0);
    } else {
      labels = ir::Slice(tg, {0, 0}, {n, s_max}, {1, 1});
    }
    // extended labels [N, L]: blank, l1, blank, l2, ..., blank
    Value blanks = ir::Constant(static_cast<double>(blank), Shape(ElementType::kS64, {n, s_max, 1}));
    Value pairs = ir::Concatenate({blanks, ir::Reshape(labels, {n, s_max, 1})}, 2);
    Value prime = ir::Pad(ir::Reshape(pairs, {n, 2 * s_max}), blank_pad, {0, 0}, {0, 1}, {0, 0});
    // emissions [T, N, L]: lp[t, n, prime[n, s]], by a one-hot select over the classes
    std::vector<int64_t> tnlc = {t_max, n, l, c};
    Value onehot = ir::Compare(CompareDirection::kEq, ir::BroadcastInDim(prime, tnlc, {1, 2}),
                               ir::Iota(Shape(ElementType::kS64, tnlc), 3));
    Value lp4 = ir::BroadcastInDim(lp, tnlc, {0, 1, 3});
    Value emit = ir::Materialize(ir::Reduce(ReduceKind::kSum, ir::Select(onehot, lp4, ScalarLike(0, lp4)), {3}));
    Value s_iota = ir::Iota(Shape(ElementType::kS64, {n, l}), 1);
    Value in_len = ir::BroadcastInDim(HostInts(std::vector<int64_t>(input_lengths.begin(), input_lengths.end())), {n, l}, {0});
    Value tg_len = ir::BroadcastInDim(HostInts(std::vector<int64_t>(target_lengths.begin(), target_lengths.end())), {n, l}, {0});
    Value in_target = ir::Compare(CompareDirection::kLt, s_iota, Add(Mul(ScalarLike(2, tg_len), tg_len), ScalarLike(1, tg_len)));
    Value neg_inf = ir::Constant(kNegInf, Shape(acc, {n, l}));
    return Ctc{t_max, n, c, l, steps, lp, prime, emit, s_iota, in_len, tg_len, in_target, neg_inf, type, acc, device};
  });
}

// Where the skip over a blank is allowed: l'[s] != l'[s - k] for the transition between
// s - k and s (k = 2; s >= 2, i.e. a label after another label).
Value SkipAllowed(const Ctc& x) {
  int64_t n = x.n, l = x.l;
  Value pad = ir::Constant(-1, Shape(ElementType::kS64, {}));
  Value prime_2 = ir::Pad(ir::Slice(x.prime, {0, 0}, {n, std::max<int64_t>(l - 2, 0)}, {1, 1}), pad,
                          {0, std::min<int64_t>(2, l)}, {0, 0}, {0, 0});
  return ir::Binary(ir::op::kAnd, ir::Compare(CompareDirection::kNe, x.prime, prime_2),
                    ir::Compare(CompareDirection::kGe, x.s_iota, ScalarLike(2, x.s_iota)));
}

std::tuple<at::Tensor, at::Tensor> CtcLoss(const at::Tensor& log_probs, const at::Tensor& targets,
                                           at::IntArrayRef input_lengths, at::IntArrayRef target_lengths, int64_t blank) {
  const char* op = "ctc_loss";
  Ctc x = CtcSetup(op, log_probs, targets, input_lengths, target_lengths, blank);
  return Checked(op, [&] {
    int64_t n = x.n, l = x.l;
    const Value &s_iota = x.s_iota, &tg_len = x.tg_len, &neg_inf = x.neg_inf;
    Value skip = SkipAllowed(x);
    std::vector<Value> alphas;
    Value alpha = ir::Select(ir::Binary(ir::op::kAnd, ir::Compare(CompareDirection::kLt, s_iota, ScalarLike(2, s_iota)), x.in_target),
                             x.EmitAt(0), neg_inf);
    alphas.push_back(ir::Select(x.LiveAt(0), alpha, neg_inf));
    for (int64_t t = 1; t < x.steps; ++t) {
      Value from_skip = ir::Select(skip, ShiftRight(alpha, 2), neg_inf);
      Value next = Add(LogSumExp({alpha, ShiftRight(alpha, 1), from_skip}), x.EmitAt(t));
      next = ir::Select(x.in_target, next, neg_inf);
      Value live = x.LiveAt(t);
      // Computed once into a buffer: fused into its consumers, each step would recompute the
      // previous ones (XLA fuses element-wise producers into every consumer), and the CPU
      // compile of 50 steps took 75 s instead of 7 s.
      alpha = ir::Materialize(ir::Select(live, next, alpha));
      alphas.push_back(ir::Select(live, next, neg_inf));
    }
    // nll = -logsumexp of alpha[len - 1] at 2 S and 2 S - 1 (only 0 for an empty target);
    // an empty input has likelihood 1 for an empty target, 0 otherwise.
    Value end = ir::Binary(ir::op::kOr, ir::Compare(CompareDirection::kEq, s_iota, Mul(ScalarLike(2, tg_len), tg_len)),
                           ir::Compare(CompareDirection::kEq, s_iota, Sub(Mul(ScalarLike(2, tg_len), tg_len), ScalarLike(1, tg_len))));
    Value final_alpha = ir::Select(end, alpha, neg_inf);
    Value m = ir::Reduce(ReduceKind::kMax, final_alpha, {1});
    m = ir::Select(ir::Compare(CompareDirection::kEq, m, ScalarLike(kNegInf, m)), ScalarLike(0, m), m);
    Value sum = ir::Reduce(ReduceKind::kSum, ir::Unary(ir::op::kExp, Sub(final_alpha, ir::BroadcastInDim(m, {n, l}, {0}))), {1});
    Value nll = ir::Unary(ir::op::kNegate, Add(ir::Unary(ir::op::kLog, sum), m));
    Value in_len_n = ir::Reshape(ir::Slice(x.in_len, {0, 0}, {n, 1}, {1, 1}), {n});
    Value tg_len_n = ir::Reshape(ir::Slice(tg_len, {0, 0}, {n, 1}, {1, 1}), {n});
    Value empty_input_nll = ir::Select(ir::Compare(CompareDirection::kEq, tg_len_n, ScalarLike(0, tg_len_n)),
                                       ScalarLike(0, nll), ScalarLike(-kNegInf, nll));
    nll = ir::Select(ir::Compare(CompareDirection::kEq, in_len_n, ScalarLike(0, in_len_n)), empty_input_nll, nll);
    // log_alpha [N, T, L]
    std::vector<Value> rows;
    for (const Value& a : alphas) rows.push_back(ir::Reshape(a, {n, 1, l}));
    if (x.steps < x.t_max) rows.push_back(ir::Constant(kNegInf, Shape(x.acc, {n, x.t_max - x.steps, l})));
    Value log_alpha = rows.size() == 1 ? rows[0] : ir::Concatenate(rows, 1);
    return std::make_tuple(AtenFromIr(ir::Convert(nll, x.type), x.device),
                           AtenFromIr(ir::Convert(log_alpha, x.type), x.device));
  });
}

// v shifted left by k positions along the last dimension of [N, L], -inf entering.
Value ShiftLeft(const Value& v, int64_t k) {
  int64_t n = v.shape().dims[0], l = v.shape().dims[1];
  if (k >= l) return ScalarLike(kNegInf, v);
  Value pad = ir::Constant(kNegInf, Shape(v.shape().type, {}));
  return ir::Pad(ir::Slice(v, {0, k}, {n, l}, {1, 1}), pad, {0, 0}, {0, k}, {0, 0});
}

// The gradient of the nll by log_probs, as PyTorch's CPU kernel: the beta recursion
// backward in time (beta[T_n - 1] = lp at 2 S and 2 S - 1), then per class c
//   grad[t, c] = (exp(lp[t, c]) - exp(logsumexp over s with l'[s] = c of (alpha + beta)[t, s]
//                                    + nll - lp[t, c])) * grad_nll,
// zero past each input length (and, with zero_infinity, for an infinite nll).
at::Tensor CtcLossBackward(const at::Tensor& grad, const at::Tensor& log_probs, const at::Tensor& targets,
                           at::IntArrayRef input_lengths, at::IntArrayRef target_lengths, const at::Tensor& nll_t,
                           const at::Tensor& log_alpha_t, int64_t blank, bool zero_infinity) {
  const char* op = "ctc_loss_backward";
  Ctc x = CtcSetup(op, log_probs, targets, input_lengths, target_lengths, blank);
  TORCH_CHECK(log_alpha_t.dim() == 3 && log_alpha_t.size(0) == x.n && log_alpha_t.size(1) == x.t_max &&
                  log_alpha_t.size(2) >= x.l, op, ": log_alpha ", DescribeTensor(log_alpha_t), " does not match batch ",
              x.n, ", time ", x.t_max, " and extended target length ", x.l);
  return Checked(op, [&] {
    int64_t n = x.n, l = x.l, c = x.c;
    const Value &tg_len = x.tg_len, &neg_inf = x.neg_inf;
    Value log_alpha = IrOperand(log_alpha_t, x.acc, op);
    Value nll = ir::Reshape(IrOperand(nll_t, x.acc, op), {n});
    Value g = ir::Broadcast(ir::Reshape(IrOperand(grad, x.acc, op), {grad.numel() == 1 ? 1 : n}), {n});
    // skip from s + 2 to s where l'[s + 2] != l'[s]: SkipAllowed shifted left by 2
    Value skip_from_right = ir::Compare(CompareDirection::kNe, ShiftLeft(ir::Convert(x.prime, x.acc), 2),
                                        ir::Convert(x.prime, x.acc));
    skip_from_right = ir::Binary(ir::op::kAnd, skip_from_right,
                                 ir::Compare(CompareDirection::kLt, x.s_iota, ScalarLike(static_cast<double>(l - 2), x.s_iota)));
    Value two_s = Mul(ScalarLike(2, tg_len), tg_len);
    Value end = ir::Binary(ir::op::kOr, ir::Compare(CompareDirection::kEq, x.s_iota, two_s),
                           ir::Compare(CompareDirection::kEq, x.s_iota, Sub(two_s, ScalarLike(1, two_s))));
    Value last_t = Sub(x.in_len, ScalarLike(1, x.in_len));
    // class one-hot of the extended labels [N, L, C]
    std::vector<int64_t> nlc = {n, l, c};
    Value class_of = ir::Compare(CompareDirection::kEq, ir::BroadcastInDim(x.prime, nlc, {0, 1}),
                                 ir::Iota(Shape(ElementType::kS64, nlc), 2));
    Value neg_inf3 = ir::Constant(kNegInf, Shape(x.acc, nlc));
    Value zero_nc = ir::Constant(0, Shape(x.acc, {n, c}));
    Value nll_nc = ir::BroadcastInDim(nll, {n, c}, {0});
    Value g_nc = ir::BroadcastInDim(g, {n, c}, {0});
    Value in_len_nc = ir::BroadcastInDim(ir::Reshape(ir::Slice(x.in_len, {0, 0}, {n, 1}, {1, 1}), {n}), {n, c}, {0});
    Value infinite = ir::Compare(CompareDirection::kEq, nll_nc, ScalarLike(-kNegInf, nll_nc));
    std::vector<Value> grads(x.t_max);
    Value beta = neg_inf;
    for (int64_t t = x.t_max - 1; t >= 0; --t) {
      if (t >= x.steps) {
        grads[t] = ir::Reshape(zero_nc, {1, n, c});
        continue;
      }
      Value at_end = ir::Compare(CompareDirection::kEq, last_t, ScalarLike(static_cast<double>(t), last_t));
      Value before_end = ir::Compare(CompareDirection::kGt, last_t, ScalarLike(static_cast<double>(t), last_t));
      Value from_skip = ir::Select(skip_from_right, ShiftLeft(beta, 2), neg_inf);
      Value rec = Add(LogSumExp({beta, ShiftLeft(beta, 1), from_skip}), x.EmitAt(t));
      rec = ir::Select(x.in_target, rec, neg_inf);
      Value init = ir::Select(ir::Binary(ir::op::kAnd, end, x.in_target), x.EmitAt(t), neg_inf);
      beta = ir::Materialize(ir::Select(at_end, init, ir::Select(before_end, rec, neg_inf)));
      Value alpha = ir::Reshape(ir::Slice(log_alpha, {0, t, 0}, {n, t + 1, l}, {1, 1, 1}), {n, l});
      Value ab = ir::BroadcastInDim(Add(alpha, beta), nlc, {0, 1});
      Value masked = ir::Select(class_of, ab, neg_inf3);
      Value m = ir::Reduce(ReduceKind::kMax, masked, {1});
      m = ir::Select(ir::Compare(CompareDirection::kEq, m, ScalarLike(kNegInf, m)), ScalarLike(0, m), m);
      Value lse = Add(ir::Unary(ir::op::kLog, ir::Reduce(ReduceKind::kSum, ir::Unary(ir::op::kExp,
                                              Sub(masked, ir::BroadcastInDim(m, nlc, {0, 2}))), {1})), m);
      Value lp_t = ir::Reshape(ir::Slice(x.lp, {t, 0, 0}, {t + 1, n, c}, {1, 1, 1}), {n, c});
      Value gt = Mul(Sub(ir::Unary(ir::op::kExp, lp_t), ir::Unary(ir::op::kExp, Sub(Add(lse, nll_nc), lp_t))), g_nc);
      Value live = ir::Compare(CompareDirection::kGt, in_len_nc, ScalarLike(static_cast<double>(t), in_len_nc));
      if (zero_infinity) live = ir::Binary(ir::op::kAnd, live, ir::Unary(ir::op::kNot, infinite));
      gt = ir::Select(live, gt, zero_nc);
      grads[t] = ir::Reshape(gt, {1, n, c});
    }
    Value out = grads.size() == 1 ? grads[0] : ir::Concatenate(grads, 0);
    return AtenFromIr(ir::Convert(out, x.type), x.device);
  });
}

// Host integers of a lengths tensor (a CPU tensor, or an XLA tensor read back).
std::vector<int64_t> HostLengths(const at::Tensor& lengths, const char* what) {
  TORCH_CHECK(at::isIntegralType(lengths.scalar_type(), false), "ctc_loss: ", what, " must be integral, got ",
              DescribeTensor(lengths));
  at::Tensor host = lengths.to(at::kCPU, at::kLong).contiguous();
  return std::vector<int64_t>(host.const_data_ptr<int64_t>(), host.const_data_ptr<int64_t>() + host.numel());
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::_ctc_loss(const at::Tensor& log_probs, const at::Tensor& targets,
                                                                 at::IntArrayRef input_lengths,
                                                                 at::IntArrayRef target_lengths, int64_t blank,
                                                                 bool /*zero_infinity: applied by ctc_loss*/) {
  XLA_COUNT("_ctc_loss");
  return CtcLoss(log_probs, targets, input_lengths, target_lengths, blank);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::_ctc_loss(const at::Tensor& log_probs, const at::Tensor& targets,
                                                                 const at::Tensor& input_lengths,
                                                                 const at::Tensor& target_lengths, int64_t blank,
                                                                 bool /*zero_infinity*/) {
  XLA_COUNT("_ctc_loss");
  std::vector<int64_t> il = HostLengths(input_lengths, "input_lengths");
  std::vector<int64_t> tl = HostLengths(target_lengths, "target_lengths");
  return CtcLoss(log_probs, targets, il, tl, blank);
}

at::Tensor XLANativeFunctions::_ctc_loss_backward(const at::Tensor& grad, const at::Tensor& log_probs,
                                                  const at::Tensor& targets, at::IntArrayRef input_lengths,
                                                  at::IntArrayRef target_lengths, const at::Tensor& neg_log_likelihood,
                                                  const at::Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  XLA_COUNT("_ctc_loss_backward");
  return CtcLossBackward(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha, blank,
                         zero_infinity);
}

at::Tensor XLANativeFunctions::_ctc_loss_backward(const at::Tensor& grad, const at::Tensor& log_probs,
                                                  const at::Tensor& targets, const at::Tensor& input_lengths,
                                                  const at::Tensor& target_lengths,
                                                  const at::Tensor& neg_log_likelihood, const at::Tensor& log_alpha,
                                                  int64_t blank, bool zero_infinity) {
  XLA_COUNT("_ctc_loss_backward");
  std::vector<int64_t> il = HostLengths(input_lengths, "input_lengths");
  std::vector<int64_t> tl = HostLengths(target_lengths, "target_lengths");
  return CtcLossBackward(grad, log_probs, targets, il, tl, neg_log_likelihood, log_alpha, blank, zero_infinity);
}

}  // namespace torch_xla
