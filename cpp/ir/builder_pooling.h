#pragma once
// IR constructors of max pooling (ops/max_pooling.cpp): reduce_window max and the host
// max pooling kernels. ir::Materialize, declared in ir/builder.h, is defined in
// builder_pooling.cpp beside the reduce_window it uses.
#include <utility>
#include <vector>

#include "ir/builder.h"

namespace torch_xla::ir {

// stablehlo.reduce_window computing the maximum over windows of `window` elements taken
// every `strides` elements (no padding, no dilation). The result keeps v's type.
Value ReduceWindowMax(const Value& v, const std::vector<int64_t>& window, const std::vector<int64_t>& strides);

// The attributes of an xla::reduce_window_max node (ToAttrs / FromAttrs as in ir/builder.h).
struct ReduceWindowMaxAttrs {
  std::vector<int64_t> window, strides;  // one per dimension each
  Attrs ToAttrs() const;
  static ReduceWindowMaxAttrs FromAttrs(const Attrs& attrs);
};

// Whether HostMaxPool and HostMaxPoolBackward can run arrays of `type`: float32 and
// float64 on the CPU device, where the plugin takes host kernels.
bool HostMaxPoolAvailable(ElementType type);

// Max pooling with indices of x's trailing n = kernel.size() (2 or 3) dimensions by the
// host kernel (host/max_pool_kernel.h): {maxima, s64 flat indices into each input
// plane}, both of x's leading dimensions followed by `out` (the caller computed the
// output sizes, ceil mode included). The node's attrs.ints are the kernel's config,
// host::MaxPoolConfig::ToInts.
std::pair<Value, Value> HostMaxPool(const Value& x, const std::vector<int64_t>& out,
                                    const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                                    const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation);

// Its backward over n spatial dimensions: each element of `grad` added at its index in
// its plane of a zero array of `input` dims. The node's attrs.ints are the kernel's
// config: {n}.
Value HostMaxPoolBackward(const Value& grad, const Value& indices, const std::vector<int64_t>& input, int64_t n);

}  // namespace torch_xla::ir
