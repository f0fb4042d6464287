// Dropout's random kernels: bernoulli (dropout's mask on this backend), native_dropout
// and its backward. They draw from the per-device RNG state (tensor/rng_state.h), so
// xm.set_rng_state() repeats them.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"
#include "tensor/rng_state.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;

ElementType UniformType(ElementType t) { return t == ElementType::kF64 ? ElementType::kF64 : ElementType::kF32; }

// Bernoulli draws as a pred tensor of `dims`: uniform [0, 1) < p.
Value BernoulliMask(int device, const std::vector<int64_t>& dims, const Value& p) {
  Value u = RandomUniform(device, ir::Shape(p.shape().type, dims));
  return ir::Compare(CompareDirection::kLt, u, p);
}

}  // namespace

// ---- bernoulli ---------------------------------------------------------------

at::Tensor XLANativeFunctions::bernoulli(const at::Tensor& self, double p, std::optional<at::Generator> generator) {
  XLA_COUNT("bernoulli");
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  XlaTensorPtr x = GetXlaTensor(self, "bernoulli");
  ElementType work = UniformType(x->shape().type);
  Value mask = BernoulliMask(x->device(), x->shape().dims, ir::Broadcast(IrScalar(p, work), x->shape().dims));
  return AtenFromIr(ir::Convert(mask, x->shape().type), x->device());
}

at::Tensor XLANativeFunctions::bernoulli(const at::Tensor& self, std::optional<at::Generator> generator) {
  XLA_COUNT("bernoulli");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "bernoulli: expected a floating point tensor of probabilities, got ",
              DescribeTensor(self));
  XlaTensorPtr x = GetXlaTensor(self, "bernoulli");
  Value p = ir::Convert(x->GetIrValue(), UniformType(x->shape().type));
  return AtenFromIr(ir::Convert(BernoulliMask(x->device(), x->shape().dims, p), x->shape().type), x->device());
}

at::Tensor XLANativeFunctions::bernoulli(const at::Tensor& self, const at::Tensor& p,
                                         std::optional<at::Generator> generator) {
  XLA_COUNT("bernoulli");
  TORCH_CHECK(at::isFloatingType(p.scalar_type()), "bernoulli_: expected a floating point tensor of probabilities, got ",
              DescribeTensor(p));
  int device = CommonDevice({&self, &p}, "bernoulli_");
  XlaTensorPtr x = GetXlaTensor(self, "bernoulli_");
  const auto& dims = x->shape().dims;
  ElementType work = UniformType(ElementTypeOf(p.scalar_type()));
  Value pv = Checked("bernoulli_", [&] { return ir::Broadcast(IrOperand(p, work, "bernoulli_"), dims); });
  return AtenFromIr(ir::Convert(BernoulliMask(device, dims, pv), x->shape().type), device);
}

// ---- dropout -----------------------------------------------------------------

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::native_dropout(const at::Tensor& input, double p,
                                                                      std::optional<bool> train) {
  XLA_COUNT("native_dropout");
  TORCH_CHECK(p >= 0 && p <= 1, "native_dropout: dropout probability has to be between 0 and 1, but got ", p);
  TORCH_CHECK(at::isFloatingType(input.scalar_type()), "native_dropout: expected a floating point input, got ",
              DescribeTensor(input));
  XlaTensorPtr x = GetXlaTensor(input, "native_dropout");
  const auto& dims = x->shape().dims;
  ElementType type = x->shape().type;
  int device = x->device();
  Value v = x->GetIrValue();
  if (train.has_value() && !*train) {
    return std::make_tuple(AtenFromIr(v, device), AtenFromIr(ir::Constant(1, ir::Shape(ElementType::kPred, dims)), device));
  }
  double keep = 1 - p;
  double scale = keep == 0 ? 0 : 1 / keep;
  ElementType work = UniformType(type);
  Value mask = BernoulliMask(device, dims, ir::Broadcast(IrScalar(keep, work), dims));
  Value out = ir::Binary(ir::op::kMultiply, ir::Binary(ir::op::kMultiply, v, ir::Convert(mask, type)),
                         ir::Broadcast(IrScalar(scale, type), dims));
  return std::make_tuple(AtenFromIr(out, device), AtenFromIr(mask, device));
}

at::Tensor XLANativeFunctions::native_dropout_backward(const at::Tensor& grad_output, const at::Tensor& mask,
                                                       double scale) {
  XLA_COUNT("native_dropout_backward");
  const char* op = "native_dropout_backward";
  TORCH_CHECK(mask.scalar_type() == at::kBool, op, ": Mask should be Bool Scalar Type, got ", DescribeTensor(mask));
  TORCH_CHECK(mask.sizes() == grad_output.sizes(), op, ": mask ", DescribeTensor(mask), " does not match grad_output ",
              DescribeTensor(grad_output));
  int device = CommonDevice({&grad_output, &mask}, op);
  Value g = GetXlaTensor(grad_output, op)->GetIrValue();
  // An integer gradient times the (float) scale is a float, as in eager.
  if (!runtime::IsFloating(g.shape().type)) g = ir::Convert(g, DefaultFloatType());
  ElementType type = g.shape().type;
  Value m = ir::Convert(GetXlaTensor(mask, op)->GetIrValue(), type);
  Value out = ir::Binary(ir::op::kMultiply, ir::Binary(ir::op::kMultiply, g, m),
                         ir::Broadcast(IrScalar(scale, type), g.shape().dims));
  return AtenFromIr(out, device);
}

}  // namespace torch_xla
