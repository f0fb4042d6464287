// Meta kernels for the in-place ops of a training step (optimizer updates, running
// statistics, gradient clearing), bound to PyTorch's own C++ shape functions.
//
// Functionalization runs every in-place op on meta tensors first, so that an in-place
// op that would have to grow `self` (ones(3).add_(ones(2, 3))) or change its dtype
// raises the error eager raises. PyTorch registers Python meta functions over the C++
// ones for these ops; each call then costs a trip through the Python interpreter,
// ~50 µs, which was 12% of the MNIST step (38 in-place ops a step). The kernels below
// put PyTorch's C++ structured meta functions (at::meta::*, the same checks its CPU
// kernels make) back in front for the Meta key. Tracing with the Python dispatcher
// (torch.compile, export) keeps using the Python meta functions, which it looks up on
// its own; the .Scalar overloads, which have no C++ meta function, use the Tensor one
// with the scalar wrapped, as their CPU kernels do.
#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>
#include <ATen/ops/add_meta_dispatch.h>
#include <ATen/ops/addcdiv_meta_dispatch.h>
#include <ATen/ops/addcmul_meta_dispatch.h>
#include <ATen/ops/clamp_meta_dispatch.h>
#include <ATen/ops/div_meta_dispatch.h>
#include <ATen/ops/fill_meta_dispatch.h>
#include <ATen/ops/lerp_meta_dispatch.h>
#include <ATen/ops/mul_meta_dispatch.h>
#include <ATen/ops/sqrt_meta_dispatch.h>
#include <ATen/ops/sub_meta_dispatch.h>
#include <ATen/ops/zero_meta_dispatch.h>
#include <torch/library.h>

namespace torch_xla {
namespace {

using at::Scalar;
using at::Tensor;

Tensor Wrapped(const Scalar& s) { return at::native::wrapped_scalar_tensor(s); }

Tensor& AddTensor(Tensor& self, const Tensor& other, const Scalar& alpha) {
  return at::meta::add_(self, other, alpha);
}
Tensor& AddScalar(Tensor& self, const Scalar& other, const Scalar& alpha) {
  return at::meta::add_(self, Wrapped(other), alpha);
}
Tensor& SubTensor(Tensor& self, const Tensor& other, const Scalar& alpha) {
  return at::meta::sub_(self, other, alpha);
}
Tensor& SubScalar(Tensor& self, const Scalar& other, const Scalar& alpha) {
  return at::meta::sub_(self, Wrapped(other), alpha);
}
Tensor& MulTensor(Tensor& self, const Tensor& other) { return at::meta::mul_(self, other); }
Tensor& MulScalar(Tensor& self, const Scalar& other) { return at::meta::mul_(self, Wrapped(other)); }
Tensor& DivTensor(Tensor& self, const Tensor& other) { return at::meta::div_(self, other); }
Tensor& DivScalar(Tensor& self, const Scalar& other) { return at::meta::div_(self, Wrapped(other)); }
Tensor& Addcmul(Tensor& self, const Tensor& a, const Tensor& b, const Scalar& value) {
  return at::meta::addcmul_(self, a, b, value);
}
Tensor& Addcdiv(Tensor& self, const Tensor& a, const Tensor& b, const Scalar& value) {
  return at::meta::addcdiv_(self, a, b, value);
}
Tensor& LerpScalar(Tensor& self, const Tensor& end, const Scalar& weight) { return at::meta::lerp_(self, end, weight); }
Tensor& LerpTensor(Tensor& self, const Tensor& end, const Tensor& weight) { return at::meta::lerp_(self, end, weight); }
Tensor& Sqrt(Tensor& self) { return at::meta::sqrt_(self); }
Tensor& Zero(Tensor& self) { return at::meta::zero_(self); }
Tensor& FillScalar(Tensor& self, const Scalar& value) { return at::meta::fill_(self, value); }
Tensor& Clamp(Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return at::meta::clamp_(self, min, max);
}

TORCH_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("add_.Tensor", TORCH_FN(AddTensor));
  m.impl("add_.Scalar", TORCH_FN(AddScalar));
  m.impl("sub_.Tensor", TORCH_FN(SubTensor));
  m.impl("sub_.Scalar", TORCH_FN(SubScalar));
  m.impl("mul_.Tensor", TORCH_FN(MulTensor));
  m.impl("mul_.Scalar", TORCH_FN(MulScalar));
  m.impl("div_.Tensor", TORCH_FN(DivTensor));
  m.impl("div_.Scalar", TORCH_FN(DivScalar));
  m.impl("addcmul_", TORCH_FN(Addcmul));
  m.impl("addcdiv_", TORCH_FN(Addcdiv));
  m.impl("lerp_.Scalar", TORCH_FN(LerpScalar));
  m.impl("lerp_.Tensor", TORCH_FN(LerpTensor));
  m.impl("sqrt_", TORCH_FN(Sqrt));
  m.impl("zero_", TORCH_FN(Zero));
  m.impl("fill_.Scalar", TORCH_FN(FillScalar));
  m.impl("clamp_", TORCH_FN(Clamp));
}

}  // namespace
}  // namespace torch_xla
