// Meta kernels for in-place ops whose only tensor is self (activations, unary math,
// clamps), bound to PyTorch's own C++ meta functions.
//
// As in inplace_meta.cpp: functionalization runs every in-place op on meta tensors
// before it records the functional op, and PyTorch's Python meta registrations, which
// replace the C++ ones, cost a trip through the interpreter on every call. For these
// ops the Python meta function is a reference implementation that decomposes the op
// into prims, each checked on meta tensors in turn: sigmoid_ cost ~300 µs a call, and
// an nn.LSTM step (four in-place activations per cell and time step) spent 40% of its
// step time there. PyTorch's C++ meta functions make the same checks (the result dtype
// must cast to self's: sigmoid_ of an integer tensor raises) in a few microseconds.
//
// The shape of self cannot change, so only the dtype rules remain to check; for
// symbolic sizes (FakeTensor tracing with dynamic shapes), whose concrete sizes the C++
// functions would read, the checks run on a stand-in of self's dtype and rank with all
// sizes 1.
#include <ATen/ATen.h>
#include <ATen/ops/acos_meta_dispatch.h>
#include <ATen/ops/acosh_meta_dispatch.h>
#include <ATen/ops/asin_meta_dispatch.h>
#include <ATen/ops/asinh_meta_dispatch.h>
#include <ATen/ops/atan_meta_dispatch.h>
#include <ATen/ops/atanh_meta_dispatch.h>
#include <ATen/ops/ceil_meta_dispatch.h>
#include <ATen/ops/clamp_meta_dispatch.h>
#include <ATen/ops/clamp_max_meta_dispatch.h>
#include <ATen/ops/clamp_min_meta_dispatch.h>
#include <ATen/ops/cos_meta_dispatch.h>
#include <ATen/ops/cosh_meta_dispatch.h>
#include <ATen/ops/digamma_meta_dispatch.h>
#include <ATen/ops/elu_meta_dispatch.h>
#include <ATen/ops/erf_meta_dispatch.h>
#include <ATen/ops/erfc_meta_dispatch.h>
#include <ATen/ops/erfinv_meta_dispatch.h>
#include <ATen/ops/exp2_meta_dispatch.h>
#include <ATen/ops/exp_meta_dispatch.h>
#include <ATen/ops/expm1_meta_dispatch.h>
#include <ATen/ops/floor_meta_dispatch.h>
#include <ATen/ops/frac_meta_dispatch.h>
#include <ATen/ops/gelu_meta_dispatch.h>
#include <ATen/ops/hardsigmoid_meta_dispatch.h>
#include <ATen/ops/i0_meta_dispatch.h>
#include <ATen/ops/leaky_relu_meta_dispatch.h>
#include <ATen/ops/lgamma_meta_dispatch.h>
#include <ATen/ops/log10_meta_dispatch.h>
#include <ATen/ops/log1p_meta_dispatch.h>
#include <ATen/ops/log2_meta_dispatch.h>
#include <ATen/ops/log_meta_dispatch.h>
#include <ATen/ops/mish_meta_dispatch.h>
#include <ATen/ops/neg_meta_dispatch.h>
#include <ATen/ops/reciprocal_meta_dispatch.h>
#include <ATen/ops/round_meta_dispatch.h>
#include <ATen/ops/rsqrt_meta_dispatch.h>
#include <ATen/ops/sgn_meta_dispatch.h>
#include <ATen/ops/sigmoid_meta_dispatch.h>
#include <ATen/ops/sign_meta_dispatch.h>
#include <ATen/ops/silu_meta_dispatch.h>
#include <ATen/ops/sin_meta_dispatch.h>
#include <ATen/ops/sinc_meta_dispatch.h>
#include <ATen/ops/sinh_meta_dispatch.h>
#include <ATen/ops/tan_meta_dispatch.h>
#include <ATen/ops/tanh_meta_dispatch.h>
#include <ATen/ops/threshold_meta_dispatch.h>
#include <ATen/ops/trunc_meta_dispatch.h>
#include <torch/library.h>

#include <optional>
#include <vector>

namespace torch_xla {
namespace {

using at::Scalar;
using at::Tensor;

// Calls check(t) on self, or on a stand-in when self's sizes are symbolic; returns self.
template <typename Check>
Tensor& CheckSelf(Tensor& self, Check&& check) {
  if (!self.unsafeGetTensorImpl()->has_symbolic_sizes_strides()) {
    check(self);
    return self;
  }
  Tensor stand_in = at::empty(std::vector<int64_t>(self.dim(), 1), self.options().device(at::kMeta));
  check(stand_in);
  return self;
}

// An op with self as its only argument.
template <Tensor& (*Meta)(Tensor&)>
Tensor& Unary(Tensor& self) {
  return CheckSelf(self, [](Tensor& t) { Meta(t); });
}

Tensor& RoundDecimals(Tensor& self, int64_t decimals) {
  return CheckSelf(self, [&](Tensor& t) { at::meta::round_(t, decimals); });
}
Tensor& ClampMin(Tensor& self, const Scalar& min) {
  return CheckSelf(self, [&](Tensor& t) { at::meta::clamp_min_(t, min); });
}
Tensor& ClampMax(Tensor& self, const Scalar& max) {
  return CheckSelf(self, [&](Tensor& t) { at::meta::clamp_max_(t, max); });
}
Tensor& LeakyRelu(Tensor& self, const Scalar& slope) {
  return CheckSelf(self, [&](Tensor& t) { at::meta::leaky_relu_(t, slope); });
}
// relu_ and hardtanh_ are clamps (their C++ meta functions are not exported); relu_
// also refuses bool, as its kernels do.
Tensor& Relu(Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  return CheckSelf(self, [](Tensor& t) { at::meta::clamp_min_(t, 0); });
}
Tensor& Hardtanh(Tensor& self, const Scalar& min, const Scalar& max) {
  return CheckSelf(self, [&](Tensor& t) { at::meta::clamp_(t, min, max); });
}
Tensor& Gelu(Tensor& self, c10::string_view approximate) {
  return CheckSelf(self, [&](Tensor& t) { at::meta::gelu_(t, approximate); });
}
Tensor& Elu(Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return CheckSelf(self, [&](Tensor& t) { at::meta::elu_(t, alpha, scale, input_scale); });
}
Tensor& Threshold(Tensor& self, const Scalar& threshold, const Scalar& value) {
  return CheckSelf(self, [&](Tensor& t) { at::meta::threshold_(t, threshold, value); });
}

TORCH_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("sigmoid_", TORCH_FN(Unary<at::meta::sigmoid_>));
  m.impl("tanh_", TORCH_FN(Unary<at::meta::tanh_>));
  m.impl("relu_", TORCH_FN(Relu));
  m.impl("silu_", TORCH_FN(Unary<at::meta::silu_>));
  m.impl("mish_", TORCH_FN(Unary<at::meta::mish_>));
  m.impl("hardsigmoid_", TORCH_FN(Unary<at::meta::hardsigmoid_>));
  m.impl("exp_", TORCH_FN(Unary<at::meta::exp_>));
  m.impl("exp2_", TORCH_FN(Unary<at::meta::exp2_>));
  m.impl("expm1_", TORCH_FN(Unary<at::meta::expm1_>));
  m.impl("log_", TORCH_FN(Unary<at::meta::log_>));
  m.impl("log10_", TORCH_FN(Unary<at::meta::log10_>));
  m.impl("log1p_", TORCH_FN(Unary<at::meta::log1p_>));
  m.impl("log2_", TORCH_FN(Unary<at::meta::log2_>));
  m.impl("sin_", TORCH_FN(Unary<at::meta::sin_>));
  m.impl("cos_", TORCH_FN(Unary<at::meta::cos_>));
  m.impl("tan_", TORCH_FN(Unary<at::meta::tan_>));
  m.impl("sinh_", TORCH_FN(Unary<at::meta::sinh_>));
  m.impl("cosh_", TORCH_FN(Unary<at::meta::cosh_>));
  m.impl("asin_", TORCH_FN(Unary<at::meta::asin_>));
  m.impl("acos_", TORCH_FN(Unary<at::meta::acos_>));
  m.impl("atan_", TORCH_FN(Unary<at::meta::atan_>));
  m.impl("asinh_", TORCH_FN(Unary<at::meta::asinh_>));
  m.impl("acosh_", TORCH_FN(Unary<at::meta::acosh_>));
  m.impl("atanh_", TORCH_FN(Unary<at::meta::atanh_>));
  m.impl("erf_", TORCH_FN(Unary<at::meta::erf_>));
  m.impl("erfc_", TORCH_FN(Unary<at::meta::erfc_>));
  m.impl("erfinv_", TORCH_FN(Unary<at::meta::erfinv_>));
  m.impl("rsqrt_", TORCH_FN(Unary<at::meta::rsqrt_>));
  m.impl("reciprocal_", TORCH_FN(Unary<at::meta::reciprocal_>));
  m.impl("lgamma_", TORCH_FN(Unary<at::meta::lgamma_>));
  m.impl("digamma_", TORCH_FN(Unary<at::meta::digamma_>));
  m.impl("i0_", TORCH_FN(Unary<at::meta::i0_>));
  m.impl("sinc_", TORCH_FN(Unary<at::meta::sinc_>));
  m.impl("neg_", TORCH_FN(Unary<at::meta::neg_>));
  m.impl("ceil_", TORCH_FN(Unary<at::meta::ceil_>));
  m.impl("floor_", TORCH_FN(Unary<at::meta::floor_>));
  m.impl("round_", TORCH_FN(Unary<at::meta::round_>));
  m.impl("round_.decimals", TORCH_FN(RoundDecimals));
  m.impl("trunc_", TORCH_FN(Unary<at::meta::trunc_>));
  m.impl("frac_", TORCH_FN(Unary<at::meta::frac_>));
  m.impl("sign_", TORCH_FN(Unary<at::meta::sign_>));
  m.impl("sgn_", TORCH_FN(Unary<at::meta::sgn_>));
  m.impl("clamp_min_", TORCH_FN(ClampMin));
  m.impl("clamp_max_", TORCH_FN(ClampMax));
  m.impl("leaky_relu_", TORCH_FN(LeakyRelu));
  m.impl("hardtanh_", TORCH_FN(Hardtanh));
  m.impl("gelu_", TORCH_FN(Gelu));
  m.impl("elu_", TORCH_FN(Elu));
  m.impl("threshold_", TORCH_FN(Threshold));
}

}  // namespace
}  // namespace torch_xla
