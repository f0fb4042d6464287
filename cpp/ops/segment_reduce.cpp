// segment_reduce: reductions over consecutive segments of given lengths or offsets.
#include <ATen/ATen.h>

#include <limits>

#include "XLANativeFunctions.h"
#include "aten/transfer.h"
#include "ir/builder_indexing.h"
#include "ops/indexing_util.h"
#include "ops/kernel_util.h"
#include "ops/reduce_util.h"
#include "runtime/metrics.h"

namespace torch_xla {
namespace {

using ir::ScatterKind;
using ir::Shape;
using ir::Value;
using runtime::ElementType;
using namespace reduce_util;
using namespace indexing_util;

}  // namespace

// ---- segment_reduce ------------------------------------------------------------------
// segment_reduce with 1-d lengths or offsets (values on the device): the segment of
// each position along axis is the number of segment ends at or before it, and the data
// is scatter-reduced into the segments, starting from `initial` (or the reduction's
// identity). Positions past the last segment fall outside and are dropped. mean divides
// by the length; an empty segment keeps `initial`, or is NaN without it (as on the CPU).
// Batched (n-d) lengths run on the CPU.
at::Tensor XLANativeFunctions::segment_reduce(const at::Tensor& data, c10::string_view reduce,
                                              const std::optional<at::Tensor>& lengths,
                                              const std::optional<at::Tensor>& indices,
                                              const std::optional<at::Tensor>& offsets, int64_t axis, bool unsafe,
                                              const std::optional<at::Scalar>& initial) {
  const char* op = "segment_reduce";
  const at::Tensor* len = DefinedOrNull(lengths);
  const at::Tensor* off = DefinedOrNull(offsets);
  TORCH_CHECK(len || off, op, ": Either lengths or offsets must be defined");
  TORCH_CHECK(!DefinedOrNull(indices), op, ": indices based reduction is not supported yet");
  const at::Tensor& segments = len ? *len : *off;
  if (segments.dim() != 1 || data.dim() == 0) {
    static metrics::Counter* fallback = metrics::GetCounter("aten::segment_reduce");
    fallback->Add();
    auto cpu = [](const at::Tensor* t) { return t ? std::optional<at::Tensor>(t->cpu()) : std::nullopt; };
    return at::segment_reduce(data.cpu(), reduce, cpu(len), std::nullopt, cpu(off), axis, unsafe, initial)
        .to(data.device());
  }
  XLA_COUNT("segment_reduce");
  TORCH_CHECK(reduce == "sum" || reduce == "mean" || reduce == "max" || reduce == "min" || reduce == "prod", op,
              ": reduce must be one of sum, mean, max, min or prod, got ", std::string(reduce));
  TORCH_CHECK(at::isFloatingType(data.scalar_type()), op, ": expected a floating data type, got ",
              DescribeTensor(data));
  CheckIndexType(segments, op, true);
  XlaTensorPtr x = GetXlaTensor(data, op);
  const Shape& s = x->shape();
  const int64_t d = WrapDim(axis, s.rank(), op);
  const int64_t n = s.dims[d];
  const int64_t count = len ? segments.size(0) : segments.size(0) - 1;
  TORCH_CHECK(count >= 0, op, ": offsets must have at least one element, got ", DescribeTensor(segments));
  std::vector<int64_t> out_dims = s.dims;
  out_dims[d] = count;
  ElementType type = s.type;
  ElementType acc = AccumulationType(type);
  return Checked(op, [&] {
    Value seg = IsXlaTensor(segments) ? GetXlaTensor(segments, op)->GetIrValue()
                                      : FromCpuTensor(segments.contiguous(), x->device())->GetIrValue();
    seg = ir::Convert(seg, ElementType::kS64);
    Value ends, sizes;
    if (len) {
      ends = count > 0 ? Scan(seg, 0, ir::op::kAdd, 0) : seg;
      sizes = seg;
    } else {
      Value starts = ir::Slice(seg, {0}, {count}, {1});
      ends = ir::Slice(seg, {1}, {count + 1}, {1});
      sizes = ir::Binary(ir::op::kSubtract, ends, starts);
    }
    double identity = reduce == "max"   ? -std::numeric_limits<double>::infinity()
                      : reduce == "min" ? std::numeric_limits<double>::infinity()
                      : reduce == "prod" ? 1.0
                                         : 0.0;
    Shape out_shape(acc, out_dims);
    Value base = initial ? ir::Broadcast(IrScalar(*initial, acc), out_dims) : ir::Constant(identity, out_shape);
    if (count == 0 || n == 0 || s.numel() == 0) {
      if (reduce == "mean" && !initial) base = ir::Constant(std::numeric_limits<double>::quiet_NaN(), out_shape);
      return AtenFromIr(ir::Convert(base, type), x->device());
    }
    // The segment of each position: how many segment ends are at or before it.
    Value positions = ir::Iota(Shape(ElementType::kS64, {n, count}), 0);
    Value ended = ir::Compare(ir::CompareDirection::kLe, ir::BroadcastInDim(ends, {n, count}, {1}), positions);
    Value segment_of = ir::Reduce(ir::ReduceKind::kSum, ir::Convert(ended, ElementType::kS64), {1});
    std::vector<int64_t> window;
    for (int64_t i = 0; i < s.rank(); ++i)
      if (i != d) window.push_back(i);
    ScatterKind kind = reduce == "max"    ? ScatterKind::kMax
                       : reduce == "min"  ? ScatterKind::kMin
                       : reduce == "prod" ? ScatterKind::kMultiply
                                          : ScatterKind::kAdd;
    Value values = ir::Convert(x->GetIrValue(), acc);
    Value result = ir::Scatter(kind, base, ir::Reshape(segment_of, {n, 1}), values, window, {d}, {d}, 1);
    if (reduce == "mean") {
      Value size_f = ir::BroadcastInDim(ir::Convert(sizes, acc), out_dims, {d});
      Value empty = ir::Compare(ir::CompareDirection::kEq, size_f, ScalarLike(0, size_f));
      Value mean = ir::Binary(ir::op::kDivide, result, ir::Select(empty, ScalarLike(1, size_f), size_f));
      Value when_empty = initial ? result : ir::Constant(std::numeric_limits<double>::quiet_NaN(), out_shape);
      result = ir::Select(empty, when_empty, mean);
    }
    return AtenFromIr(ir::Convert(result, type), x->device());
  });
}

}  // namespace torch_xla
