// Random kernels on the device, from the per-device RNG state (tensor/rng_state.h).
#include <ATen/ATen.h>

#include <cmath>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"
#include "tensor/rng_state.h"

namespace torch_xla {

using ir::Value;

at::Tensor XLANativeFunctions::uniform(const at::Tensor& self, double from, double to,
                                       std::optional<at::Generator> generator) {
  XLA_COUNT("uniform");
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  XlaTensorPtr x = GetXlaTensor(self, "uniform_");
  TORCH_CHECK(runtime::IsFloating(x->shape().type), "uniform_ expects a floating point tensor, got ", DescribeTensor(self));
  runtime::ElementType work = x->shape().type == runtime::ElementType::kF64 ? runtime::ElementType::kF64
                                                                             : runtime::ElementType::kF32;
  Value u = RandomUniform(x->device(), ir::Shape(work, x->shape().dims));
  Value scaled = ir::Binary(ir::op::kAdd, ir::Binary(ir::op::kMultiply, u, ir::Broadcast(IrScalar(to - from, work), u.shape().dims)),
                            ir::Broadcast(IrScalar(from, work), u.shape().dims));
  return AtenFromIr(ir::Convert(scaled, x->shape().type), x->device());
}

at::Tensor XLANativeFunctions::normal_functional(const at::Tensor& self, double mean, double std,
                                                 std::optional<at::Generator> generator) {
  XLA_COUNT("normal");
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  XlaTensorPtr x = GetXlaTensor(self, "normal_");
  TORCH_CHECK(runtime::IsFloating(x->shape().type), "normal_ expects a floating point tensor, got ", DescribeTensor(self));
  runtime::ElementType work = x->shape().type == runtime::ElementType::kF64 ? runtime::ElementType::kF64
                                                                             : runtime::ElementType::kF32;
  ir::Shape shape(work, x->shape().dims);
  // Box-Muller: z = sqrt(-2 ln(1 - u1)) * cos(2 pi u2); 1 - u1 lies in (0, 1].
  Value u1 = RandomUniform(x->device(), shape);
  Value u2 = RandomUniform(x->device(), shape);
  Value r = ir::Unary(ir::op::kSqrt, ir::Binary(ir::op::kMultiply, ir::Constant(-2, shape),
                                                ir::Unary(ir::op::kLog, ir::Binary(ir::op::kSubtract, ir::Constant(1, shape), u1))));
  Value z = ir::Binary(ir::op::kMultiply, r,
                       ir::Unary(ir::op::kCos, ir::Binary(ir::op::kMultiply, ir::Constant(2 * M_PI, shape), u2)));
  Value out = ir::Binary(ir::op::kAdd, ir::Binary(ir::op::kMultiply, z, ir::Broadcast(IrScalar(std, work), shape.dims)),
                         ir::Broadcast(IrScalar(mean, work), shape.dims));
  return AtenFromIr(ir::Convert(out, x->shape().type), x->device());
}

}  // namespace torch_xla
