#pragma once
// Custom-call target names of the host kernels that lowering rules call (see
// runtime/host_kernel.h); the layer that implements a kernel registers it under this name.
namespace torch_xla::lowering {

// ir::HostConvolution: PyTorch's convolution, its input and weight gradients.
inline constexpr char kHostConvolutionTarget[] = "torch_xla_host_convolution";

}  // namespace torch_xla::lowering
