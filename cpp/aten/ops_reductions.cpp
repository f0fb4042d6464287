// Cumulative and NaN-aware reductions: cummax, cummin, logcumsumexp (log-depth scans),
// nansum, nanmedian, mode, aminmax, count_nonzero, histc, renorm.
#include <ATen/ATen.h>

#include <cmath>
#include <functional>
#include <limits>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"
#include "aten/reduce_util.h"
#include "ir/builder_indexing.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Shape;
using ir::Value;
using runtime::ElementType;
using namespace reduce_util;

// ---- scans ----------------------------------------------------------------------------
// A scan state is a tuple of values of equal dimensions; Combine(earlier, later) returns
// the state after `later`'s segment when `earlier`'s segment came first. It must be
// associative.
using State = std::vector<Value>;
using Combine = std::function<State(const State& earlier, const State& later)>;

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

// Running max (min) with its index, as PyTorch's cummax/cummin: a later element replaces
// the running one when it is >= (<=) it or NaN; once NaN, the running value stays NaN.
State CumExtreme(const Value& v, int64_t dim, bool is_max) {
  ElementType t = v.shape().type;
  Value iota = ir::Iota(Shape(ElementType::kS64, v.shape().dims), dim);
  bool floating = IsFloat(t);
  Combine combine = [&](const State& e, const State& l) {
    Value take_later = ir::Compare(is_max ? CompareDirection::kGe : CompareDirection::kLe, l[0], e[0]);
    if (floating) take_later = ir::Binary(ir::op::kAnd, ir::Binary(ir::op::kOr, take_later, IsNan(l[0])),
                                          ir::Unary(ir::op::kNot, IsNan(e[0])));
    return State{ir::Select(take_later, l[0], e[0]), ir::Select(take_later, l[1], e[1])};
  };
  return Scan({v, iota}, dim, combine);
}

// log(exp(a) + exp(b)) without overflow: max + log1p(exp(-|a - b|)); a == b (infinities
// included) gives a + log 2; a NaN gives NaN.
Value LogAddExp(const Value& a, const Value& b) {
  Value m = ir::Binary(ir::op::kMaximum, a, b);
  Value diff = ir::Unary(ir::op::kAbs, Sub(a, b));
  Value r = Add(m, ir::Unary(ir::op::kLog1p, ir::Unary(ir::op::kExp, ir::Unary(ir::op::kNegate, diff))));
  Value same = ir::Compare(CompareDirection::kEq, a, b);
  r = ir::Select(same, Add(a, ScalarLike(std::log(2.0), a)), r);
  Value nan = ir::Binary(ir::op::kOr, IsNan(a), IsNan(b));
  return ir::Select(nan, Add(a, b), r);
}

// cummax / cummin of any rank: a 0-dim tensor is its own result at index 0.
std::tuple<at::Tensor, at::Tensor> CumMaxMin(const at::Tensor& self, int64_t dim, bool is_max, const char* op) {
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, std::max<int64_t>(s.rank(), 1), op);
  TORCH_CHECK(!runtime::IsComplex(s.type), op, ": complex input is not supported, got ", DescribeTensor(self));
  Value v = x->GetIrValue();
  if (s.rank() == 0 || s.numel() == 0)
    return {AtenFromIr(v, x->device()), AtenFromIr(ir::Constant(0, Shape(ElementType::kS64, s.dims)), x->device())};
  return Checked(op, [&] {
    // Predicates scan as uint8 (0 < 1 as false < true).
    Value work = s.type == ElementType::kPred ? ir::Convert(v, ElementType::kU8) : v;
    State r = CumExtreme(work, d, is_max);
    return std::make_tuple(AtenFromIr(ir::Convert(r[0], s.type), x->device()), AtenFromIr(r[1], x->device()));
  });
}

// The value at a per-slice position `pos` (dim d removed) of `v` along `d`.
Value AtPosition(const Value& v, const Value& iota, const Value& pos, int64_t d) {
  Value pick = ir::Compare(CompareDirection::kEq, iota, Unreduce(pos, v.shape().dims, {d}));
  return ir::Reduce(ReduceKind::kSum, ir::Select(pick, v, ScalarLike(0, v)), {d});
}

std::tuple<at::Tensor, at::Tensor> ValuesAndIndices(Value value, Value index, const std::vector<int64_t>& dims,
                                                    int64_t d, bool keepdim, int device) {
  if (keepdim) {
    value = ir::Reshape(value, KeepDims(dims, {d}));
    index = ir::Reshape(index, KeepDims(dims, {d}));
  }
  return std::make_tuple(AtenFromIr(value, device), AtenFromIr(index, device));
}

// The lower median of the non-NaN elements of `v` along `d` (size >= 1) and its index;
// a slice of NaNs only has median NaN, here at the index of its first NaN (PyTorch's CPU
// kernel returns the index std::nth_element leaves there, which varies with the size).
std::pair<Value, Value> NanMedian(const Value& v, int64_t d) {
  const Shape& s = v.shape();
  Value iota = ir::Iota(Shape(ElementType::kS64, s.dims), d);
  std::vector<Value> sorted = s.dims[d] > 1 ? ir::Sort({v, iota}, d, false) : std::vector<Value>{v, iota};
  std::vector<int64_t> out = s.dims;
  out.erase(out.begin() + d);
  Value count = ir::Constant(static_cast<double>(s.dims[d]), Shape(ElementType::kS64, out));
  if (IsFloat(s.type))
    count = ir::Reduce(ReduceKind::kSum, ir::Convert(ir::Unary(ir::op::kNot, IsNan(v)), ElementType::kS64), {d});
  // (count - 1) / 2 truncates toward zero: position 0 for a slice of NaNs only.
  Value pos = Div(Sub(count, ScalarLike(1, count)), ScalarLike(2, count));
  return {AtPosition(sorted[0], iota, pos, d), AtPosition(sorted[1], iota, pos, d)};
}

void CheckOrderable(const at::Tensor& self, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool && !at::isComplexType(self.scalar_type()), "\"", op,
                              "\" not implemented for '", self.scalar_type(), "'");
}

// The most frequent value along `d` (the smallest of equally frequent ones) and the
// index of its last occurrence: sort (stably), then find the longest run of equal values.
// PyTorch's CPU kernel returns the index at the end of the run after std::sort, which is
// the last occurrence up to 16 elements and some occurrence beyond. A run starts where a sorted value differs from its predecessor; its
// start position reaches its end by a running max.
std::pair<Value, Value> Mode(const Value& v, int64_t d) {
  const Shape& s = v.shape();
  int64_t n = s.dims[d];
  int64_t rank = s.rank();
  Shape index_shape(ElementType::kS64, s.dims);
  Value iota = ir::Iota(index_shape, d);
  if (n == 1) {
    std::vector<int64_t> out = s.dims;
    out.erase(out.begin() + d);
    return {ir::Reshape(v, out), ir::Constant(0, Shape(ElementType::kS64, out))};
  }
  std::vector<Value> sorted = ir::Sort({v, iota}, d, false);
  const Value& sv = sorted[0];
  std::vector<int64_t> start(rank, 0), limit = s.dims, strides(rank, 1), low(rank, 0), high(rank, 0), interior(rank, 0);
  Value pad = ir::Constant(0, Shape(s.type, {}));
  // prev[i] = sv[i - 1], next[i] = sv[i + 1] (padded at the ends, where iota decides).
  limit[d] = n - 1;
  low[d] = 1;
  Value prev = ir::Pad(ir::Slice(sv, start, limit, strides), pad, low, high, interior);
  start[d] = 1;
  limit[d] = n;
  low[d] = 0;
  high[d] = 1;
  Value next = ir::Pad(ir::Slice(sv, start, limit, strides), pad, low, high, interior);
  Value first = ir::Compare(CompareDirection::kEq, iota, ScalarLike(0, iota));
  Value last = ir::Compare(CompareDirection::kEq, iota, ScalarLike(static_cast<double>(n - 1), iota));
  Value run_begins = ir::Binary(ir::op::kOr, first, ir::Compare(CompareDirection::kNe, sv, prev));
  Value run_ends = ir::Binary(ir::op::kOr, last, ir::Compare(CompareDirection::kNe, sv, next));
  Combine running_max = [](const State& e, const State& l) {
    return State{ir::Binary(ir::op::kMaximum, e[0], l[0])};
  };
  Value run_start = Scan({ir::Select(run_begins, iota, ScalarLike(0, iota))}, d, running_max)[0];
  Value length = Add(Sub(iota, run_start), ScalarLike(1, iota));
  Value freq = ir::Select(run_ends, length, ScalarLike(0, iota));
  Value pos = ArgMaxOrMin(freq, d, true, nullptr);  // the first longest run: the smallest value
  return {AtPosition(sv, iota, pos, d), AtPosition(sorted[1], iota, pos, d)};
}

}  // namespace

// ---- cummax, cummin, logcumsumexp ------------------------------------------------------

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::cummax(const at::Tensor& self, int64_t dim) {
  XLA_COUNT("cummax");
  return CumMaxMin(self, dim, true, "cummax");
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::cummin(const at::Tensor& self, int64_t dim) {
  XLA_COUNT("cummin");
  return CumMaxMin(self, dim, false, "cummin");
}

at::Tensor XLANativeFunctions::_logcumsumexp(const at::Tensor& self, int64_t dim) {
  XLA_COUNT("_logcumsumexp");
  const char* op = "logcumsumexp";
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  TORCH_CHECK(IsFloat(s.type), op, ": expected a floating point input, got ", DescribeTensor(self));
  int64_t d = WrapDim(dim, std::max<int64_t>(s.rank(), 1), op);
  Value v = ir::Convert(x->GetIrValue(), AccumulationType(s.type));
  if (s.rank() > 0 && s.numel() > 0) {
    Combine combine = [](const State& e, const State& l) { return State{LogAddExp(e[0], l[0])}; };
    v = Checked(op, [&] { return Scan({v}, d, combine)[0]; });
  }
  return AtenFromIr(ir::Convert(v, s.type), x->device());
}

// ---- nansum, count_nonzero, aminmax ----------------------------------------------------

at::Tensor XLANativeFunctions::nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                      std::optional<at::ScalarType> dtype) {
  XLA_COUNT("nansum");
  const char* op = "nansum";
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  TORCH_CHECK(!runtime::IsComplex(s.type), op, ": complex input is not supported, got ", DescribeTensor(self));
  ElementType out = dtype ? ElementTypeOf(*dtype) : (IsFloat(s.type) ? s.type : ElementType::kS64);
  std::vector<int64_t> dims = ReducedDims(dim, s.rank(), op);
  Value v = x->GetIrValue();
  if (IsFloat(s.type)) v = ir::Select(IsNan(v), ScalarLike(0, v), v);
  Value r = ir::Reduce(ReduceKind::kSum, ir::Convert(v, AccumulationType(out)), dims);
  r = ir::Convert(r, out);
  if (keepdim) r = ir::Reshape(r, KeepDims(s.dims, dims));
  return AtenFromIr(r, x->device());
}

at::Tensor XLANativeFunctions::count_nonzero(const at::Tensor& self, at::IntArrayRef dim) {
  XLA_COUNT("count_nonzero");
  const char* op = "count_nonzero";
  XlaTensorPtr x = GetXlaTensor(self, op);
  std::vector<int64_t> dims = ReducedDims(dim, x->shape().rank(), op);
  Value r = ir::Reduce(ReduceKind::kSum, ir::Convert(NonZero(x->GetIrValue()), ElementType::kS64), dims);
  return AtenFromIr(r, x->device());
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::aminmax(const at::Tensor& self, std::optional<int64_t> dim,
                                                               bool keepdim) {
  XLA_COUNT("aminmax");
  const char* op = "aminmax";
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  TORCH_CHECK(!runtime::IsComplex(s.type), op, ": complex input is not supported, got ", DescribeTensor(self));
  std::vector<int64_t> dims;
  if (dim) {
    int64_t d = WrapDim(*dim, std::max<int64_t>(s.rank(), 1), op);
    if (s.rank() > 0) {
      TORCH_CHECK(s.dims[d] > 0, "aminmax(): Expected reduction dim ", d, " to have non-zero size (input ",
                  DescribeTensor(self), ")");
      dims.push_back(d);
    }
  } else {
    TORCH_CHECK(s.numel() > 0, "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity (input ", DescribeTensor(self), ")");
    for (int64_t i = 0; i < s.rank(); ++i) dims.push_back(i);
  }
  Value v = x->GetIrValue();
  Value lo = MaxOrMin(v, dims, false), hi = MaxOrMin(v, dims, true);
  if (keepdim) {
    std::vector<int64_t> kept = dim ? KeepDims(s.dims, dims) : std::vector<int64_t>(s.rank(), 1);
    lo = ir::Reshape(lo, kept);
    hi = ir::Reshape(hi, kept);
  }
  return std::make_tuple(AtenFromIr(lo, x->device()), AtenFromIr(hi, x->device()));
}

// ---- nanmedian, mode --------------------------------------------------------------------

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::nanmedian(const at::Tensor& self, int64_t dim, bool keepdim) {
  XLA_COUNT("nanmedian");
  const char* op = "nanmedian";
  CheckOrderable(self, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, std::max<int64_t>(s.rank(), 1), op);
  TORCH_CHECK(s.rank() == 0 || s.dims[d] > 0, "nanmedian(): Expected reduction dim ", d,
              " to have non-zero size (input ", DescribeTensor(self), ")");
  if (s.rank() == 0)
    return {AtenFromIr(x->GetIrValue(), x->device()),
            AtenFromIr(ir::Constant(0, Shape(ElementType::kS64, {})), x->device())};
  return Checked(op, [&] {
    auto [value, index] = NanMedian(x->GetIrValue(), d);
    return ValuesAndIndices(value, index, s.dims, d, keepdim, x->device());
  });
}

at::Tensor XLANativeFunctions::nanmedian(const at::Tensor& self) {
  XLA_COUNT("nanmedian");
  const char* op = "nanmedian";
  CheckOrderable(self, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType t = x->shape().type;
  // As PyTorch: the median of nothing is NaN.
  if (self.numel() == 0) return AtenFromIr(ir::Constant(std::nan(""), Shape(t, {})), x->device());
  return Checked(op, [&] {
    Value flat = ir::Reshape(x->GetIrValue(), {self.numel()});
    return AtenFromIr(NanMedian(flat, 0).first, x->device());
  });
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::mode(const at::Tensor& self, int64_t dim, bool keepdim) {
  XLA_COUNT("mode");
  const char* op = "mode";
  TORCH_CHECK_NOT_IMPLEMENTED(!at::isComplexType(self.scalar_type()), "\"", op, "\" not implemented for '",
                              self.scalar_type(), "'");
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, std::max<int64_t>(s.rank(), 1), op);
  TORCH_CHECK(s.rank() == 0 || s.dims[d] > 0, "mode(): Expected reduction dim ", d, " to have non-zero size (input ",
              DescribeTensor(self), ")");
  if (s.rank() == 0)
    return {AtenFromIr(x->GetIrValue(), x->device()),
            AtenFromIr(ir::Constant(0, Shape(ElementType::kS64, {})), x->device())};
  return Checked(op, [&] {
    Value v = x->GetIrValue();
    if (s.type == ElementType::kPred) v = ir::Convert(v, ElementType::kU8);
    auto [value, index] = Mode(v, d);
    return ValuesAndIndices(ir::Convert(value, s.type), index, s.dims, d, keepdim, x->device());
  });
}

// ---- histc, renorm ------------------------------------------------------------------------

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

// Each slice along `dim` whose p-norm exceeds maxnorm is scaled to norm maxnorm:
// factor maxnorm / (norm + 1e-7), rounded to the input's type, as PyTorch's kernel.
at::Tensor XLANativeFunctions::renorm(const at::Tensor& self, const at::Scalar& p, int64_t dim,
                                      const at::Scalar& maxnorm) {
  XLA_COUNT("renorm");
  const char* op = "renorm";
  TORCH_CHECK(!p.isComplex(), "renorm: p must be real-valued");
  TORCH_CHECK(p.toDouble() > 0.0, "renorm: non-positive-norm not supported");
  TORCH_CHECK(!maxnorm.isComplex(), "renorm: maxnorm must be real-valued");
  TORCH_CHECK(maxnorm.toDouble() >= 0.0, "renorm: expected maxnorm to be >= 0 but got ", maxnorm.toDouble());
  TORCH_CHECK(self.dim() > 1, "renorm: input needs at least 2 dimensions, got ", self.dim(), " dimensions");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(self));
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, s.rank(), op);
  std::vector<int64_t> reduce;
  for (int64_t i = 0; i < s.rank(); ++i)
    if (i != d) reduce.push_back(i);
  at::ScalarType acc = self.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor norm_t = linalg_vector_norm(self, p, at::IntArrayRef(reduce), true, acc);
  Value norm = GetXlaTensor(norm_t, op)->GetIrValue();
  Value limit = ScalarLike(maxnorm.toDouble(), norm);
  Value factor = ir::Select(ir::Compare(CompareDirection::kGt, norm, limit), Div(limit, Add(norm, ScalarLike(1e-7, norm))),
                            ScalarLike(1, norm));
  factor = ir::Broadcast(ir::Convert(factor, s.type), s.dims);
  return AtenFromIr(Mul(x->GetIrValue(), factor), x->device());
}

}  // namespace torch_xla
