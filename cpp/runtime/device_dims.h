// The dimensions a buffer has on the device, which may differ from its tensor's.
//
// XLA's CPU backend emits an element-wise loop nest over the result's dimensions, the
// innermost over the last one. Where that dimension is short (a convolution weight's
// 3x3 or 7x7 taps) LLVM leaves the loop scalar: the SGD update of a 512x512x3x3 weight
// and its momentum took 2.46 ms, against 0.96 ms for the same elements in a shape
// whose last dimension is long. Floating-point buffers of such shapes are therefore
// kept one-dimensional on the device, and the graphs compute their element-wise
// updates in that form (lowering/flat_elementwise.h); convolutions and every other
// consumer read them through a reshape, which XLA compiles to nothing (the bytes of a
// dense row-major array are the same in either form). The tensor, and the Buffer that
// holds it, keep their own dimensions; only PJRT sees these.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/element_type.h"

namespace torch_xla::runtime {

// `dims` itself, or {number of elements} for a floating-point array of rank 2 or more
// whose last dimension has fewer than 16 elements (one AVX-512 vector of float32) and
// which has at least 4096 elements (smaller loops cost little either way). In SPMD mode
// `dims` itself always: the partitioner splits values by their dimensions.
std::vector<int64_t> DeviceDims(ElementType type, const std::vector<int64_t>& dims);

}  // namespace torch_xla::runtime
