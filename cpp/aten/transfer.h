#pragma once
// Host <-> device copies of whole tensors.
#include <ATen/core/Tensor.h>

#include "tensor/xla_tensor.h"

namespace torch_xla {

// Runs the tensor's pending graph if needed and copies its data into a new CPU tensor.
at::Tensor ToCpuTensor(const XlaTensorPtr& tensor);
// Uploads a CPU tensor (any layout) to `device`.
XlaTensorPtr FromCpuTensor(const at::Tensor& cpu, int device);

}  // namespace torch_xla
