#pragma once
// Host kernels of max pooling with indices over the trailing 2 or 3 dimensions of a
// float32 or float64 array, and of its backward; the planes (the leading dimensions,
// batch and channels) are split over the graph's compute threads.
//
// XLA's CPU backend computes the running argmax of a window (one strided slice per
// window offset, a compare and two selects each, the index as an s64 iota expression)
// as scalar loops, and the backward as one masked select per offset scattered back by
// pads and concatenations: MNIST's first pool, [128, 10, 24, 24] by 2x2, took 2 core-ms
// forward in its step. These kernels read each window once and write the value and
// its index; the backward adds each gradient at its index. Windows of 2x2 at stride 2
// without padding (most CNNs' pooling) take a loop of their own, vectorized over a row
// of outputs: a graph of MNIST's first pool alone ran in 0.56 ms with the general one
// and in 0.18 ms with it (eager PyTorch: 1.6 ms).
//
// Semantics are PyTorch's CPU kernel's: the window is clipped to the input, its first
// element in row-major order starts as the maximum, a larger element or a NaN replaces
// it (so the last NaN wins), and the index is the flat position in the input plane
// ((d * H) + h) * W + w. The backward adds grad[o] at index[o] of o's plane and skips an
// index outside the plane.
#include <cstdint>
#include <span>
#include <vector>

namespace torch_xla::host {

// Forward: operand x [planes..., (D,) H, W]; results the maxima and their indices (s64),
// both [planes..., (oD,) oH, oW]. Config: MaxPoolConfig::ToInts.
inline constexpr char kMaxPoolTarget[] = "torch_xla_max_pool";

// The forward kernel's parameters, written into the IR node's attributes by its builder
// (ir::HostMaxPool), carried into the custom call's config by the lowering rule, and read
// back by the kernel.
struct MaxPoolConfig {
  // One value per spatial dimension (2 or 3) each.
  std::vector<int64_t> kernel, stride, padding, dilation;

  // [n, kernel (n), stride (n), padding (n), dilation (n)]
  std::vector<int64_t> ToInts() const;
  // The inverse of ToInts; throws std::invalid_argument for a malformed list.
  static MaxPoolConfig FromInts(std::span<const int64_t> ints);
};

// Backward: operands grad [planes..., outputs] and indices (s64) of the same shape;
// result the input's gradient [planes..., (D,) H, W], of grad's type. Config: n.
inline constexpr char kMaxPoolBackwardTarget[] = "torch_xla_max_pool_backward";

// Registers both kernels with the current client's plugin the first time; returns
// whether graphs can call them (false where the plugin takes no host kernels).
bool MaxPoolKernelsAvailable();

}  // namespace torch_xla::host
