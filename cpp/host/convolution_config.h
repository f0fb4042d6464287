#pragma once
// The parameters of a host convolution call, written into the IR node's attributes by
// its builder (ir::HostConvolution), carried into the custom call's config by the
// lowering rule, and read back by the kernel (host/convolution.cpp).
#include <cstdint>
#include <span>
#include <vector>

namespace torch_xla::host {

// Which result of a convolution the call computes; operands and result as in
// ir::HostConvolution.
enum class ConvolutionResult : int64_t { kForward = 0, kGradInput = 1, kGradWeight = 2 };

struct ConvolutionConfig {
  ConvolutionResult what = ConvolutionResult::kForward;
  std::vector<int64_t> stride, padding, dilation, output_padding;  // one value per spatial dim
  bool transposed = false;
  int64_t groups = 1;

  // [what, n, stride (n), padding (n), dilation (n), output_padding (n), transposed, groups]
  std::vector<int64_t> ToInts() const;
  // The inverse of ToInts; throws std::invalid_argument for a malformed list.
  static ConvolutionConfig FromInts(std::span<const int64_t> ints);
};

}  // namespace torch_xla::host
