// Sorting and order-statistic kernels: sort, topk, kthvalue, median, nanmedian and mode.
// Sorts are stable (stablehlo.sort on the values and an iota); NaN sorts as the largest
// value.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "XLANativeFunctions.h"
#include "ir/builder_indexing.h"
#include "ops/kernel_util.h"
#include "ops/reduce_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Shape;
using ir::Value;
using runtime::ElementType;
using namespace reduce_util;

}  // namespace

// ---- sort, topk ----------------------------------------------------------------------------
namespace {

std::tuple<at::Tensor, at::Tensor> SortImpl(const at::Tensor& self, int64_t dim, bool descending, const char* op) {
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, s.rank(), op);
  Value v = x->GetIrValue();
  if (s.rank() == 0 || s.dims[d] <= 1) {
    Value zeros = ir::Constant(0, Shape(ElementType::kS64, s.dims));
    return {AtenFromIr(v, x->device()), AtenFromIr(zeros, x->device())};
  }
  return Checked(op, [&] {
    Value iota = ir::Iota(Shape(ElementType::kS64, s.dims), d);
    std::vector<Value> sorted = ir::Sort({v, iota}, d, descending);
    return std::make_tuple(AtenFromIr(sorted[0], x->device()), AtenFromIr(sorted[1], x->device()));
  });
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::sort(const at::Tensor& self, int64_t dim, bool descending) {
  XLA_COUNT("sort");
  return SortImpl(self, dim, descending, "sort");
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::sort(const at::Tensor& self, std::optional<bool> /*stable*/,
                                                            int64_t dim, bool descending) {
  // Always stable: equal elements keep their order, as PyTorch's CPU sort does.
  XLA_COUNT("sort");
  return SortImpl(self, dim, descending, "sort");
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::topk(const at::Tensor& self, int64_t k, int64_t dim,
                                                            bool largest, bool /*sorted*/) {
  XLA_COUNT("topk");
  const char* op = "topk";
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, s.rank(), op);
  int64_t size = s.rank() == 0 ? 1 : s.dims[d];
  TORCH_CHECK(k >= 0 && k <= size, "topk(): selected index k out of range (k = ", k, ", input ",
              DescribeTensor(self), ", dim ", d, ")");
  Value v = x->GetIrValue();
  if (s.rank() == 0) {
    return {AtenFromIr(v, x->device()), AtenFromIr(ir::Constant(0, Shape(ElementType::kS64, {})), x->device())};
  }
  return Checked(op, [&] {
    Value iota = ir::Iota(Shape(ElementType::kS64, s.dims), d);
    std::vector<Value> sorted = size > 1 ? ir::Sort({v, iota}, d, largest) : std::vector<Value>{v, iota};
    std::vector<int64_t> start(s.rank(), 0), limit = s.dims, strides(s.rank(), 1);
    limit[d] = k;
    return std::make_tuple(AtenFromIr(ir::Slice(sorted[0], start, limit, strides), x->device()),
                           AtenFromIr(ir::Slice(sorted[1], start, limit, strides), x->device()));
  });
}

// ---- kthvalue, median -------------------------------------------------------------------------
// The k-th smallest element along a dimension is position k-1 of the stable ascending sort
// (NaN sorts last, as in PyTorch). median is the lower median, position (n-1)/2, except
// that a slice holding a NaN has the median NaN at the first NaN's index.
namespace {

struct OrderStatistic {
  Value value, index;
};

// Position `k` of the ascending sort of `v` along `d`, with its index; dim d removed.
OrderStatistic SortedAt(const Value& v, int64_t d, int64_t k) {
  const Shape& s = v.shape();
  Value iota = ir::Iota(Shape(ElementType::kS64, s.dims), d);
  std::vector<Value> sorted = s.dims[d] > 1 ? ir::Sort({v, iota}, d, false) : std::vector<Value>{v, iota};
  std::vector<int64_t> start(s.rank(), 0), limit = s.dims, strides(s.rank(), 1), out = s.dims;
  start[d] = k;
  limit[d] = k + 1;
  out.erase(out.begin() + d);
  return {ir::Reshape(ir::Slice(sorted[0], start, limit, strides), out),
          ir::Reshape(ir::Slice(sorted[1], start, limit, strides), out)};
}

std::tuple<at::Tensor, at::Tensor> WithKeepDim(const OrderStatistic& r, const std::vector<int64_t>& dims, int64_t d,
                                          bool keepdim, int device) {
  Value value = r.value, index = r.index;
  if (keepdim) {
    value = ir::Reshape(value, KeepDims(dims, {d}));
    index = ir::Reshape(index, KeepDims(dims, {d}));
  }
  return std::make_tuple(AtenFromIr(value, device), AtenFromIr(index, device));
}

// The lower median of `v` along `d` (rank >= 1, size >= 1 there) with PyTorch's NaN rule.
OrderStatistic LowerMedian(const Value& v, int64_t d) {
  const Shape& s = v.shape();
  OrderStatistic r = SortedAt(v, d, (s.dims[d] - 1) / 2);
  if (!runtime::IsFloating(s.type)) return r;
  Value is_nan = ir::Compare(ir::CompareDirection::kNe, v, v);
  Value any_nan = ir::Reduce(ir::ReduceKind::kOr, is_nan, {d});
  Value iota = ir::Iota(Shape(ElementType::kS64, s.dims), d);
  Value past_end = ir::Constant(static_cast<double>(s.dims[d]), iota.shape());
  Value first_nan = ir::Reduce(ir::ReduceKind::kMin, ir::Select(is_nan, iota, past_end), {d});
  Value nan = ir::Constant(std::numeric_limits<double>::quiet_NaN(), r.value.shape());
  return {ir::Select(any_nan, nan, r.value), ir::Select(any_nan, first_nan, r.index)};
}

// A 0-dim tensor is its own order statistic, at index 0.
std::tuple<at::Tensor, at::Tensor> ItselfAtIndexZero(const XlaTensorPtr& x) {
  return {AtenFromIr(x->GetIrValue(), x->device()), AtenFromIr(ir::Constant(0, Shape(ElementType::kS64, {})), x->device())};
}

void CheckOrderable(const at::Tensor& self, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool && !at::isComplexType(self.scalar_type()), "\"", op,
                              "\" not implemented for '", self.scalar_type(), "'");
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::kthvalue(const at::Tensor& self, int64_t k, int64_t dim,
                                                                bool keepdim) {
  XLA_COUNT("kthvalue");
  const char* op = "kthvalue";
  CheckOrderable(self, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, std::max<int64_t>(s.rank(), 1), op);
  int64_t size = s.rank() == 0 ? 1 : s.dims[d];
  TORCH_CHECK(k >= 1 && k <= size, "kthvalue(): selected number k out of range for dimension ", dim, " (k = ", k,
              ", input ", DescribeTensor(self), ")");
  if (s.rank() == 0) return ItselfAtIndexZero(x);
  return Checked(op, [&] { return WithKeepDim(SortedAt(x->GetIrValue(), d, k - 1), s.dims, d, keepdim, x->device()); });
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::median(const at::Tensor& self, int64_t dim, bool keepdim) {
  XLA_COUNT("median");
  const char* op = "median";
  CheckOrderable(self, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, std::max<int64_t>(s.rank(), 1), op);
  TORCH_CHECK(s.rank() == 0 || s.dims[d] > 0, "median(): Expected reduction dim ", d, " to have non-zero size (input ",
              DescribeTensor(self), ")");
  if (s.rank() == 0) return ItselfAtIndexZero(x);
  return Checked(op, [&] { return WithKeepDim(LowerMedian(x->GetIrValue(), d), s.dims, d, keepdim, x->device()); });
}

at::Tensor XLANativeFunctions::median(const at::Tensor& self) {
  XLA_COUNT("median");
  const char* op = "median";
  CheckOrderable(self, op);
  TORCH_CHECK(self.numel() > 0, "median() input tensor cannot be empty");
  XlaTensorPtr x = GetXlaTensor(self, op);
  return Checked(op, [&] {
    Value flat = ir::Reshape(x->GetIrValue(), {self.numel()});
    return AtenFromIr(LowerMedian(flat, 0).value, x->device());
  });
}

// ---- nanmedian, mode --------------------------------------------------------------------

namespace {

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

}  // namespace torch_xla
