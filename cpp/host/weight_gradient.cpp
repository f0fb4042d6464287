// torch_xla_host::weight_gradient(grad, input) = grad.t() @ input: a linear layer's
// weight gradient by PyTorch's product, which reads the transposed operand in place. A
// host ATen op (host/aten_ops.h); the XLA kernels choose it in ops/host_matmul.cpp.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace torch_xla::host {
namespace {

at::Tensor WeightGradientCpu(const at::Tensor& grad, const at::Tensor& input) { return at::mm(grad.t(), input); }

at::Tensor WeightGradientMeta(const at::Tensor& grad, const at::Tensor& input) {
  TORCH_CHECK(grad.dim() == 2 && input.dim() == 2 && grad.size(0) == input.size(0),
              "weight_gradient: expected matrices with equal row counts, got ", grad.sizes(), " and ",
              input.sizes());
  return at::empty({grad.size(1), input.size(1)}, grad.options());
}

TORCH_LIBRARY(torch_xla_host, m) { m.def("weight_gradient(Tensor grad, Tensor input) -> Tensor"); }
TORCH_LIBRARY_IMPL(torch_xla_host, CPU, m) { m.impl("weight_gradient", TORCH_FN(WeightGradientCpu)); }
TORCH_LIBRARY_IMPL(torch_xla_host, Meta, m) { m.impl("weight_gradient", TORCH_FN(WeightGradientMeta)); }

}  // namespace
}  // namespace torch_xla::host
