// Meta kernels for the in-place ops of a training step (optimizer updates, running
// statistics, gradient clearing), bound to PyTorch's own C++ shape functions.
//
// Functionalization runs every in-place op on meta tensors first, so that an in-place
// op that would have to grow `self` (ones(3).add_(ones(2, 3))) or change its dtype
// raises the error eager raises. PyTorch registers Python meta functions over the C++
// ones for these ops; each call then costs a trip through the Python interpreter,
// ~50 µs, which was 12% of the MNIST step (38 in-place ops a step). The kernels below
// put PyTorch's C++ structured meta functions (at::meta::*, the same checks its CPU
// kernels make) back in front for the Meta key, for every meta tensor of the process.
// The .Scalar overloads, which have no C++ meta function, use the Tensor one with the
// scalar wrapped, as their CPU kernels do.
//
// FakeTensor tracing (torch.compile, export) reaches these kernels too. PyTorch's C++
// meta functions of binary element-wise ops read concrete sizes, so for operands with
// symbolic sizes (dynamic shapes) the kernels below check broadcast and dtype
// themselves, on symbolic sizes, as the Python meta functions do.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/TypeProperties.h>
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

bool Symbolic(std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (t->defined() && t->unsafeGetTensorImpl()->has_symbolic_sizes_strides()) return true;
  }
  return false;
}

// The type the operands promote to, a Scalar counting as a wrapped number.
at::ScalarType Promoted(std::initializer_list<const Tensor*> tensors, const Scalar* scalar = nullptr) {
  at::native::ResultTypeState state{};
  for (const Tensor* t : tensors) state = at::native::update_result_type_state(*t, state);
  if (scalar) state = at::native::update_result_type_state(*scalar, state);
  return at::native::result_type(state);
}

// The in-place checks on symbolic sizes: the operands broadcast to self's shape, and the
// computation's type casts to self's dtype. Comparing symbolic sizes records guards.
Tensor& CheckSymbolic(Tensor& self, std::initializer_list<const Tensor*> others, at::ScalarType computed) {
  c10::SymDimVector shape(self.sym_sizes().begin(), self.sym_sizes().end());
  for (const Tensor* t : others) shape = at::infer_size_symdimvector(shape, t->sym_sizes());
  TORCH_CHECK(c10::SymIntArrayRef(shape) == self.sym_sizes(), "output with shape ", self.sym_sizes(),
              " doesn't match the broadcast shape ", c10::SymIntArrayRef(shape));
  TORCH_CHECK(at::canCast(computed, self.scalar_type()), "result type ", computed,
              " can't be cast to the desired output type ", self.scalar_type());
  return self;
}

// True division computes in the default float type for integer operands.
at::ScalarType Divided(at::ScalarType promoted) {
  return at::isIntegralType(promoted, /*includeBool=*/true) ? c10::typeMetaToScalarType(c10::get_default_dtype())
                                                            : promoted;
}

Tensor& AddTensor(Tensor& self, const Tensor& other, const Scalar& alpha) {
  if (Symbolic({&self, &other})) return CheckSymbolic(self, {&other}, Promoted({&self, &other}));
  return at::meta::add_(self, other, alpha);
}
Tensor& AddScalar(Tensor& self, const Scalar& other, const Scalar& alpha) {
  if (Symbolic({&self})) return CheckSymbolic(self, {}, Promoted({&self}, &other));
  return at::meta::add_(self, Wrapped(other), alpha);
}
Tensor& SubTensor(Tensor& self, const Tensor& other, const Scalar& alpha) {
  if (Symbolic({&self, &other})) {
    at::native::sub_check(self, other);
    return CheckSymbolic(self, {&other}, Promoted({&self, &other}));
  }
  return at::meta::sub_(self, other, alpha);
}
Tensor& SubScalar(Tensor& self, const Scalar& other, const Scalar& alpha) {
  if (Symbolic({&self})) {
    at::native::sub_check(self, other);
    return CheckSymbolic(self, {}, Promoted({&self}, &other));
  }
  return at::meta::sub_(self, Wrapped(other), alpha);
}
Tensor& MulTensor(Tensor& self, const Tensor& other) {
  if (Symbolic({&self, &other})) return CheckSymbolic(self, {&other}, Promoted({&self, &other}));
  return at::meta::mul_(self, other);
}
Tensor& MulScalar(Tensor& self, const Scalar& other) {
  if (Symbolic({&self})) return CheckSymbolic(self, {}, Promoted({&self}, &other));
  return at::meta::mul_(self, Wrapped(other));
}
Tensor& DivTensor(Tensor& self, const Tensor& other) {
  if (Symbolic({&self, &other})) return CheckSymbolic(self, {&other}, Divided(Promoted({&self, &other})));
  return at::meta::div_(self, other);
}
Tensor& DivScalar(Tensor& self, const Scalar& other) {
  if (Symbolic({&self})) return CheckSymbolic(self, {}, Divided(Promoted({&self}, &other)));
  return at::meta::div_(self, Wrapped(other));
}
Tensor& Addcmul(Tensor& self, const Tensor& a, const Tensor& b, const Scalar& value) {
  if (Symbolic({&self, &a, &b})) return CheckSymbolic(self, {&a, &b}, Promoted({&self, &a, &b}));
  return at::meta::addcmul_(self, a, b, value);
}
Tensor& Addcdiv(Tensor& self, const Tensor& a, const Tensor& b, const Scalar& value) {
  if (Symbolic({&self, &a, &b})) {
    TORCH_CHECK(!(at::isIntegralType(a.scalar_type(), true) && at::isIntegralType(b.scalar_type(), true)),
                "addcdiv_: Integer division with addcdiv is no longer supported; divide by a floating tensor, "
                "got tensor1 ", a.scalar_type(), " and tensor2 ", b.scalar_type());
    return CheckSymbolic(self, {&a, &b}, Promoted({&self, &a, &b}));
  }
  return at::meta::addcdiv_(self, a, b, value);
}
Tensor& LerpScalar(Tensor& self, const Tensor& end, const Scalar& weight) {
  if (Symbolic({&self, &end})) {
    TORCH_CHECK(self.scalar_type() == end.scalar_type(), "lerp_: expected dtype ", self.scalar_type(),
                " for `end` but got dtype ", end.scalar_type());
    return CheckSymbolic(self, {&end}, self.scalar_type());
  }
  return at::meta::lerp_(self, end, weight);
}
Tensor& LerpTensor(Tensor& self, const Tensor& end, const Tensor& weight) {
  if (Symbolic({&self, &end, &weight})) {
    TORCH_CHECK(self.scalar_type() == end.scalar_type() && self.scalar_type() == weight.scalar_type(),
                "lerp_: expected dtype ", self.scalar_type(), " for `end` and `weight` but got dtypes ",
                end.scalar_type(), " and ", weight.scalar_type());
    return CheckSymbolic(self, {&end, &weight}, self.scalar_type());
  }
  return at::meta::lerp_(self, end, weight);
}
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
