// Weight gradients of linear layers on the CPU device by PyTorch's matrix product
// (host_matmul.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "ir/node.h"

namespace torch_xla {

// transposed_grad @ input, where `transposed_grad` is the transpose of a 2-D value g
// (rows x m) and `input` is rows x n: the m x n sum over rows of a linear layer's weight
// gradient. On the CPU device, for products large enough to gain, a host call of
// PyTorch's product split by rows over the compute threads; nothing otherwise.
std::optional<at::Tensor> HostWeightGradient(const ir::Value& transposed_grad, const at::Tensor& input, int device);

}  // namespace torch_xla
