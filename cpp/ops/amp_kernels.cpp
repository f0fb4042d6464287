// The kernels of torch.amp.GradScaler: the overflow check and unscaling of the gradients
// (_amp_foreach_non_finite_check_and_unscale) and the update of the loss scale
// (_amp_update_scale), computed in the step's graph as ATen's CUDA kernels compute them
// (native/cuda/AmpKernels.cu), so that loss scaling never transfers to the host.
// PyTorch's functionalization turns the in-place forms the scaler calls into these
// functional ones, which are registered here: torchgen cannot generate the in-place
// wrappers of ops that mutate two arguments.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <limits>

#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;

// Whether every element of v (floating) is finite: |v| < inf is false for inf and NaN.
Value AllFinite(const Value& v) {
  Value magnitude = ir::Unary(ir::op::kAbs, v);
  Value finite = Cmp(CompareDirection::kLt, magnitude, ScalarLike(std::numeric_limits<double>::infinity(), magnitude));
  return ir::Reduce(ReduceKind::kAnd, finite, AllDims(v.shape().rank()));
}

// A one-element tensor argument of dtype `type` (ATen's checks, with the op's name).
void CheckOneElement(const at::Tensor& t, at::ScalarType type, const char* op, const char* name) {
  TORCH_CHECK(t.numel() == 1, op, ": ", name, " must be a 1-element tensor, got ", DescribeTensor(t));
  TORCH_CHECK(t.scalar_type() == type, op, ": ", name, " must have dtype ", type, ", got ", DescribeTensor(t));
}

// A one-element value as a scalar (rank 0), and a scalar back in the shape `dims`.
Value AsScalar(const Value& v) { return ir::Reshape(v, {}); }
Value AsShape(const Value& scalar, const std::vector<int64_t>& dims) { return ir::Reshape(scalar, dims); }

// Multiplies each gradient by inv_scale (in float32 for low-precision gradients) and sets
// found_inf to 1 where any gradient holds an inf or a NaN, leaving it as it was otherwise.
std::tuple<std::vector<at::Tensor>, at::Tensor> NonFiniteCheckAndUnscale(at::TensorList self,
                                                                          const at::Tensor& found_inf,
                                                                          const at::Tensor& inv_scale) {
  XLA_COUNT("_amp_foreach_non_finite_check_and_unscale");
  const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  CheckOneElement(inv_scale, at::kFloat, op, "inv_scale");
  CheckOneElement(found_inf, at::kFloat, op, "found_inf");
  int device = CommonDevice({&found_inf, &inv_scale}, op);
  for (const at::Tensor& g : self) {
    TORCH_CHECK(IsXlaTensor(g) && g.device().index() == device, op, ": every gradient must be on xla:", device,
                " like found_inf, got a ", g.device(), " tensor ", DescribeTensor(g));
    TORCH_CHECK(at::isFloatingType(g.scalar_type()), op, ": expected floating-point gradients, got ",
                DescribeTensor(g));
  }
  return Checked(op, [&] {
    Value inv = AsScalar(GetIrInput(inv_scale, op).v);
    Value found = GetIrInput(found_inf, op).v;
    Value any_overflow = ir::Constant(0, ir::Shape(ElementType::kPred, {}));
    std::vector<at::Tensor> unscaled;
    unscaled.reserve(self.size());
    for (const at::Tensor& g : self) {
      Value v = GetIrInput(g, op).v;
      ElementType type = v.shape().type;
      ElementType compute = AccumulationType(type);
      any_overflow = ir::Binary(ir::op::kOr, any_overflow, ir::Unary(ir::op::kNot, AllFinite(v)));
      Value product = Mul(ir::Convert(v, compute), ir::Broadcast(ir::Convert(inv, compute), v.shape().dims));
      unscaled.push_back(AtenFromIr(ir::Convert(product, type), device));
    }
    Value one = ScalarLike(1, found);
    Value flag = ir::Select(ir::Broadcast(any_overflow, found.shape().dims), one, found);
    return std::make_tuple(std::move(unscaled), AtenFromIr(flag, device));
  });
}

// The loss scale after a step: times backoff_factor after an overflow (the growth
// tracker back to 0); otherwise the tracker counts the step and, at growth_interval
// successful steps in a row, the scale grows by growth_factor (unless that overflows
// float32) and the tracker starts again.
std::tuple<at::Tensor, at::Tensor> UpdateScale(const at::Tensor& self, const at::Tensor& growth_tracker,
                                               const at::Tensor& found_inf, double scale_growth_factor,
                                               double scale_backoff_factor, int64_t growth_interval) {
  XLA_COUNT("_amp_update_scale");
  const char* op = "_amp_update_scale_";
  CheckOneElement(self, at::kFloat, op, "current_scale");
  CheckOneElement(growth_tracker, at::kInt, op, "growth_tracker");
  CheckOneElement(found_inf, at::kFloat, op, "found_inf");
  int device = CommonDevice({&self, &growth_tracker, &found_inf}, op);
  return Checked(op, [&] {
    Value scale_in = GetIrInput(self, op).v;
    Value tracker_in = GetIrInput(growth_tracker, op).v;
    Value scale = AsScalar(scale_in);
    Value tracker = AsScalar(tracker_in);
    Value found = AsScalar(GetIrInput(found_inf, op).v);
    Value overflowed = Cmp(CompareDirection::kNe, found, ScalarLike(0, found));
    Value successful = Add(tracker, ScalarLike(1, tracker));
    Value grow = Cmp(CompareDirection::kEq, successful, ScalarLike(static_cast<double>(growth_interval), tracker));
    Value grown = Mul(scale, ScalarLike(scale_growth_factor, scale));
    Value grown_finite = AllFinite(grown);
    Value after_success = ir::Select(ir::Binary(ir::op::kAnd, grow, grown_finite), grown, scale);
    Value new_scale = ir::Select(overflowed, Mul(scale, ScalarLike(scale_backoff_factor, scale)), after_success);
    Value zero = ScalarLike(0, tracker);
    Value new_tracker = ir::Select(ir::Binary(ir::op::kOr, overflowed, grow), zero, successful);
    return std::make_tuple(AtenFromIr(AsShape(new_scale, scale_in.shape().dims), device),
                           AtenFromIr(AsShape(new_tracker, tracker_in.shape().dims), device));
  });
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale", TORCH_FN(NonFiniteCheckAndUnscale));
  m.impl("_amp_update_scale", TORCH_FN(UpdateScale));
}

}  // namespace torch_xla
