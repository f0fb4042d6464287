// gather, scatter (with a tensor or a scalar source, and a reduce mode), scatter_add and
// scatter_reduce.
//
// Indices are checked on the host for dtype and shape only: their values live on the
// device. Negative indices wrap as in PyTorch. Out-of-range indices do not raise (as
// they do on the CPU): reads (gather) clamp them into range, writes (scatter, scatter_add, scatter_reduce) drop them,
// which is XLA's behaviour for stablehlo.gather / stablehlo.scatter.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ir/builder_indexing.h"
#include "ops/indexing_util.h"
#include "ops/kernel_util.h"
#include "ops/reduce_util.h"

namespace torch_xla {
namespace {

using ir::ScatterKind;
using ir::Shape;
using ir::Value;
using namespace reduce_util;
using namespace indexing_util;

// Shape checks of gather / scatter: same rank, index.size(d) <= self.size(d) for d != dim
// (and <= src.size(d) for every d).
void CheckGatherShapes(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor* src,
                       const char* op) {
  TORCH_CHECK(index.dim() == self.dim() || (index.dim() <= 1 && self.dim() <= 1), op,
              "(): Index tensor must have the same number of dimensions as ", src ? "self" : "input", " tensor (",
              DescribeTensor(self), " and index ", DescribeTensor(index), ")");
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (d != dim)
      TORCH_CHECK(index.size(d) <= (self.dim() ? self.size(d) : 1), op, "(): Size does not match at dimension ", d,
                  " expected index ", DescribeTensor(index), " to be no larger than self ", DescribeTensor(self),
                  " apart from dimension ", dim);
    if (src)
      TORCH_CHECK(index.size(d) <= (src->dim() ? src->size(d) : 1), op, "(): Expected index ",
                  DescribeTensor(index), " to be no larger than src ", DescribeTensor(*src), " in dimension ", d);
  }
}

at::Tensor GatherImpl(const at::Tensor& self, int64_t dim, const at::Tensor& index, const char* op) {
  // Eager gather takes int32 indices too (they are widened to s64 below).
  CheckIndexType(index, op, true);
  XlaTensorPtr x = GetXlaTensor(self, op);
  int64_t d = WrapDim(dim, self.dim(), op);
  CheckGatherShapes(self, d, index, nullptr, op);
  const Shape& s = x->shape();
  std::vector<int64_t> out_dims(index.sizes().begin(), index.sizes().end());
  if (index.numel() == 0) return AtenFromIr(ir::Constant(0, Shape(s.type, out_dims)), x->device());
  return Checked(op, [&] {
    // A 0-dim self has one element: every (clamped) index reads it.
    if (s.rank() == 0) return AtenFromIr(ir::Broadcast(x->GetIrValue(), out_dims), x->device());
    Value coords = Coordinates(IndexValue(index, s.dims[d], op), d);
    int64_t rank = s.rank();
    return AtenFromIr(ir::Gather(x->GetIrValue(), coords, {}, Range(0, rank), Range(0, rank), rank,
                                 std::vector<int64_t>(rank, 1)),
                      x->device());
  });
}

// self with `updates` (index-shaped) combined in at (index along dim).
at::Tensor ScatterImpl(const at::Tensor& self, int64_t dim, const at::Tensor& index, const Value& updates,
                       ScatterKind kind, const char* op) {
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, self.dim(), op);
  if (index.numel() == 0) return AtenFromIr(x->GetIrValue(), x->device());
  return Checked(op, [&] {
    if (s.rank() == 0) {
      Value u = ir::Reshape(updates, {});
      switch (kind) {
        case ScatterKind::kAdd: return AtenFromIr(ir::Binary(ir::op::kAdd, x->GetIrValue(), u), x->device());
        case ScatterKind::kMultiply:
          return AtenFromIr(ir::Binary(ir::op::kMultiply, x->GetIrValue(), u), x->device());
        default: return AtenFromIr(u, x->device());
      }
    }
    Value coords = Coordinates(IndexValue(index, s.dims[d], op), d);
    int64_t rank = s.rank();
    return AtenFromIr(ir::Scatter(kind, x->GetIrValue(), coords, updates, {}, Range(0, rank), Range(0, rank), rank),
                      x->device());
  });
}

// src cut to the index's shape, in self's type.
Value SourceUpdates(const at::Tensor& self, const at::Tensor& index, const at::Tensor& src, const char* op) {
  TORCH_CHECK(src.scalar_type() == self.scalar_type(), op, "(): Expected self.dtype to be equal to src.dtype (",
              DescribeTensor(self), " and src ", DescribeTensor(src), ")");
  Value v = GetXlaTensor(src, op)->GetIrValue();
  std::vector<int64_t> limit(index.sizes().begin(), index.sizes().end());
  if (v.shape().rank() != static_cast<int64_t>(limit.size())) return ir::Reshape(v, limit);
  return ir::Slice(v, std::vector<int64_t>(limit.size(), 0), limit, std::vector<int64_t>(limit.size(), 1));
}

Value ScalarUpdates(const at::Tensor& self, const at::Tensor& index, const at::Scalar& value) {
  std::vector<int64_t> dims(index.sizes().begin(), index.sizes().end());
  return ir::Broadcast(IrScalar(value, ElementTypeOf(self.scalar_type())), dims);
}

ScatterKind ReduceKindOf(c10::string_view reduce, const char* op) {
  if (reduce == "add") return ScatterKind::kAdd;
  if (reduce == "multiply") return ScatterKind::kMultiply;
  TORCH_CHECK(false, op, "(): reduce argument must be either add or multiply, got ", std::string(reduce));
}

void CheckScatter(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor* src,
                  const char* op) {
  CheckIndexType(index, op, false);
  int64_t d = WrapDim(dim, self.dim(), op);
  CheckGatherShapes(self, d, index, src, op);
}

}  // namespace

// ---- gather, scatter -----------------------------------------------------------------
at::Tensor XLANativeFunctions::gather(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                      bool /*sparse_grad*/) {
  XLA_COUNT("gather");
  return GatherImpl(self, dim, index, "gather");
}

at::Tensor XLANativeFunctions::scatter(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                       const at::Tensor& src) {
  XLA_COUNT("scatter");
  CheckScatter(self, dim, index, &src, "scatter");
  return ScatterImpl(self, dim, index, SourceUpdates(self, index, src, "scatter"), ScatterKind::kReplace, "scatter");
}

at::Tensor XLANativeFunctions::scatter(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                       const at::Scalar& value) {
  XLA_COUNT("scatter");
  CheckScatter(self, dim, index, nullptr, "scatter");
  return ScatterImpl(self, dim, index, ScalarUpdates(self, index, value), ScatterKind::kReplace, "scatter");
}

at::Tensor XLANativeFunctions::scatter(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                       const at::Tensor& src, c10::string_view reduce) {
  XLA_COUNT("scatter");
  ScatterKind kind = ReduceKindOf(reduce, "scatter");
  CheckScatter(self, dim, index, &src, "scatter");
  return ScatterImpl(self, dim, index, SourceUpdates(self, index, src, "scatter"), kind, "scatter");
}

at::Tensor XLANativeFunctions::scatter(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                       const at::Scalar& value, c10::string_view reduce) {
  XLA_COUNT("scatter");
  ScatterKind kind = ReduceKindOf(reduce, "scatter");
  CheckScatter(self, dim, index, nullptr, "scatter");
  return ScatterImpl(self, dim, index, ScalarUpdates(self, index, value), kind, "scatter");
}

at::Tensor XLANativeFunctions::scatter_add(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                           const at::Tensor& src) {
  XLA_COUNT("scatter_add");
  CheckScatter(self, dim, index, &src, "scatter_add");
  return ScatterImpl(self, dim, index, SourceUpdates(self, index, src, "scatter_add"), ScatterKind::kAdd,
                     "scatter_add");
}

// scatter_reduce: reduce "sum", "prod", "mean", "amax" or "amin" of the src values at
// each index, with self's value too when include_self. (amax / amin use XLA's max / min,
// whose result for NaN inputs may differ from PyTorch's NaN propagation.)
at::Tensor XLANativeFunctions::scatter_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                              const at::Tensor& src, c10::string_view reduce, bool include_self) {
  XLA_COUNT("scatter_reduce");
  const char* op = "scatter_reduce";
  TORCH_CHECK(reduce == "sum" || reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin", op,
              "(): reduce argument must be either sum, prod, mean, amax or amin, got ", std::string(reduce));
  CheckScatter(self, dim, index, &src, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  if (index.numel() == 0) return AtenFromIr(x->GetIrValue(), x->device());
  return Checked(op, [&] {
    // A 0-dim self works as a 1-element vector.
    const bool scalar = s.rank() == 0;
    const int64_t rank = scalar ? 1 : s.rank();
    const int64_t d = scalar ? 0 : WrapDim(dim, s.rank(), op);
    std::vector<int64_t> idx_dims = scalar ? std::vector<int64_t>{1} : index.sizes().vec();
    Value self_v = ir::Reshape(x->GetIrValue(), scalar ? std::vector<int64_t>{1} : s.dims);
    Value updates = ir::Reshape(SourceUpdates(self, index, src, op), idx_dims);
    Value coords = Coordinates(ir::Reshape(IndexValue(index, scalar ? 1 : s.dims[d], op), idx_dims), d);
    auto scatter = [&](ScatterKind kind, const Value& base, const Value& values) {
      return ir::Scatter(kind, base, coords, values, {}, Range(0, rank), Range(0, rank), rank);
    };
    Value base = self_v;
    Value result;
    if (reduce == "amax" || reduce == "amin") {
      ScatterKind kind = reduce == "amax" ? ScatterKind::kMax : ScatterKind::kMin;
      // Without self: first put one of the values at each target, then reduce all of them.
      if (!include_self) base = scatter(ScatterKind::kReplace, base, updates);
      result = scatter(kind, base, updates);
    } else {
      const bool is_prod = reduce == "prod";
      if (!include_self) base = scatter(ScatterKind::kReplace, base, ScalarLike(is_prod ? 1 : 0, updates));
      result = scatter(is_prod ? ScatterKind::kMultiply : ScatterKind::kAdd, base, updates);
      if (reduce == "mean") {
        Shape count_shape(s.type, self_v.shape().dims);
        Value counts = scatter(ScatterKind::kAdd, ir::Constant(include_self ? 1 : 0, count_shape),
                               ir::Constant(1, updates.shape()));
        counts = ir::Select(ir::Compare(ir::CompareDirection::kEq, counts, ScalarLike(0, counts)), ScalarLike(1, counts), counts);
        Value q = ir::Binary(ir::op::kDivide, result, counts);
        if (!IsFloat(s.type)) {
          // Integer mean rounds down, as PyTorch's floor division (counts are positive).
          Value rem = ir::Binary(ir::op::kRemainder, result, counts);
          Value adjust = ir::Binary(ir::op::kAnd, ir::Compare(ir::CompareDirection::kNe, rem, ScalarLike(0, rem)),
                                    ir::Compare(ir::CompareDirection::kLt, result, ScalarLike(0, result)));
          q = ir::Select(adjust, ir::Binary(ir::op::kSubtract, q, ScalarLike(1, q)), q);
        }
        result = q;
      }
    }
    return AtenFromIr(ir::Reshape(result, s.dims), x->device());
  });
}

}  // namespace torch_xla
