#pragma once
// IR constructors used by the CNN layer kernels (aten/ops_cnn_*.cpp).
#include <vector>

#include "ir/builder.h"

namespace torch_xla::ir {

// stablehlo.reduce_window computing the maximum over windows of `window` elements taken
// every `strides` elements (no padding, no dilation). The result keeps v's type.
Value ReduceWindowMax(const Value& v, const std::vector<int64_t>& window, const std::vector<int64_t>& strides);

// v unchanged, but computed once into a buffer: XLA does not fuse the computation of v
// into its consumers (which would recompute it once per use). On the CPU device, a call
// of the pass-through host kernel (runtime/pass_through_kernel.h), whose result aliases
// v: free at run time. Elsewhere a maximum of v and the type's lowest value by
// reduce_window, an op XLA does not fuse: one more pass over v.
Value Materialize(const Value& v);

}  // namespace torch_xla::ir
