// The optimizers' element-wise arithmetic of three operands: addcmul, addcdiv and lerp,
// with PyTorch's type promotion over all three (ops/elementwise_util.h).
#include <ATen/ATen.h>
#include <ATen/native/TypeProperties.h>

#include <cmath>
#include <optional>

#include "XLANativeFunctions.h"
#include "ops/elementwise_util.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;
using namespace elementwise_util;

struct Operands3 {
  Value a, b, c;
  int device;
};

Operands3 Promote3(const at::Tensor& x, const at::Tensor& y, const at::Tensor& z, ElementType type, const char* op) {
  int device = CommonDevice({&x, &y, &z}, op);
  std::vector<Value> v = BroadcastOperands({&x, &y, &z}, type, op);
  return Operands3{v[0], v[1], v[2], device};
}

ElementType ResultType3(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  at::native::ResultTypeState state{};
  for (const at::Tensor* t : {&a, &b, &c}) state = at::native::update_result_type_state(*t, state);
  return ElementTypeOf(at::native::result_type(state));
}

}  // namespace

// ---- optimizer arithmetic ----------------------------------------------------------
at::Tensor XLANativeFunctions::addcmul(const at::Tensor& self, const at::Tensor& tensor1, const at::Tensor& tensor2,
                                       const at::Scalar& value) {
  XLA_COUNT("addcmul");
  ElementType type = ResultType3(self, tensor1, tensor2);
  TORCH_CHECK(type != ElementType::kPred, "addcmul: boolean tensors are not supported");
  Operands3 o = Promote3(self, tensor1, tensor2, type, "addcmul");
  Value t1 = ScalarIs(value, 1) ? o.b : Mul(Bcast(value, o.b), o.b);
  return AtenFromIr(Add(o.a, Mul(t1, o.c)), o.device);
}

at::Tensor XLANativeFunctions::addcdiv(const at::Tensor& self, const at::Tensor& tensor1, const at::Tensor& tensor2,
                                       const at::Scalar& value) {
  XLA_COUNT("addcdiv");
  TORCH_CHECK(!(at::isIntegralType(tensor1.scalar_type(), true) && at::isIntegralType(tensor2.scalar_type(), true)),
              "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a "
              "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
              "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
              "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
              "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  ElementType type = ResultType3(self, tensor1, tensor2);
  Operands3 o = Promote3(self, tensor1, tensor2, type, "addcdiv");
  Value t1 = ScalarIs(value, 1) ? o.b : Mul(Bcast(value, o.b), o.b);
  return AtenFromIr(Add(o.a, Div(t1, o.c)), o.device);
}

namespace {
// PyTorch's lerp: weight < 0.5 ? self + weight * (end - self) : end - (end - self) * (1 - weight),
// computed in float32 for bfloat16 and float16 and rounded once, as PyTorch's kernels do
// (rounding each step gave a fifth of a value off on a GPU, which computes in bfloat16
// where the CPU widens). `low_weight`: whether |weight| < 0.5 is known when tracing (a
// scalar weight: the optimizers' lerp_), so that one branch is traced.
Value Lerp(const Value& a, const Value& b, const Value& w, std::optional<bool> low_weight = std::nullopt) {
  const ElementType type = a.shape().type;
  if (type == ElementType::kBF16 || type == ElementType::kF16) {
    auto wide = [](const Value& v) { return ir::Convert(v, ElementType::kF32); };
    return ir::Convert(Lerp(wide(a), wide(b), wide(w), low_weight), type);
  }
  Value diff = Sub(b, a);
  auto low = [&] { return Add(a, Mul(w, diff)); };
  auto high = [&] { return Sub(b, Mul(diff, Sub(ScalarLike(1, w), w))); };
  if (low_weight) return *low_weight ? low() : high();
  return ir::Select(Cmp(CompareDirection::kLt, ir::Unary(ir::op::kAbs, w), ScalarLike(0.5, w)), low(), high());
}

void CheckLerp(const at::Tensor& self, const at::Tensor& end, const at::Tensor* weight) {
  TORCH_CHECK(self.scalar_type() == end.scalar_type(), "lerp: expected dtype ", self.scalar_type(),
              " for `end` but got dtype ", end.scalar_type());
  if (weight)
    TORCH_CHECK(self.scalar_type() == weight->scalar_type(), "lerp: expected dtype ", self.scalar_type(),
                " for `weight` but got dtype ", weight->scalar_type());
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "lerp: expected floating-point tensors, got ",
              DescribeTensor(self));
}
}  // namespace

at::Tensor XLANativeFunctions::lerp(const at::Tensor& self, const at::Tensor& end, const at::Scalar& weight) {
  XLA_COUNT("lerp");
  CheckLerp(self, end, nullptr);
  Operands o = Promote(self, end, ElementTypeOf(self.scalar_type()), "lerp");
  return AtenFromIr(Lerp(o.a, o.b, Bcast(weight, o.a), std::abs(weight.toDouble()) < 0.5), o.device);
}

at::Tensor XLANativeFunctions::lerp(const at::Tensor& self, const at::Tensor& end, const at::Tensor& weight) {
  XLA_COUNT("lerp");
  CheckLerp(self, end, &weight);
  Operands3 o = Promote3(self, end, weight, ElementTypeOf(self.scalar_type()), "lerp");
  return AtenFromIr(Lerp(o.a, o.b, o.c), o.device);
}

}  // namespace torch_xla
