#pragma once
// Constructors of the convolution IR ops (stablehlo.convolution, the single-channel tap
// sum and the host convolution) with their shape rules, and the attributes of their
// nodes. Like ir/builder.h, every function checks its inputs and throws
// std::invalid_argument naming the op and the shapes.
#include <cstdint>
#include <vector>

#include "host/convolution_config.h"
#include "ir/builder.h"

namespace torch_xla::ir {

// stablehlo.convolution with the layouts lhs [batch, feature, spatial...], rhs [out feature,
// in feature, spatial...], result [batch, feature, spatial...] (PyTorch's NC(D)HW / OI(D)HW).
// Every per-spatial-dimension list has one entry per spatial dimension (1 to 3); padding
// may be negative (it then crops the lhs). Operands must have the same element type,
// which is the result's. Output spatial size, per dimension:
//   floor(((in - 1) * lhs_dilation + 1 + low + high - ((k - 1) * rhs_dilation + 1)) / stride) + 1.
Value Convolution(const Value& lhs, const Value& rhs, const std::vector<int64_t>& window_strides,
                  const std::vector<int64_t>& padding_low, const std::vector<int64_t>& padding_high,
                  const std::vector<int64_t>& lhs_dilation, const std::vector<int64_t>& rhs_dilation,
                  int64_t feature_group_count, int64_t batch_group_count);

// The attributes of a stablehlo.convolution node (lowering/rules_convolution.cpp).
struct ConvolutionAttrs {
  // One value per spatial dimension each.
  std::vector<int64_t> window_strides, padding_low, padding_high, lhs_dilation, rhs_dilation;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;

  Attrs ToAttrs() const;
  static ConvolutionAttrs FromAttrs(const Attrs& attrs);
};

// A convolution of one input channel as a sum over the kernel taps: for x [N, 1, s...]
// and w [F, 1, k...] (1 to 3 spatial dimensions), the sum over taps of x's strided
// window at that tap times the tap's F weights, accumulated in f32 for bf16/f16. One
// node at trace time; the lowering (lowering/rules_convolution.cpp) emits the per-tap
// slices, products and sums, which XLA fuses into one loop. Result [N, F, out...] with
//   out = floor((s + 2 * padding - (k - 1) * dilation - 1) / stride) + 1.
Value SingleChannelTaps(const Value& x, const Value& w, const std::vector<int64_t>& stride,
                        const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation);

// The attributes of an xla::single_channel_taps node.
struct SingleChannelTapsAttrs {
  std::vector<int64_t> stride, padding, dilation;  // one value per spatial dimension each

  Attrs ToAttrs() const;
  static SingleChannelTapsAttrs FromAttrs(const Attrs& attrs);
};

// A convolution that the CPU device runs with PyTorch's own kernel (a host kernel, see
// host/host_kernel.h) instead of XLA's: `what` says which result of a PyTorch
// convolution (stride, padding, dilation, transposed, output_padding, groups; `n`
// spatial dimensions) the node computes from operands a and b:
//   kForward      a = input, b = weight                 -> the output
//   kGradInput    a = grad_output, b = weight           -> grad_input of size `result`
//   kGradWeight   a = grad_output, b = input            -> grad_weight of size `result`
// The caller has checked the arguments as PyTorch does; this checks ranks and types.
// The node's attrs.ints are the custom call's config, host::ConvolutionConfig::ToInts.
using HostConvolutionResult = host::ConvolutionResult;
Value HostConvolution(HostConvolutionResult what, const Value& a, const Value& b, const std::vector<int64_t>& result,
                      const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                      const std::vector<int64_t>& dilation, const std::vector<int64_t>& output_padding,
                      bool transposed, int64_t groups);

}  // namespace torch_xla::ir
