#pragma once
// Convolutions on the CPU device run by PyTorch's own CPU kernels (oneDNN) inside the
// compiled graph, as a host kernel (host/host_kernel.h) that the graph calls;
// everything around them stays in the graph and is fused by XLA.
//
// The kernel splits the batch into one part per thread of XLA's compute pool and runs
// each part single-threaded on a pool thread (host/host_parallel.h,
// single_thread_scope.h): PyTorch's own OpenMP threads would compete with the pool for
// the cores. Measured on a 2-core AVX-512 EPYC against XLA's convolution (Eigen), alone:
// MNIST's second layer forward 0.59 -> 0.44 ms, input gradient 1.0-1.3 -> 0.68; ResNet
// shapes 1.3-2.2x faster forward and backward, 3-D 13x; the MNIST training step 6.9
// -> 5.5 ms.
//
// $XLA_HOST_CONVOLUTION picks which convolutions: `auto` (the default) runs float32
// forward passes and input gradients this way, and weight gradients except where
// XLA's measured faster (UseHostConvolution); `1` runs every float32, float64 and
// bfloat16 convolution this way; `0` none. Single-input-channel forward passes with
// few taps keep their own form (ops_conv.cpp) in every mode but `1`.
#include <ATen/ATen.h>

#include <string>

#include "ir/builder.h"

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
