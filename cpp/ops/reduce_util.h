#pragma once
// Helpers shared by the reduction, indexing, sorting and distance kernels
// (ops/reduce_ops.cpp, ops/indexing.cpp, ops/sorting.cpp, ...); defined in reduce_util.cpp.
#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "ops/kernel_util.h"

namespace torch_xla::reduce_util {

using ir::Value;
using runtime::ElementType;

// The dimensions a reduction over `dim` reduces (all of them when `dim` is absent or
// empty), wrapped; a 0-dim tensor accepts dim 0 / -1 and reduces nothing.
std::vector<int64_t> ReducedDims(at::OptionalIntArrayRef dim, int64_t rank, const char* op);

inline bool IsFloat(ElementType t) { return runtime::IsFloating(t); }

// v != 0 as a predicate (v itself when it is one).
Value NonZero(const Value& v);

// A max / min reduction over `dims` that returns NaN when a reduced element is NaN
// (PyTorch's semantics). Predicates reduce with or / and.
Value MaxOrMin(const Value& v, const std::vector<int64_t>& dims, bool is_max);

// The index along `dim` of the first max (min) element; a NaN counts as the max (min),
// as in PyTorch. Returns the values reduced away (as MaxOrMin) in *values when not null.
Value ArgMaxOrMin(const Value& v, int64_t dim, bool is_max, Value* values);

// Broadcasts a value reduced over `reduced` back to `dims`.
Value Unreduce(const Value& v, const std::vector<int64_t>& dims, const std::vector<int64_t>& reduced);

// Wraps negative indices along a dimension of size `size` (index + size where index < 0).
Value WrapIndex(const Value& index, int64_t size);

// Inclusive scan along `dim` in log2(n) steps: x[i] op= x[i - k] for k = 1, 2, 4, ...
// (`identity` pads the shifted copies). For products, integer sums and counts.
Value Scan(Value v, int64_t dim, ir::OpKind op, double identity);

// A scan state is a tuple of values of equal dimensions; Combine(earlier, later) returns
// the state after `later`'s segment when `earlier`'s segment came first. It must be
// associative.
using State = std::vector<Value>;
using Combine = std::function<State(const State& earlier, const State& later)>;

// Inclusive scan of a state along `dim` in log2(n) steps (Hillis-Steele):
// s[i] = combine(s[i - k], s[i]) for k = 1, 2, 4, ... where i >= k. For cummax/cummin,
// logcumsumexp and runs of equal values.
State Scan(State s, int64_t dim, const Combine& combine);

}  // namespace torch_xla::reduce_util
