// Weight gradients on the CPU device by PyTorch's product (ops/host_matmul.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "ir/node.h"

namespace torch_xla {

// a @ b for 2-D values a (n x k) and b (k x m) on `device` where a is the transpose of a
// k x n value (a weight gradient, contracting both over k rows): on the CPU device, for
// float32 products large enough to gain, a host call of PyTorch's product split by those
// rows over the compute threads; nothing otherwise.
std::optional<at::Tensor> HostMatrixProduct(const ir::Value& a, const ir::Value& b, int device);

}  // namespace torch_xla
