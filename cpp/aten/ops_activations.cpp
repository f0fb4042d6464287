// Activation kernels: GELU (exact and tanh), softmax and log-softmax's relatives
// (plain and "safe", as the attention math path uses it) and PReLU, with their backward
// formulas. Low-precision floats (bf16, f16) compute in f32 internally and round once at
// the end, as PyTorch's CPU kernels do. (Element-wise activations such as relu, silu or
// hardtanh are in ops_elementwise.cpp.)
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;

// ---- gelu ------------------------------------------------------------------

enum class GeluKind { kNone, kTanh };

GeluKind ParseApproximate(c10::string_view approximate, const char* op) {
  if (approximate == "none") return GeluKind::kNone;
  if (approximate == "tanh") return GeluKind::kTanh;
  TORCH_CHECK(false, op, ": approximate argument must be either none or tanh, got '", std::string(approximate), "'");
}

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
constexpr double kKappa = 0.044715;

// tanh(sqrt(2/pi) * (x + kappa x^3))
Value GeluTanhInner(const Value& x) {
  Value x3 = Mul(Mul(x, x), x);
  return ir::Unary(ir::op::kTanh, Mul(ScalarLike(kSqrt2OverPi, x), Add(x, Mul(ScalarLike(kKappa, x), x3))));
}


}  // namespace

// ---- gelu ------------------------------------------------------------------

at::Tensor XLANativeFunctions::gelu(const at::Tensor& self, c10::string_view approximate) {
  XLA_COUNT("gelu");
  GeluKind kind = ParseApproximate(approximate, "gelu");
  CheckFloatingArg(self, "gelu", "input");
  XlaTensorPtr x = GetXlaTensor(self, "gelu");
  ElementType type = x->shape().type;
  Value v = ir::Convert(x->GetIrValue(), AccumulationType(type));
  Value half_x = Mul(ScalarLike(0.5, v), v);
  Value y = kind == GeluKind::kNone
                ? Mul(half_x, Add(ScalarLike(1, v), ir::Unary(ir::op::kErf, Mul(v, ScalarLike(1 / kSqrt2, v)))))
                : Mul(half_x, Add(ScalarLike(1, v), GeluTanhInner(v)));
  return AtenFromIr(ir::Convert(y, type), x->device());
}

at::Tensor XLANativeFunctions::gelu_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                             c10::string_view approximate) {
  XLA_COUNT("gelu_backward");
  const char* op = "gelu_backward";
  GeluKind kind = ParseApproximate(approximate, op);
  CheckFloatingArg(self, op, "input");
  TORCH_CHECK(grad_output.sizes() == self.sizes(), op, ": grad_output ", DescribeTensor(grad_output),
              " does not match input ", DescribeTensor(self));
  int device = CommonDevice({&grad_output, &self}, op);
  ElementType type = ElementTypeOf(at::result_type(grad_output, self));
  ElementType ct = AccumulationType(type);
  Value x = ir::Convert(GetXlaTensor(self, op)->GetIrValue(), ct);
  Value g = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), ct);
  Value d;
  if (kind == GeluKind::kNone) {
    Value cdf = Mul(ScalarLike(0.5, x), Add(ScalarLike(1, x), ir::Unary(ir::op::kErf, Mul(x, ScalarLike(1 / kSqrt2, x)))));
    Value pdf = Mul(ScalarLike(kInvSqrt2Pi, x), ir::Unary(ir::op::kExp, Mul(ScalarLike(-0.5, x), Mul(x, x))));
    d = Add(cdf, Mul(x, pdf));
  } else {
    Value t = GeluTanhInner(x);
    Value left_derivative = Mul(ScalarLike(0.5, x), Add(ScalarLike(1, x), t));
    Value inner_derivative =
        Mul(ScalarLike(kSqrt2OverPi, x), Add(ScalarLike(1, x), Mul(ScalarLike(3 * kKappa, x), Mul(x, x))));
    Value right_derivative = Mul(Mul(Mul(ScalarLike(0.5, x), x), Sub(ScalarLike(1, x), Mul(t, t))), inner_derivative);
    d = Add(left_derivative, right_derivative);
  }
  return AtenFromIr(ir::Convert(Mul(g, d), type), device);
}

// ---- softmax ---------------------------------------------------------------

at::Tensor XLANativeFunctions::_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  XLA_COUNT("_softmax");
  TORCH_CHECK(!half_to_float, "_softmax: softmax with half to float conversion is not supported on XLA");
  CheckFloatingArg(self, "_softmax", "input");
  XlaTensorPtr x = GetXlaTensor(self, "_softmax");
  ElementType type = x->shape().type;
  int64_t d = WrapDim(dim, x->shape().rank(), "_softmax");
  Value v = ir::Convert(x->GetIrValue(), AccumulationType(type));
  if (x->shape().rank() == 0) return AtenFromIr(ir::Convert(ScalarLike(1, v), type), x->device());
  return AtenFromIr(ir::Convert(SoftmaxOf(v, d), type), x->device());
}

at::Tensor XLANativeFunctions::_softmax_backward_data(const at::Tensor& grad_output, const at::Tensor& output,
                                                      int64_t dim, at::ScalarType input_dtype) {
  XLA_COUNT("_softmax_backward_data");
  const char* op = "_softmax_backward_data";
  TORCH_CHECK(grad_output.sizes() == output.sizes(), op, ": grad_output ", DescribeTensor(grad_output),
              " does not match output ", DescribeTensor(output));
  CheckFloatingArg(output, op, "output");
  int device = CommonDevice({&grad_output, &output}, op);
  int64_t d = WrapDim(dim, output.dim(), op);
  ElementType ct = AccumulationType(ElementTypeOf(output.scalar_type()));
  Value y = ir::Convert(GetXlaTensor(output, op)->GetIrValue(), ct);
  Value g = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), ct);
  ElementType out_type = ElementTypeOf(input_dtype);
  if (output.dim() == 0) return AtenFromIr(ir::Convert(ScalarLike(0, y), out_type), device);
  Value dx = Mul(y, Sub(g, ReduceBroadcast(ReduceKind::kSum, Mul(g, y), {d})));
  return AtenFromIr(ir::Convert(dx, out_type), device);
}

at::Tensor XLANativeFunctions::_safe_softmax(const at::Tensor& self, int64_t dim,
                                             std::optional<at::ScalarType> dtype) {
  XLA_COUNT("_safe_softmax");
  XlaTensorPtr x = GetXlaTensor(self, "_safe_softmax");
  ElementType type = dtype ? ElementTypeOf(*dtype) : x->shape().type;
  TORCH_CHECK(runtime::IsFloating(type), "_safe_softmax: expected a floating point input or dtype, got ",
              DescribeTensor(self), dtype ? " with dtype " + std::string(c10::toString(*dtype)) : std::string());
  int64_t d = WrapDim(dim, x->shape().rank(), "_safe_softmax");
  Value v = ir::Convert(ir::Convert(x->GetIrValue(), type), AccumulationType(type));
  if (x->shape().rank() == 0) return AtenFromIr(ir::Convert(ScalarLike(1, v), type), x->device());
  // Rows whose elements are all -inf (fully masked) give zeros instead of NaN.
  Value max = ReduceBroadcast(ReduceKind::kMax, v, {d});
  Value masked = ir::Compare(CompareDirection::kEq, max, ScalarLike(-std::numeric_limits<double>::infinity(), max));
  Value y = ir::Select(masked, ScalarLike(0, v), SoftmaxOf(v, d));
  return AtenFromIr(ir::Convert(y, type), x->device());
}

// ---- PReLU ------------------------------------------------------------------
// PReLU's kernels. PyTorch's composite prelu reshapes the weight to broadcast against
// the input (one value, or one per channel) and calls these:
//   _prelu_kernel            x > 0 ? x : w * x
//   _prelu_kernel_backward   grad_input  = x > 0 ? g : w * g
//                            grad_weight = x > 0 ? 0 : x * g   (in the broadcast shape;
//                            autograd sums it down to the weight's shape)
// Low-precision inputs compute in f32 and round at the end.
namespace {


// The type the kernels compute in: the operands' promoted type, which must be floating.
ElementType CheckedType(const char* op, const at::Tensor& self, const at::Tensor& weight) {
  at::ScalarType common = at::result_type(self, weight);
  TORCH_CHECK(at::isFloatingType(common), op, ": expected a floating point input and weight, got input ",
              DescribeTensor(self), " and weight ", DescribeTensor(weight));
  return ElementTypeOf(common);
}

Value Positive(const Value& x) { return ir::Compare(CompareDirection::kGt, x, ScalarLike(0, x)); }

}  // namespace

at::Tensor XLANativeFunctions::_prelu_kernel(const at::Tensor& self, const at::Tensor& weight) {
  XLA_COUNT("_prelu_kernel");
  const char* op = "prelu";
  ElementType type = CheckedType(op, self, weight);
  int device = CommonDevice({&self, &weight}, op);
  return AtenFromIr(Checked(op, [&] {
                      std::vector<Value> v = BroadcastOperands({&self, &weight}, AccumulationType(type), op);
                      const Value &x = v[0], &w = v[1];
                      return ir::Convert(ir::Select(Positive(x), x, Mul(w, x)), type);
                    }),
                    device);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::_prelu_kernel_backward(const at::Tensor& grad_output,
                                                                              const at::Tensor& self,
                                                                              const at::Tensor& weight) {
  XLA_COUNT("_prelu_kernel_backward");
  const char* op = "prelu_backward";
  ElementType type = CheckedType(op, self, weight);
  int device = CommonDevice({&grad_output, &self, &weight}, op);
  return Checked(op, [&] {
    std::vector<Value> v = BroadcastOperands({&grad_output, &self, &weight}, AccumulationType(type), op);
    const Value &g = v[0], &x = v[1], &w = v[2];
    Value positive = Positive(x);
    Value grad_input = ir::Select(positive, g, Mul(w, g));
    Value grad_weight = ir::Select(positive, ScalarLike(0, x), Mul(x, g));
    return std::make_tuple(AtenFromIr(ir::Convert(grad_input, ElementTypeOf(self.scalar_type())), device),
                           AtenFromIr(ir::Convert(grad_weight, ElementTypeOf(weight.scalar_type())), device));
  });
}

}  // namespace torch_xla
