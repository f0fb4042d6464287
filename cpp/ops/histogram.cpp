// histc: the histogram of a tensor's values over equal bins.
#include <ATen/ATen.h>

#include <cmath>

#include "XLANativeFunctions.h"
#include "ir/builder_indexing.h"
#include "ops/kernel_util.h"
#include "ops/reduce_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::Shape;
using ir::Value;
using runtime::ElementType;
using namespace reduce_util;

}  // namespace

// Counts of the elements in `bins` equal bins over [min, max] (the data's range when
// min == max, widened by 1 on each side when that is one point). An element x falls in
// bin floor((x - min) * bins / (max - min)), the last bin closed; elements outside the
// range and NaNs are not counted. The counts are a scatter-add whose out-of-range
// indices (bins) XLA drops.
at::Tensor XLANativeFunctions::histc(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                                     const at::Scalar& max) {
  XLA_COUNT("histc");
  const char* op = "histc";
  TORCH_CHECK(bins > 0, "torch.histc(): bins must be > 0, but got ", bins, " for dimension 0");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "torch.histc: input tensor and bin_edges tensor should have the "
              "same dtype, but got input ", self.scalar_type(), " (a floating point input is expected)");
  double lo_arg = min.toDouble(), hi_arg = max.toDouble();
  TORCH_CHECK(std::isfinite(lo_arg) && std::isfinite(hi_arg), "torch.histc(): range of [", lo_arg, ", ", hi_arg,
              "] is not finite");
  TORCH_CHECK(lo_arg <= hi_arg, "torch.histc(): max must be larger than min");
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType t = x->shape().type;
  return Checked(op, [&] {
    // Positions compute in f32 for bf16 / f16: rounding (x - min) * bins to bf16 would move
    // elements near an edge into the next bin (or past the last).
    ElementType work = AccumulationType(t);
    Value flat = ir::Convert(ir::Reshape(x->GetIrValue(), {self.numel()}), work);
    Shape scalar(work, {});
    Value lo = ir::Constant(lo_arg, scalar), hi = ir::Constant(hi_arg, scalar);
    if (lo_arg == hi_arg && self.numel() > 0) {
      lo = MaxOrMin(flat, {0}, false);
      hi = MaxOrMin(flat, {0}, true);
    }
    Value same = ir::Compare(CompareDirection::kEq, lo, hi);
    lo = ir::Select(same, Sub(lo, ScalarLike(1, lo)), lo);
    hi = ir::Select(same, Add(hi, ScalarLike(1, hi)), hi);
    std::vector<int64_t> n = {self.numel()};
    Value lo_b = ir::Broadcast(lo, n), hi_b = ir::Broadcast(hi, n);
    Value pos = ir::Unary(ir::op::kFloor, Div(Mul(Sub(flat, lo_b), ir::Constant(static_cast<double>(bins), flat.shape())),
                                              Sub(hi_b, lo_b)));
    // The last bin is closed: x == max (or rounding up to bins) counts in it.
    Value index = ir::Convert(pos, ElementType::kS64);
    index = ir::Binary(ir::op::kMinimum, index, ir::Constant(static_cast<double>(bins - 1), index.shape()));
    Value inside = ir::Binary(ir::op::kAnd, ir::Compare(CompareDirection::kGe, flat, lo_b),
                              ir::Compare(CompareDirection::kLe, flat, hi_b));
    index = ir::Select(inside, index, ir::Constant(static_cast<double>(bins), index.shape()));
    Value counts = ir::Scatter(ir::ScatterKind::kAdd, ir::Constant(0, Shape(t, {bins})),
                               ir::Reshape(index, {self.numel(), 1}), ir::Constant(1, Shape(t, n)), {}, {0}, {0}, 1);
    return AtenFromIr(counts, x->device());
  });
}

}  // namespace torch_xla
