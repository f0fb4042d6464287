#include "ops/reduce_util.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace torch_xla::reduce_util {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Shape;

std::vector<int64_t> ReducedDims(at::OptionalIntArrayRef dim, int64_t rank, const char* op) {
  std::vector<int64_t> dims;
  if (!dim.has_value() || dim->empty()) {
    for (int64_t i = 0; i < rank; ++i) dims.push_back(i);
    return dims;
  }
  for (int64_t d : *dim) {
    int64_t w = WrapDim(d, rank, op);
    // A 0-dim tensor accepts dim 0 / -1 (as PyTorch does) and has nothing to reduce.
    if (rank > 0) {
      TORCH_CHECK(std::find(dims.begin(), dims.end(), w) == dims.end(), op, ": dim ", w,
                  " appears multiple times in the list of dims");
      dims.push_back(w);
    }
  }
  return dims;
}

Value NonZero(const Value& v) {
  if (v.shape().type == ElementType::kPred) return v;
  return ir::Compare(ir::CompareDirection::kNe, v, ScalarLike(0, v));
}

Value MaxOrMin(const Value& v, const std::vector<int64_t>& dims, bool is_max) {
  ElementType t = v.shape().type;
  if (t == ElementType::kPred) return ir::Reduce(is_max ? ReduceKind::kOr : ReduceKind::kAnd, v, dims);
  Value r = ir::Reduce(is_max ? ReduceKind::kMax : ReduceKind::kMin, v, dims);
  if (!IsFloat(t) || dims.empty()) return r;
  Value any_nan = ir::Reduce(ReduceKind::kOr, IsNan(v), dims);
  return ir::Select(any_nan, ScalarLike(std::nan(""), r), r);
}

Value Unreduce(const Value& v, const std::vector<int64_t>& dims, const std::vector<int64_t>& reduced) {
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i)
    if (std::find(reduced.begin(), reduced.end(), i) == reduced.end()) kept.push_back(i);
  return ir::BroadcastInDim(v, dims, kept);
}

Value ArgMaxOrMin(const Value& v, int64_t dim, bool is_max, Value* values) {
  const Shape& s = v.shape();
  if (s.rank() == 0) {
    if (values) *values = v;
    return ir::Constant(0, Shape(ElementType::kS64, {}));
  }
  Value m = MaxOrMin(v, {dim}, is_max);
  if (values) *values = m;
  Value mask = ir::Compare(ir::CompareDirection::kEq, v, Unreduce(m, s.dims, {dim}));
  // A NaN is the max (and the min); where the result is not NaN there is no NaN.
  if (IsFloat(s.type)) mask = ir::Binary(ir::op::kOr, mask, IsNan(v));
  Shape index_shape(ElementType::kS64, s.dims);
  Value iota = ir::Iota(index_shape, dim);
  Value candidates = ir::Select(mask, iota, ir::Constant(static_cast<double>(s.dims[dim]), index_shape));
  return ir::Reduce(ReduceKind::kMin, candidates, {dim});
}

Value WrapIndex(const Value& index, int64_t size) {
  Value zero = ScalarLike(0, index);
  Value negative = ir::Compare(ir::CompareDirection::kLt, index, zero);
  return ir::Select(negative, ir::Binary(ir::op::kAdd, index, ScalarLike(static_cast<double>(size), index)), index);
}

// Inclusive scan along `dim` in log2(n) steps: x[i] op= x[i - k] for k = 1, 2, 4, ...
// (each step a Pad of a Slice, all O(numel)). Used for products and integer sums.
Value Scan(Value v, int64_t dim, ir::OpKind op, double identity) {
  const std::vector<int64_t> dims = v.shape().dims;
  int64_t n = dims[dim];
  int64_t rank = static_cast<int64_t>(dims.size());
  Value pad_value = ir::Constant(identity, Shape(v.shape().type, {}));
  for (int64_t k = 1; k < n; k *= 2) {
    std::vector<int64_t> start(rank, 0), limit = dims, strides(rank, 1), low(rank, 0), high(rank, 0),
        interior(rank, 0);
    limit[dim] = n - k;
    low[dim] = k;
    Value shifted = ir::Pad(ir::Slice(v, start, limit, strides), pad_value, low, high, interior);
    v = ir::Binary(op, v, shifted);
  }
  return v;
}

// Inclusive scan along `dim` in log2(n) steps (Hillis-Steele): s[i] = combine(s[i - k], s[i])
// for k = 1, 2, 4, ... where i >= k. Each step is a Pad of a Slice and element-wise work:
// O(numel log n), no loop in the graph.
State Scan(State s, int64_t dim, const Combine& combine) {
  const std::vector<int64_t> dims = s[0].shape().dims;
  int64_t n = dims[dim];
  int64_t rank = static_cast<int64_t>(dims.size());
  Value iota = ir::Iota(Shape(ElementType::kS64, dims), dim);
  for (int64_t k = 1; k < n; k *= 2) {
    std::vector<int64_t> start(rank, 0), limit = dims, strides(rank, 1), low(rank, 0), high(rank, 0),
        interior(rank, 0);
    limit[dim] = n - k;
    low[dim] = k;
    State shifted;
    for (const Value& v : s) {
      Value pad = ir::Constant(0, Shape(v.shape().type, {}));
      shifted.push_back(ir::Pad(ir::Slice(v, start, limit, strides), pad, low, high, interior));
    }
    State combined = combine(shifted, s);
    // Positions before k have no earlier segment at this distance: they keep their state.
    Value has_earlier = ir::Compare(CompareDirection::kGe, iota, ScalarLike(static_cast<double>(k), iota));
    for (size_t j = 0; j < s.size(); ++j) s[j] = ir::Select(has_earlier, combined[j], s[j]);
  }
  return s;
}

}  // namespace torch_xla::reduce_util
