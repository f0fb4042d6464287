// Losses, forward and backward: mse_loss, binary_cross_entropy, soft_margin_loss,
// multi_margin_loss, multilabel_margin_loss, and the regression losses with a quadratic
// zone, smooth_l1_loss and huber_loss. Reduction 0 is none, 1 mean, 2 sum. Low-precision
// inputs compute in f32 and round at the end. Class indices in targets are device data:
// out-of-range targets cannot be reported (PyTorch's CPU kernels raise), they select no
// class. (nll_loss: ops/loss_nll.cpp; the CTC loss: ops/loss_ctc.cpp.)
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Shape;
using ir::Value;
using runtime::ElementType;

void CheckReduction(const char* op, int64_t reduction) {
  TORCH_CHECK(reduction >= 0 && reduction <= 2, op, ": expected reduction 0 (none), 1 (mean) or 2 (sum), got ",
              reduction);
}

// An element-wise loss reduced as asked, in `type`.
at::Tensor Reduced(const Value& loss, int64_t reduction, ElementType type, int device) {
  Value r = loss;
  if (reduction != 0) r = ir::Reduce(ReduceKind::kSum, loss, AllDims(loss.shape().rank()));
  if (reduction == 1) r = Div(r, ir::Constant(static_cast<double>(loss.shape().numel()), r.shape()));
  return AtenFromIr(ir::Convert(r, type), device);
}

// grad_output broadcast to `dims`, divided by the element count for the mean.
Value UpstreamGrad(const char* op, const at::Tensor& grad_output, const std::vector<int64_t>& dims, ElementType acc,
                   int64_t reduction) {
  Value g = IrOperand(grad_output, acc, op);
  TORCH_CHECK(ir::BroadcastDims(g.shape().dims, dims, op) == dims, op, ": grad_output ", DescribeTensor(grad_output),
              " does not broadcast to ", ir::DimsToString(dims));
  g = ir::Broadcast(g, dims);
  if (reduction == 1) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    g = Div(g, ScalarLike(static_cast<double>(n), g));
  }
  return g;
}

// ---- class-index losses -----------------------------------------------------------------
// multi_margin_loss and multilabel_margin_loss view their input as [nframe, dim]: a 0-dim
// input is one frame of one class, a 1-dim input one frame.
struct Frames {
  int64_t nframe, dim;
};

Frames FramesOf(const at::Tensor& input) {
  int64_t nd = input.dim();
  return {nd <= 1 ? 1 : input.size(0), nd == 0 ? 1 : input.size(nd - 1)};
}

// onehot[n, c] = (labels[n] == c) for labels [N] and classes [0, C).
Value OneHot(const Value& labels, int64_t classes) {
  int64_t n = labels.shape().dims[0];
  Value iota = ir::Iota(Shape(ElementType::kS64, {n, classes}), 1);
  return ir::Compare(CompareDirection::kEq, iota, ir::BroadcastInDim(labels, {n, classes}, {0}));
}

// Sums `v` over `dim` where `mask` holds (a gather by a one-hot mask).
Value MaskedSum(const Value& mask, const Value& v, int64_t dim) {
  return ir::Reduce(ReduceKind::kSum, ir::Select(mask, v, ScalarLike(0, v)), {dim});
}

struct MultiMargin {
  Value onehot;  // [N, C] the target class
  Value z;       // [N, C] margin - x[target] + x
  Value active;  // [N, C] z > 0 off the target class
  Value weight;  // [N, 1] broadcast to [N, C]: the target's class weight (1 without weights)
  ElementType type, acc;
  Frames f;
  int device;
};

MultiMargin GetMultiMargin(const char* op, const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                           const at::Scalar& margin, const std::optional<at::Tensor>& weight, int64_t reduction) {
  CheckReduction(op, reduction);
  CheckFloatingArg(self, op, "input");
  TORCH_CHECK(p.toDouble() == 1 || p.toDouble() == 2, op, ": only p == 1 and p == 2 supported, got p=", p.toDouble());
  int64_t nd = self.dim();
  Frames f = FramesOf(self);
  TORCH_CHECK((nd == 2 && self.size(1) != 0) || (nd == 1 && self.size(0) != 0) || nd == 0, op,
              ": Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", DescribeTensor(self));
  TORCH_CHECK(target.dim() <= 1 && target.numel() == f.nframe, op, ": inconsistent target size, expected ", f.nframe,
              " but got ", DescribeTensor(target));
  TORCH_CHECK(!at::isFloatingType(target.scalar_type()) && target.scalar_type() != at::kBool, op,
              ": expected an integer target, got ", DescribeTensor(target));
  const at::Tensor* w = DefinedOrNull(weight);
  if (w) TORCH_CHECK(w->dim() <= 1 && w->numel() == f.dim, op, ": inconsistent weight size, expected ", f.dim,
                     " but got ", DescribeTensor(*w));
  int device = CommonDevice({&self, &target}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  return Checked(op, [&] {
    Value x = ir::Reshape(IrOperand(self, acc, op), {f.nframe, f.dim});
    Value y = ir::Reshape(IrOperand(target, ElementType::kS64, op), {f.nframe});
    Value onehot = OneHot(y, f.dim);
    Value x_target = ir::BroadcastInDim(MaskedSum(onehot, x, 1), {f.nframe, f.dim}, {0});
    Value z = Add(Sub(ScalarLike(margin.toDouble(), x), x_target), x);
    Value active = ir::Binary(ir::op::kAnd, ir::Compare(CompareDirection::kGt, z, ScalarLike(0, z)),
                              ir::Unary(ir::op::kNot, onehot));
    Value wt = ScalarLike(1, x);
    if (w) {
      Value wv = ir::BroadcastInDim(ir::Reshape(IrOperand(*w, acc, op), {f.dim}), {f.nframe, f.dim}, {1});
      wt = ir::BroadcastInDim(MaskedSum(onehot, wv, 1), {f.nframe, f.dim}, {0});
    }
    return MultiMargin{onehot, z, active, wt, type, acc, f, device};
  });
}

struct MultilabelMargin {
  Value x;          // [N, C]
  Value pair;       // [N, K, C] (k is a valid target entry) and (target[n, k] == c)
  Value is_target;  // [N, C]
  Value active;     // [N, K, C] k valid, c not a target, z = 1 - x[target[n, k]] + x[c] > 0
  Value z;          // [N, K, C]
  ElementType type, acc;
  Frames f;
  int device;
};

// Targets list class indices, ended by the first negative entry.
MultilabelMargin GetMultilabelMargin(const char* op, const at::Tensor& self, const at::Tensor& target,
                                     int64_t reduction) {
  CheckReduction(op, reduction);
  CheckFloatingArg(self, op, "input");
  int64_t nd = self.dim();
  Frames f = FramesOf(self);
  TORCH_CHECK((nd == 2 && self.size(1) != 0) || (nd == 1 && self.size(0) != 0) || nd == 0, op,
              ": Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", DescribeTensor(self));
  TORCH_CHECK(target.sizes() == self.sizes(), op, ": inconsistent target size: ", DescribeTensor(target),
              " for input of size: ", DescribeTensor(self));
  TORCH_CHECK(!at::isFloatingType(target.scalar_type()) && target.scalar_type() != at::kBool, op,
              ": expected an integer target, got ", DescribeTensor(target));
  int device = CommonDevice({&self, &target}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  return Checked(op, [&] {
    int64_t n = f.nframe, c = f.dim;
    Value x = ir::Reshape(IrOperand(self, acc, op), {n, c});
    Value t = ir::Reshape(IrOperand(target, ElementType::kS64, op), {n, c});
    Value k_iota = ir::Iota(Shape(ElementType::kS64, {n, c}), 1);
    Value negative = ir::Compare(CompareDirection::kLt, t, ScalarLike(0, t));
    Value end = ir::Reduce(ReduceKind::kMin, ir::Select(negative, k_iota, ScalarLike(static_cast<double>(c), k_iota)),
                           {1});
    Value valid = ir::Compare(CompareDirection::kLt, k_iota, ir::BroadcastInDim(end, {n, c}, {0}));
    std::vector<int64_t> nkc = {n, c, c};
    Value c_iota = ir::Iota(Shape(ElementType::kS64, nkc), 2);
    Value is_class = ir::Compare(CompareDirection::kEq, ir::BroadcastInDim(t, nkc, {0, 1}), c_iota);
    Value valid3 = ir::BroadcastInDim(valid, nkc, {0, 1});
    Value pair = ir::Binary(ir::op::kAnd, is_class, valid3);
    Value is_target = ir::Reduce(ReduceKind::kOr, pair, {1});
    Value x3 = ir::BroadcastInDim(x, nkc, {0, 2});
    Value x_target = ir::BroadcastInDim(MaskedSum(is_class, x3, 2), nkc, {0, 1});
    Value z = Add(Sub(ScalarLike(1, x3), x_target), x3);
    Value active = ir::Binary(ir::op::kAnd, valid3, ir::Unary(ir::op::kNot, ir::BroadcastInDim(is_target, nkc, {0, 2})));
    active = ir::Binary(ir::op::kAnd, active, ir::Compare(CompareDirection::kGt, z, ScalarLike(0, z)));
    return MultilabelMargin{x, pair, is_target, active, z, type, acc, f, device};
  });
}

}  // namespace

// ---- mse_loss ------------------------------------------------------------------------------

at::Tensor XLANativeFunctions::mse_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  XLA_COUNT("mse_loss");
  const char* op = "mse_loss";
  CheckReduction(op, reduction);
  int device = CommonDevice({&self, &target}, op);
  ElementType type = ElementTypeOf(at::result_type(self, target));
  TORCH_CHECK(runtime::IsFloating(type), op, ": expected floating point input and target, got ",
              DescribeTensor(self), " and ", DescribeTensor(target));
  return Checked(op, [&] {
    std::vector<Value> v = BroadcastOperands({&self, &target}, AccumulationType(type), op);
    Value d = Sub(v[0], v[1]);
    return Reduced(Mul(d, d), reduction, type, device);
  });
}

at::Tensor XLANativeFunctions::mse_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                 const at::Tensor& target, int64_t reduction) {
  XLA_COUNT("mse_loss_backward");
  const char* op = "mse_loss_backward";
  CheckReduction(op, reduction);
  int device = CommonDevice({&grad_output, &self, &target}, op);
  ElementType type = ElementTypeOf(at::result_type(self, target));
  ElementType acc = AccumulationType(type);
  return Checked(op, [&] {
    std::vector<Value> v = BroadcastOperands({&self, &target}, acc, op);
    Value g = UpstreamGrad(op, grad_output, v[0].shape().dims, acc, reduction);
    // The mean divides by the input's element count (PyTorch's norm 2 / input.numel()).
    if (reduction == 1 && self.numel() != v[0].shape().numel())
      g = Mul(g, ScalarLike(static_cast<double>(v[0].shape().numel()) / self.numel(), g));
    Value grad = Mul(Mul(ScalarLike(2, g), Sub(v[0], v[1])), g);
    return AtenFromIr(ir::Convert(grad, type), device);
  });
}

// ---- binary_cross_entropy ---------------------------------------------------------------------
// loss = -w (t max(log x, -100) + (1 - t) max(log(1 - x), -100)); the gradient
// w (x - t) / max(x (1 - x), 1e-12), as PyTorch's kernels (the log clamp keeps the loss
// finite at x = 0 and 1). Inputs outside [0, 1] give NaN here; PyTorch raises.

at::Tensor XLANativeFunctions::binary_cross_entropy(const at::Tensor& self, const at::Tensor& target,
                                                    const std::optional<at::Tensor>& weight, int64_t reduction) {
  XLA_COUNT("binary_cross_entropy");
  const char* op = "binary_cross_entropy";
  CheckReduction(op, reduction);
  CheckFloatingArg(self, op, "input");
  TORCH_CHECK(self.sizes() == target.sizes(), op, ": target ", DescribeTensor(target),
              " must have the size of the input ", DescribeTensor(self));
  const at::Tensor* w = DefinedOrNull(weight);
  int device = CommonDevice({&self, &target}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  return Checked(op, [&] {
    std::vector<Value> v = BroadcastOperands({&self, &target}, acc, op);
    const Value &x = v[0], &t = v[1];
    Value floor = ScalarLike(-100, x);
    Value log_x = ir::Binary(ir::op::kMaximum, ir::Unary(ir::op::kLog, x), floor);
    Value log_1mx = ir::Binary(ir::op::kMaximum, ir::Unary(ir::op::kLog1p, ir::Unary(ir::op::kNegate, x)), floor);
    Value loss = Sub(Mul(Sub(t, ScalarLike(1, t)), log_1mx), Mul(t, log_x));
    if (w) loss = Mul(loss, ir::Broadcast(IrOperand(*w, acc, op), x.shape().dims));
    return Reduced(loss, reduction, type, device);
  });
}

at::Tensor XLANativeFunctions::binary_cross_entropy_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                             const at::Tensor& target,
                                                             const std::optional<at::Tensor>& weight,
                                                             int64_t reduction) {
  XLA_COUNT("binary_cross_entropy_backward");
  const char* op = "binary_cross_entropy_backward";
  CheckReduction(op, reduction);
  CheckFloatingArg(self, op, "input");
  TORCH_CHECK(self.sizes() == target.sizes(), op, ": target ", DescribeTensor(target),
              " must have the size of the input ", DescribeTensor(self));
  const at::Tensor* w = DefinedOrNull(weight);
  int device = CommonDevice({&grad_output, &self, &target}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  return Checked(op, [&] {
    std::vector<Value> v = BroadcastOperands({&self, &target}, acc, op);
    const Value &x = v[0], &t = v[1];
    Value g = UpstreamGrad(op, grad_output, x.shape().dims, acc, reduction);
    Value denom = ir::Binary(ir::op::kMaximum, Mul(Sub(ScalarLike(1, x), x), x), ScalarLike(1e-12, x));
    Value grad = Mul(g, Div(Sub(x, t), denom));
    if (w) grad = Mul(grad, ir::Broadcast(IrOperand(*w, acc, op), x.shape().dims));
    return AtenFromIr(ir::Convert(grad, type), device);
  });
}

// ---- soft_margin_loss --------------------------------------------------------------------------
// loss = log1p(exp(-t x)); gradient -t z / (1 + z) with z = exp(-t x).

at::Tensor XLANativeFunctions::soft_margin_loss(const at::Tensor& self, const at::Tensor& target,
                                                int64_t reduction) {
  XLA_COUNT("soft_margin_loss");
  const char* op = "soft_margin_loss";
  CheckReduction(op, reduction);
  CheckFloatingArg(self, op, "input");
  int device = CommonDevice({&self, &target}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  return Checked(op, [&] {
    std::vector<Value> v = BroadcastOperands({&self, &target}, AccumulationType(type), op);
    Value loss = ir::Unary(ir::op::kLog1p, ir::Unary(ir::op::kExp, ir::Unary(ir::op::kNegate, Mul(v[0], v[1]))));
    return Reduced(loss, reduction, type, device);
  });
}

at::Tensor XLANativeFunctions::soft_margin_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                         const at::Tensor& target, int64_t reduction) {
  XLA_COUNT("soft_margin_loss_backward");
  const char* op = "soft_margin_loss_backward";
  CheckReduction(op, reduction);
  CheckFloatingArg(self, op, "input");
  int device = CommonDevice({&grad_output, &self, &target}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  return Checked(op, [&] {
    std::vector<Value> v = BroadcastOperands({&self, &target}, acc, op);
    Value g = UpstreamGrad(op, grad_output, v[0].shape().dims, acc, reduction);
    Value z = ir::Unary(ir::op::kExp, ir::Unary(ir::op::kNegate, Mul(v[0], v[1])));
    Value grad = Mul(Div(Mul(ir::Unary(ir::op::kNegate, v[1]), z), Add(ScalarLike(1, z), z)), g);
    return AtenFromIr(ir::Convert(grad, type), device);
  });
}

// ---- multi_margin_loss -------------------------------------------------------------------------
// Per frame: sum over classes c != y of w[y] max(0, margin - x[y] + x[c])^p, divided by
// the class count.

at::Tensor XLANativeFunctions::multi_margin_loss(const at::Tensor& self, const at::Tensor& target,
                                                 const at::Scalar& p, const at::Scalar& margin,
                                                 const std::optional<at::Tensor>& weight, int64_t reduction) {
  XLA_COUNT("multi_margin_loss");
  const char* op = "multi_margin_loss";
  MultiMargin m = GetMultiMargin(op, self, target, p, margin, weight, reduction);
  return Checked(op, [&] {
    Value h = p.toDouble() == 1 ? m.z : Mul(m.z, m.z);
    h = Mul(ir::Select(m.active, h, ScalarLike(0, h)), m.weight);
    Value per_frame = ir::Reduce(ReduceKind::kSum, h, {1});
    per_frame = Div(per_frame, ScalarLike(static_cast<double>(m.f.dim), per_frame));
    if (reduction == 0) {
      // One loss per frame ([N]), or a scalar for a 0-dim target.
      Value r = target.dim() == 0 ? ir::Reshape(per_frame, {}) : per_frame;
      return AtenFromIr(ir::Convert(r, m.type), m.device);
    }
    return Reduced(per_frame, reduction, m.type, m.device);
  });
}

at::Tensor XLANativeFunctions::multi_margin_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                          const at::Tensor& target, const at::Scalar& p,
                                                          const at::Scalar& margin,
                                                          const std::optional<at::Tensor>& weight, int64_t reduction) {
  XLA_COUNT("multi_margin_loss_backward");
  const char* op = "multi_margin_loss_backward";
  MultiMargin m = GetMultiMargin(op, self, target, p, margin, weight, reduction);
  return Checked(op, [&] {
    int64_t n = m.f.nframe, c = m.f.dim;
    double scale = 1.0 / c / (reduction == 1 ? n : 1);
    Value slope = p.toDouble() == 1 ? ScalarLike(1, m.z) : Mul(ScalarLike(2, m.z), m.z);
    Value h = Mul(Mul(ir::Select(m.active, slope, ScalarLike(0, slope)), m.weight), ScalarLike(scale, m.z));
    Value target_grad = ir::BroadcastInDim(ir::Unary(ir::op::kNegate, ir::Reduce(ReduceKind::kSum, h, {1})), {n, c}, {0});
    Value grad = ir::Select(m.onehot, target_grad, h);
    Value g = IrOperand(grad_output, m.acc, op);
    if (reduction == 0 && target.dim() > 0)
      g = ir::BroadcastInDim(ir::Reshape(g, {n}), {n, c}, {0});
    else
      g = ir::Broadcast(ir::Reshape(g, {}), {n, c});
    grad = Mul(grad, g);
    return AtenFromIr(ir::Convert(ir::Reshape(grad, self.sizes().vec()), m.type), m.device);
  });
}

// ---- multilabel_margin_loss --------------------------------------------------------------------
// Per frame: for each listed target j and each class i not listed, max(0, 1 - (x[j] - x[i])),
// summed and divided by the class count. is_target marks the listed classes (in the
// input's type), for the backward.

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::multilabel_margin_loss_forward(const at::Tensor& self,
                                                                                      const at::Tensor& target,
                                                                                      int64_t reduction) {
  XLA_COUNT("multilabel_margin_loss_forward");
  const char* op = "multilabel_margin_loss_forward";
  MultilabelMargin m = GetMultilabelMargin(op, self, target, reduction);
  return Checked(op, [&] {
    Value loss = ir::Reduce(ReduceKind::kSum, ir::Select(m.active, m.z, ScalarLike(0, m.z)), {1, 2});
    loss = Div(loss, ScalarLike(static_cast<double>(m.f.dim), loss));
    at::Tensor is_target =
        AtenFromIr(ir::Reshape(ir::Convert(m.is_target, m.type), target.sizes().vec()), m.device);
    if (reduction == 0) {
      Value r = target.dim() <= 1 ? ir::Reshape(loss, {}) : loss;
      return std::make_tuple(AtenFromIr(ir::Convert(r, m.type), m.device), is_target);
    }
    return std::make_tuple(Reduced(loss, reduction, m.type, m.device), is_target);
  });
}

at::Tensor XLANativeFunctions::multilabel_margin_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                               const at::Tensor& target, int64_t reduction,
                                                               const at::Tensor& /*is_target*/) {
  XLA_COUNT("multilabel_margin_loss_backward");
  const char* op = "multilabel_margin_loss_backward";
  MultilabelMargin m = GetMultilabelMargin(op, self, target, reduction);
  return Checked(op, [&] {
    int64_t n = m.f.nframe, c = m.f.dim;
    std::vector<int64_t> nkc = {n, c, c};
    Value ones = ir::Select(m.active, ScalarLike(1, m.z), ScalarLike(0, m.z));
    // +1 for each (target, class) pair that contributes, on the class; -1 on the target.
    Value on_class = ir::Reduce(ReduceKind::kSum, ones, {1});
    Value per_target = ir::BroadcastInDim(ir::Reduce(ReduceKind::kSum, ones, {2}), nkc, {0, 1});
    Value on_target = ir::Reduce(ReduceKind::kSum, ir::Select(m.pair, per_target, ScalarLike(0, per_target)), {1});
    double scale = 1.0 / c / (reduction == 1 ? n : 1);
    Value grad = Mul(Sub(on_class, on_target), ScalarLike(scale, on_class));
    Value g = IrOperand(grad_output, m.acc, op);
    if (reduction == 0 && target.dim() > 1)
      g = ir::BroadcastInDim(ir::Reshape(g, {n}), {n, c}, {0});
    else
      g = ir::Broadcast(ir::Reshape(g, {}), {n, c});
    grad = Mul(grad, g);
    return AtenFromIr(ir::Convert(ir::Reshape(grad, self.sizes().vec()), m.type), m.device);
  });
}

// ---- smooth_l1_loss, huber_loss ---------------------------------------------------------------
// With d = input - target and z = |d|:
//   smooth_l1 (beta)   z < beta ? 0.5 z^2 / beta : z - 0.5 beta       (beta = 0: z)
//   huber (delta)      z < delta ? 0.5 z^2 : delta (z - 0.5 delta)
// reduced by mean or sum, or not. The backward is grad * norm * clamp(d, -beta, beta) / beta
// (smooth L1; sign(d) for beta = 0) and grad * norm * clamp(d, -delta, delta) (Huber),
// norm = 1/numel(input) for the mean.
namespace {

void CheckLossArgs(const char* op, const at::Tensor& input, const at::Tensor& target, int64_t reduction) {
  TORCH_CHECK(reduction >= 0 && reduction <= 2, op, ": expected reduction 0 (none), 1 (mean) or 2 (sum), got ",
              reduction);
  TORCH_CHECK(at::isFloatingType(input.scalar_type()) && at::isFloatingType(target.scalar_type()), op,
              ": expected floating point input and target, got input ", DescribeTensor(input), " and target ",
              DescribeTensor(target));
}

// input - target in the compute type, broadcast to their common shape.
struct Difference {
  Value d;
  ElementType type;  // the result's type
  int device;
};

Difference Diff(const char* op, const at::Tensor& input, const at::Tensor& target, at::ScalarType result) {
  int device = CommonDevice({&input, &target}, op);
  ElementType type = ElementTypeOf(result);
  ElementType acc = AccumulationType(type);
  std::vector<Value> v = BroadcastOperands({&input, &target}, acc, op);
  return Difference{Sub(v[0], v[1]), type, device};
}

// grad_output broadcast to the input's shape and scaled by the reduction's norm; the
// difference input - target in the same shape.
struct BackwardIn {
  Value g, d;
  ElementType type;
  int device;
};

BackwardIn GetBackwardIn(const char* op, const at::Tensor& grad_output, const at::Tensor& input,
                         const at::Tensor& target, int64_t reduction) {
  CheckLossArgs(op, input, target, reduction);
  TORCH_CHECK(at::isFloatingType(grad_output.scalar_type()), op, ": expected a floating point grad_output, got ",
              DescribeTensor(grad_output));
  TORCH_CHECK(at::infer_size(input.sizes(), target.sizes()) == input.sizes(), op, ": target ", DescribeTensor(target),
              " must broadcast to the input ", DescribeTensor(input));
  Difference diff = Diff(op, input, target, input.scalar_type());
  int device = CommonDevice({&grad_output, &input}, op);
  return Checked(op, [&] {
    Value g = IrOperand(grad_output, diff.d.shape().type, op);
    std::vector<int64_t> dims = diff.d.shape().dims;
    TORCH_CHECK(ir::BroadcastDims(g.shape().dims, dims, op) == dims, op, ": grad_output ",
                DescribeTensor(grad_output), " does not broadcast to the input ", DescribeTensor(input));
    g = ir::Broadcast(g, dims);
    if (reduction == 1) g = Div(g, ScalarLike(static_cast<double>(input.numel()), g));
    return BackwardIn{g, diff.d, diff.type, device};
  });
}

// v limited to [-limit, limit]; NaN stays NaN (as in PyTorch's kernels).
Value Clamp(const Value& v, double limit) {
  Value low = ScalarLike(-limit, v), high = ScalarLike(limit, v);
  Value upper = ir::Select(ir::Compare(CompareDirection::kGe, v, high), high, v);
  return ir::Select(ir::Compare(CompareDirection::kLe, v, low), low, upper);
}

}  // namespace

at::Tensor XLANativeFunctions::smooth_l1_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                                              double beta) {
  XLA_COUNT("smooth_l1_loss");
  const char* op = "smooth_l1_loss";
  CheckLossArgs(op, self, target, reduction);
  TORCH_CHECK(beta >= 0, op, ": smooth_l1_loss does not support negative values for beta, got beta=", beta);
  Difference diff = Diff(op, self, target, at::result_type(self, target));
  Value z = ir::Unary(ir::op::kAbs, diff.d);
  Value loss = z;
  if (beta > 0) {
    Value quadratic = Div(Mul(ScalarLike(0.5, z), Mul(z, z)), ScalarLike(beta, z));
    Value linear = Sub(z, ScalarLike(0.5 * beta, z));
    loss = ir::Select(ir::Compare(CompareDirection::kLt, z, ScalarLike(beta, z)), quadratic, linear);
  }
  return Reduced(loss, reduction, diff.type, diff.device);
}

at::Tensor XLANativeFunctions::smooth_l1_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                       const at::Tensor& target, int64_t reduction, double beta) {
  XLA_COUNT("smooth_l1_loss_backward");
  const char* op = "smooth_l1_loss_backward";
  TORCH_CHECK(beta >= 0, op, ": smooth_l1_loss does not support negative values for beta, got beta=", beta);
  BackwardIn in = GetBackwardIn(op, grad_output, self, target, reduction);
  // beta = 0 is the L1 loss, whose gradient is sign(d) (0 at d = 0).
  Value slope = beta > 0 ? Div(Clamp(in.d, beta), ScalarLike(beta, in.d)) : ir::Unary(ir::op::kSign, in.d);
  return AtenFromIr(ir::Convert(Mul(in.g, slope), in.type), in.device);
}

at::Tensor XLANativeFunctions::huber_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                                          double delta) {
  XLA_COUNT("huber_loss");
  const char* op = "huber_loss";
  CheckLossArgs(op, self, target, reduction);
  TORCH_CHECK(delta > 0, op, ": huber_loss does not support non-positive values for delta, got delta=", delta);
  // PyTorch writes the loss into a tensor like the input: the target only broadcasts to it.
  TORCH_CHECK(at::infer_size(self.sizes(), target.sizes()) == self.sizes(), op, ": target ", DescribeTensor(target),
              " must broadcast to the input ", DescribeTensor(self));
  Difference diff = Diff(op, self, target, self.scalar_type());
  Value z = ir::Unary(ir::op::kAbs, diff.d);
  Value quadratic = Mul(ScalarLike(0.5, z), Mul(z, z));
  Value linear = Mul(ScalarLike(delta, z), Sub(z, ScalarLike(0.5 * delta, z)));
  Value loss = ir::Select(ir::Compare(CompareDirection::kLt, z, ScalarLike(delta, z)), quadratic, linear);
  return Reduced(loss, reduction, diff.type, diff.device);
}

at::Tensor XLANativeFunctions::huber_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                   const at::Tensor& target, int64_t reduction, double delta) {
  XLA_COUNT("huber_loss_backward");
  const char* op = "huber_loss_backward";
  BackwardIn in = GetBackwardIn(op, grad_output, self, target, reduction);
  return AtenFromIr(ir::Convert(Mul(in.g, Clamp(in.d, delta)), in.type), in.device);
}

}  // namespace torch_xla
