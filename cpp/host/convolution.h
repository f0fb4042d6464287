#pragma once
// Convolutions on the CPU device run by PyTorch's own CPU kernels (oneDNN) inside the
// compiled graph, as a host kernel (host/host_kernel.h) that the graph calls;
// everything around them stays in the graph and is fused by XLA. Which convolutions
// take it is decided when they are traced (ops/host_convolution.h).
//
// The kernel splits the batch into one part per thread of XLA's compute pool and runs
// each part single-threaded on a pool thread (host/host_parallel.h,
// single_thread_scope.h): PyTorch's own OpenMP threads would compete with the pool for
// the cores. Measured on a 2-core AVX-512 EPYC against XLA's convolution (Eigen), alone:
// MNIST's second layer forward 0.59 -> 0.44 ms, input gradient 1.0-1.3 -> 0.68; ResNet
// shapes 1.3-2.2x faster forward and backward, 3-D 13x; the MNIST training step 6.9
// -> 5.5 ms.
#include "host/convolution_config.h"

namespace torch_xla::host {

// Whether the kernel can run here: the CPU device of a plugin that takes host kernels,
// with PyTorch's thread controls found. Registers the kernel (target
// kHostConvolutionTarget, config ConvolutionConfig::ToInts) the first time it answers yes.
bool HostConvolutionAvailable();

}  // namespace torch_xla::host
