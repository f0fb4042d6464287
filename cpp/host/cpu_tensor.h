#pragma once
// A host kernel's buffers as PyTorch CPU tensors, for the kernels that call PyTorch.
#include <ATen/core/Tensor.h>

#include "host/host_kernel.h"
#include "runtime/element_type.h"

namespace torch_xla::host {

// PyTorch's scalar type of a device element type.
at::ScalarType ScalarTypeOf(runtime::ElementType type);

// `buffer` as a CPU tensor sharing its memory (contiguous, its dims and type).
at::Tensor CpuTensorOf(const HostBuffer& buffer);

}  // namespace torch_xla::host
