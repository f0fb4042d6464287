#pragma once
// Which convolutions the CPU device gives to PyTorch's own kernels inside the graph (the
// host kernel of host/convolution.h), decided as they are traced.
//
// $XLA_HOST_CONVOLUTION picks which convolutions: `auto` (the default) runs float32
// forward passes and input gradients this way, and weight gradients except where
// XLA's measured faster (UseHostConvolution); `1` runs every float32, float64 and
// bfloat16 convolution this way; `0` none. Single-input-channel forward passes with
// few taps keep their own form (the convolution kernels') in every mode but `1`.
#include <ATen/ATen.h>

#include <string>

#include "ir/builder_convolution.h"

namespace torch_xla {

enum class HostConvolutionMode { kAuto = 0, kAlways = 1, kNever = 2 };

// The mode: $XLA_HOST_CONVOLUTION until SetHostConvolutionMode sets one. Throws
// std::invalid_argument naming the variable when it holds anything but auto, 1, 0 or
// nothing (the convolution kernels report it as their error).
HostConvolutionMode GetHostConvolutionMode();
// Sets the mode by its name ("auto", "1" or "0") for the convolutions traced from now
// on; throws std::invalid_argument for any other name.
void SetHostConvolutionMode(const std::string& mode);
std::string HostConvolutionModeName(HostConvolutionMode mode);

// Whether the `what` result of a convolution of `type` with these channel counts
// (whole, not per group) runs as a host kernel. Registers the kernel with the plugin
// the first time it answers yes.
bool UseHostConvolution(ir::HostConvolutionResult what, at::ScalarType type, int64_t in_channels,
                        int64_t out_channels, int64_t groups);

}  // namespace torch_xla
