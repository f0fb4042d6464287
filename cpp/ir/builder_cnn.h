#pragma once
// IR constructors used by the CNN layer kernels (aten/ops_cnn_*.cpp).
#include <utility>
#include <vector>

#include "ir/builder.h"

namespace torch_xla::ir {

// stablehlo.reduce_window computing the maximum over windows of `window` elements taken
// every `strides` elements (no padding, no dilation). The result keeps v's type.
Value ReduceWindowMax(const Value& v, const std::vector<int64_t>& window, const std::vector<int64_t>& strides);

// v unchanged, but computed once into a buffer: XLA does not fuse the computation of v
// into its consumers (which would recompute it once per use). On the CPU device, a call
// of the pass-through host kernel (host/pass_through_kernel.h), whose result aliases
// v: free at run time. Elsewhere a maximum of v and the type's lowest value by
// reduce_window, an op XLA does not fuse: one more pass over v.
Value Materialize(const Value& v);

// Whether HostMaxPool and HostMaxPoolBackward can run arrays of `type`: float32 and
// float64 on the CPU device, where the plugin takes host kernels.
bool HostMaxPoolAvailable(ElementType type);

// Max pooling with indices of x's trailing n = kernel.size() (2 or 3) dimensions by the
// host kernel (host/max_pool_kernel.h): {maxima, s64 flat indices into each input
// plane}, both of x's leading dimensions followed by `out` (the caller computed the
// output sizes, ceil mode included).
std::pair<Value, Value> HostMaxPool(const Value& x, const std::vector<int64_t>& out,
                                    const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                                    const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation);

// Its backward over n spatial dimensions: each element of `grad` added at its index in
// its plane of a zero array of `input` dims.
Value HostMaxPoolBackward(const Value& grad, const Value& indices, const std::vector<int64_t>& input, int64_t n);

}  // namespace torch_xla::ir
