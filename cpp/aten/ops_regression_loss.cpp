// Regression losses with a quadratic zone: smooth_l1_loss and huber_loss, forward and
// backward. With d = input - target and z = |d|:
//   smooth_l1 (beta)   z < beta ? 0.5 z^2 / beta : z - 0.5 beta       (beta = 0: z)
//   huber (delta)      z < delta ? 0.5 z^2 : delta (z - 0.5 delta)
// reduced by mean or sum, or not (reduction 0 none, 1 mean, 2 sum). The backward is
// grad * norm * clamp(d, -beta, beta) / beta (smooth L1; sign(d) for beta = 0) and
// grad * norm * clamp(d, -delta, delta) (Huber), norm = 1/numel(input) for the mean.
// Low-precision inputs compute in f32 and round at the end.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;

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

at::Tensor Reduced(const Value& loss, int64_t reduction, const Difference& diff) {
  Value r = loss;
  std::vector<int64_t> all;
  for (int64_t i = 0; i < loss.shape().rank(); ++i) all.push_back(i);
  if (reduction != 0) r = ir::Reduce(ReduceKind::kSum, loss, all);
  if (reduction == 1) r = Div(r, ir::Constant(static_cast<double>(loss.shape().numel()), r.shape()));
  return AtenFromIr(ir::Convert(r, diff.type), diff.device);
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
  return Reduced(loss, reduction, diff);
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
  return Reduced(loss, reduction, diff);
}

at::Tensor XLANativeFunctions::huber_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                   const at::Tensor& target, int64_t reduction, double delta) {
  XLA_COUNT("huber_loss_backward");
  const char* op = "huber_loss_backward";
  BackwardIn in = GetBackwardIn(op, grad_output, self, target, reduction);
  return AtenFromIr(ir::Convert(Mul(in.g, Clamp(in.d, delta)), in.type), in.device);
}

}  // namespace torch_xla
