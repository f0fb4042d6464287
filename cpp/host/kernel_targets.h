#pragma once
// Custom-call target names of the host kernels that lowering rules call (see
// host/host_kernel.h); the layer that implements a kernel registers it under this name.
namespace torch_xla::host {

// ir::HostConvolution: PyTorch's convolution, its input and weight gradients.
inline constexpr char kHostConvolutionTarget[] = "torch_xla_host_convolution";

// ir::HostAtenCall: one of PyTorch's CPU kernels, named by the config.
inline constexpr char kHostAtenTarget[] = "torch_xla_host_aten";

// ir::CrossProcess: the part of a collective that crosses processes. Operands: the node's
// operand and the replica's index in its process (stablehlo.replica_id, ui32).
inline constexpr char kCrossProcessTarget[] = "torch_xla_cross_process";

}  // namespace torch_xla::host
