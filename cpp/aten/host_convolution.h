#pragma once
// With $XLA_HOST_CONVOLUTION=1, convolutions on the CPU device run PyTorch's own CPU
// kernels (oneDNN) inside the compiled graph, as a host kernel (runtime/host_kernel.h)
// that the graph calls; everything around them stays in the graph and is fused by XLA.
// Their results then equal eager PyTorch's bit for bit. It is off by default: alone, the
// input gradient of a 20->10 channel 5x5 convolution runs in 2.1 ms instead of XLA's
// 5 ms, but within a whole training step the kernel's OpenMP threads compete with XLA's
// thread pool running other parts of the graph, and the MNIST step is slower (26 ms vs 23).
#include <ATen/ATen.h>

namespace torch_xla {

// Whether a convolution of `type` on the current client's devices runs as a host
// kernel: turned on, the CPU device, float32/float64/bfloat16. Registers the kernel
// with the plugin the first time it answers yes.
bool UseHostConvolution(at::ScalarType type);

}  // namespace torch_xla
