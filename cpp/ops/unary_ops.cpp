// Unary element-wise kernels: arithmetic (neg, abs, reciprocal, sign, rounding), powers
// and logarithms, trigonometric and hyperbolic functions, erf and its relatives, lgamma,
// digamma, sinc, signbit, logical_not, bitwise_not, nan_to_num, logit, and the backward
// formulas of sigmoid, tanh and logit. Float-valued ops compute integers and bools in the
// default float type (ops/elementwise_util.h).
#include <ATen/ATen.h>

#include <cmath>
#include <limits>
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

// A float-valued unary op (exp, log, ...).
at::Tensor FloatUnary(ir::OpKind kind, const at::Tensor& self, const char* op) {
  XlaTensorPtr x = GetXlaTensor(self, op);
  Value v = ir::Convert(x->GetIrValue(), FloatType(x->shape().type));
  return AtenFromIr(ir::Unary(kind, v), x->device());
}

// A unary op that keeps the type (neg, abs, ...).
at::Tensor SameTypeUnary(ir::OpKind kind, const at::Tensor& self, const char* op) {
  XlaTensorPtr x = GetXlaTensor(self, op);
  return AtenFromIr(ir::Unary(kind, x->GetIrValue()), x->device());
}

}  // namespace

// ---- arithmetic ----------------------------------------------------------

at::Tensor XLANativeFunctions::neg(const at::Tensor& self) {
  XLA_COUNT("neg");
  TORCH_CHECK(self.scalar_type() != at::kBool,
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
              "use the `~` or `logical_not()` operator instead.");
  return SameTypeUnary(ir::op::kNegate, self, "neg");
}

at::Tensor XLANativeFunctions::abs(const at::Tensor& self) {
  XLA_COUNT("abs");
  TORCH_CHECK(self.scalar_type() != at::kBool, "abs: boolean tensors are not supported (as on the CPU), got ",
              DescribeTensor(self));
  return SameTypeUnary(ir::op::kAbs, self, "abs");
}

at::Tensor XLANativeFunctions::exp(const at::Tensor& self) {
  XLA_COUNT("exp");
  return FloatUnary(ir::op::kExp, self, "exp");
}

at::Tensor XLANativeFunctions::log(const at::Tensor& self) {
  XLA_COUNT("log");
  return FloatUnary(ir::op::kLog, self, "log");
}

at::Tensor XLANativeFunctions::sqrt(const at::Tensor& self) {
  XLA_COUNT("sqrt");
  return FloatUnary(ir::op::kSqrt, self, "sqrt");
}

at::Tensor XLANativeFunctions::rsqrt(const at::Tensor& self) {
  XLA_COUNT("rsqrt");
  return FloatUnary(ir::op::kRsqrt, self, "rsqrt");
}

at::Tensor XLANativeFunctions::tanh(const at::Tensor& self) {
  XLA_COUNT("tanh");
  return FloatUnary(ir::op::kTanh, self, "tanh");
}

at::Tensor XLANativeFunctions::sigmoid(const at::Tensor& self) {
  XLA_COUNT("sigmoid");
  return FloatUnary(ir::op::kLogistic, self, "sigmoid");
}

at::Tensor XLANativeFunctions::sin(const at::Tensor& self) {
  XLA_COUNT("sin");
  return FloatUnary(ir::op::kSin, self, "sin");
}

at::Tensor XLANativeFunctions::cos(const at::Tensor& self) {
  XLA_COUNT("cos");
  return FloatUnary(ir::op::kCos, self, "cos");
}

at::Tensor XLANativeFunctions::floor(const at::Tensor& self) {
  XLA_COUNT("floor");
  if (!runtime::IsFloating(ElementTypeOf(self.scalar_type()))) return clone(self, std::nullopt);
  return SameTypeUnary(ir::op::kFloor, self, "floor");
}

at::Tensor XLANativeFunctions::ceil(const at::Tensor& self) {
  XLA_COUNT("ceil");
  if (!runtime::IsFloating(ElementTypeOf(self.scalar_type()))) return clone(self, std::nullopt);
  return SameTypeUnary(ir::op::kCeil, self, "ceil");
}

at::Tensor XLANativeFunctions::sigmoid_backward(const at::Tensor& grad_output, const at::Tensor& output) {
  XLA_COUNT("sigmoid_backward");
  Operands o = Promote(grad_output, output, ResultType(grad_output, output), "sigmoid_backward");
  Value one_minus = ir::Binary(ir::op::kSubtract, ScalarLike(1, o.b), o.b);
  return AtenFromIr(ir::Binary(ir::op::kMultiply, o.a, ir::Binary(ir::op::kMultiply, o.b, one_minus)), o.device);
}

at::Tensor XLANativeFunctions::tanh_backward(const at::Tensor& grad_output, const at::Tensor& output) {
  XLA_COUNT("tanh_backward");
  Operands o = Promote(grad_output, output, ResultType(grad_output, output), "tanh_backward");
  Value one_minus_sq = ir::Binary(ir::op::kSubtract, ScalarLike(1, o.b), ir::Binary(ir::op::kMultiply, o.b, o.b));
  return AtenFromIr(ir::Binary(ir::op::kMultiply, o.a, one_minus_sq), o.device);
}

// ---- logical_not, bitwise_not ----------------------------------------------------
at::Tensor XLANativeFunctions::logical_not(const at::Tensor& self) {
  XLA_COUNT("logical_not");
  XlaTensorPtr x = GetXlaTensor(self, "logical_not");
  return AtenFromIr(ir::Unary(ir::op::kNot, Pred(x->GetIrValue())), x->device());
}

at::Tensor XLANativeFunctions::bitwise_not(const at::Tensor& self) {
  XLA_COUNT("bitwise_not");
  TORCH_CHECK(!runtime::IsFloating(ElementTypeOf(self.scalar_type())),
              "bitwise_not is only supported for integer and boolean tensors, got ", DescribeTensor(self));
  return SameTypeUnary(ir::op::kNot, self, "bitwise_not");
}

// ---- more math -------------------------------------------------------------------
namespace {

// The operand of a float-valued unary op, converted to its float compute type.
struct FloatIn {
  Value v;
  int device;
};
FloatIn GetFloat(const at::Tensor& self, const char* op) {
  XlaTensorPtr x = GetXlaTensor(self, op);
  return FloatIn{ir::Convert(x->GetIrValue(), FloatType(x->shape().type)), x->device()};
}

Value Trunc(const Value& x) {
  return ir::Select(Cmp(CompareDirection::kLt, x, Zeros(x)), ir::Unary(ir::op::kCeil, x), ir::Unary(ir::op::kFloor, x));
}

const ir::OpKind kErfInv = ir::OpKind::Get("chlo.erf_inv");
const ir::OpKind kAsin = ir::OpKind::Get("chlo.asin");
const ir::OpKind kAcos = ir::OpKind::Get("chlo.acos");
const ir::OpKind kAtan = ir::OpKind::Get("chlo.atan");
const ir::OpKind kSinh = ir::OpKind::Get("chlo.sinh");
const ir::OpKind kCosh = ir::OpKind::Get("chlo.cosh");
const ir::OpKind kAsinh = ir::OpKind::Get("chlo.asinh");
const ir::OpKind kAcosh = ir::OpKind::Get("chlo.acosh");
const ir::OpKind kAtanh = ir::OpKind::Get("chlo.atanh");

// The largest finite value of a floating type (nan_to_num's default replacements).
double MaxFinite(ElementType t) {
  switch (t) {
    case ElementType::kF64: return std::numeric_limits<double>::max();
    case ElementType::kBF16: return static_cast<float>(std::numeric_limits<c10::BFloat16>::max());
    case ElementType::kF16: return static_cast<float>(std::numeric_limits<c10::Half>::max());
    default: return std::numeric_limits<float>::max();
  }
}

}  // namespace

#define XLA_FLOAT_UNARY(name, kind)                         \
  at::Tensor XLANativeFunctions::name(const at::Tensor& self) { \
    XLA_COUNT(#name);                                       \
    return FloatUnary(kind, self, #name);                   \
  }
XLA_FLOAT_UNARY(erf, ir::op::kErf)
XLA_FLOAT_UNARY(erfinv, kErfInv)
XLA_FLOAT_UNARY(log1p, ir::op::kLog1p)
XLA_FLOAT_UNARY(expm1, ir::op::kExpm1)
XLA_FLOAT_UNARY(tan, ir::op::kTan)
XLA_FLOAT_UNARY(asin, kAsin)
XLA_FLOAT_UNARY(acos, kAcos)
XLA_FLOAT_UNARY(atan, kAtan)
XLA_FLOAT_UNARY(sinh, kSinh)
XLA_FLOAT_UNARY(cosh, kCosh)
XLA_FLOAT_UNARY(asinh, kAsinh)
XLA_FLOAT_UNARY(acosh, kAcosh)
XLA_FLOAT_UNARY(atanh, kAtanh)
#undef XLA_FLOAT_UNARY

at::Tensor XLANativeFunctions::log2(const at::Tensor& self) {
  XLA_COUNT("log2");
  FloatIn in = GetFloat(self, "log2");
  Value l = ir::Unary(ir::op::kLog, in.v);
  return AtenFromIr(Mul(l, BcastD(1.0 / std::log(2.0), l)), in.device);
}

at::Tensor XLANativeFunctions::log10(const at::Tensor& self) {
  XLA_COUNT("log10");
  FloatIn in = GetFloat(self, "log10");
  Value l = ir::Unary(ir::op::kLog, in.v);
  return AtenFromIr(Mul(l, BcastD(1.0 / std::log(10.0), l)), in.device);
}

at::Tensor XLANativeFunctions::exp2(const at::Tensor& self) {
  XLA_COUNT("exp2");
  FloatIn in = GetFloat(self, "exp2");
  return AtenFromIr(ir::Binary(ir::op::kPower, ScalarLike(2, in.v), in.v), in.device);
}

at::Tensor XLANativeFunctions::reciprocal(const at::Tensor& self) {
  XLA_COUNT("reciprocal");
  FloatIn in = GetFloat(self, "reciprocal");
  return AtenFromIr(Div(ScalarLike(1, in.v), in.v), in.device);
}

at::Tensor XLANativeFunctions::sign(const at::Tensor& self) {
  XLA_COUNT("sign");
  TORCH_CHECK(!at::isComplexType(self.scalar_type()), "Unlike NumPy, torch.sign is not intended to support complex numbers. "
              "Please use torch.sgn instead.");
  XlaTensorPtr x = GetXlaTensor(self, "sign");
  Value v = x->GetIrValue();
  ElementType t = v.shape().type;
  if (t == ElementType::kPred) return AtenFromIr(v, x->device());
  if (runtime::IsUnsigned(t)) return AtenFromIr(ir::Convert(Pred(v), t), x->device());
  Value r = ir::Unary(ir::op::kSign, v);
  if (IsFloatType(t)) r = ir::Select(IsNan(v), Zeros(v), r);  // PyTorch: sign(nan) = 0
  return AtenFromIr(r, x->device());
}

at::Tensor XLANativeFunctions::sgn(const at::Tensor& self) {
  XLA_COUNT("sgn");
  if (!at::isComplexType(self.scalar_type())) return sign(self);
  // z / |z|, and 0 at 0: stablehlo.sign's definition for complex numbers.
  XlaTensorPtr x = GetXlaTensor(self, "sgn");
  return AtenFromIr(ir::Unary(ir::op::kSign, x->GetIrValue()), x->device());
}

at::Tensor XLANativeFunctions::round(const at::Tensor& self) {
  XLA_COUNT("round");
  if (!at::isFloatingType(self.scalar_type())) return clone(self, std::nullopt);
  return SameTypeUnary(ir::op::kRoundEven, self, "round");
}

at::Tensor XLANativeFunctions::round(const at::Tensor& self, int64_t decimals) {
  XLA_COUNT("round");
  if (decimals == 0) return round(self);
  CheckFloating(self, "round");
  XlaTensorPtr x = GetXlaTensor(self, "round");
  Value v = x->GetIrValue();
  bool neg = decimals < 0;
  // The power of ten in the tensor's type, as PyTorch computes it.
  Value ten = BcastD(std::pow(10.0, static_cast<double>(neg ? -decimals : decimals)), v);
  Value r = neg ? Mul(ir::Unary(ir::op::kRoundEven, Div(v, ten)), ten)
                : Div(ir::Unary(ir::op::kRoundEven, Mul(v, ten)), ten);
  return AtenFromIr(r, x->device());
}

at::Tensor XLANativeFunctions::trunc(const at::Tensor& self) {
  XLA_COUNT("trunc");
  if (!at::isFloatingType(self.scalar_type())) return clone(self, std::nullopt);
  XlaTensorPtr x = GetXlaTensor(self, "trunc");
  return AtenFromIr(Trunc(x->GetIrValue()), x->device());
}

at::Tensor XLANativeFunctions::frac(const at::Tensor& self) {
  XLA_COUNT("frac");
  CheckFloating(self, "frac");
  XlaTensorPtr x = GetXlaTensor(self, "frac");
  Value v = x->GetIrValue();
  return AtenFromIr(Sub(v, Trunc(v)), x->device());
}

// ---- nan_to_num ------------------------------------------------------------------

at::Tensor XLANativeFunctions::nan_to_num(const at::Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                                          std::optional<double> neginf) {
  XLA_COUNT("nan_to_num");
  if (!at::isFloatingType(self.scalar_type())) return clone(self, std::nullopt);
  XlaTensorPtr x = GetXlaTensor(self, "nan_to_num");
  Value v = x->GetIrValue();
  double big = MaxFinite(v.shape().type);
  Value r = ir::Select(IsNan(v), BcastD(nan.value_or(0.0), v), v);
  r = ir::Select(Cmp(CompareDirection::kEq, v, BcastD(INFINITY, v)), BcastD(posinf.value_or(big), v), r);
  r = ir::Select(Cmp(CompareDirection::kEq, v, BcastD(-INFINITY, v)), BcastD(neginf.value_or(-big), v), r);
  return AtenFromIr(r, x->device());
}

// ---- logit ------------------------------------------------------------------------

at::Tensor XLANativeFunctions::logit(const at::Tensor& self, std::optional<double> eps) {
  XLA_COUNT("logit");
  FloatIn in = GetFloat(self, "logit");
  Value x = in.v;
  if (eps) x = ir::Binary(ir::op::kMinimum, ir::Binary(ir::op::kMaximum, x, BcastD(*eps, x)), BcastD(1.0 - *eps, x));
  return AtenFromIr(ir::Unary(ir::op::kLog, Div(x, Sub(ScalarLike(1, x), x))), in.device);
}

at::Tensor XLANativeFunctions::logit_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                              std::optional<double> eps) {
  XLA_COUNT("logit_backward");
  BackIn b = GetBack(grad_output, self, "logit_backward");
  Value x = b.x, g = b.g;
  double lo = eps ? *eps : 0.0, hi = eps ? 1.0 - *eps : 1.0;
  Value outside = Or(Cmp(CompareDirection::kLt, x, BcastD(lo, x)), Cmp(CompareDirection::kGt, x, BcastD(hi, x)));
  Value grad = Div(g, Mul(x, Sub(ScalarLike(1, x), x)));
  return AtenFromIr(ir::Select(outside, eps ? Zeros(g) : ScalarLike(NAN, g), grad), b.device);
}

// ---- erfc, lgamma, digamma, sinc, signbit -----------------------------------------
namespace {
const ir::OpKind kErfc = ir::OpKind::Get("chlo.erfc");
const ir::OpKind kLgamma = ir::OpKind::Get("chlo.lgamma");
const ir::OpKind kDigamma = ir::OpKind::Get("chlo.digamma");
}  // namespace

at::Tensor XLANativeFunctions::erfc(const at::Tensor& self) {
  XLA_COUNT("erfc");
  return FloatUnary(kErfc, self, "erfc");
}

at::Tensor XLANativeFunctions::lgamma(const at::Tensor& self) {
  XLA_COUNT("lgamma");
  return FloatUnary(kLgamma, self, "lgamma");
}

at::Tensor XLANativeFunctions::digamma(const at::Tensor& self) {
  XLA_COUNT("digamma");
  XlaTensorPtr t = GetXlaTensor(self, "digamma");
  // At zero PyTorch gives the pole's one-sided limit, -inf at +0 and +inf at -0 (XLA:
  // NaN).
  Value x = ir::Convert(t->GetIrValue(), FloatType(t->shape().type)), r = ir::Unary(kDigamma, x);
  Value pole = ir::Select(SignBit(x), ScalarLike(INFINITY, x), ScalarLike(-INFINITY, x));
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kEq, x, Zeros(x)), pole, r), t->device());
}

at::Tensor XLANativeFunctions::sinc(const at::Tensor& self) {
  XLA_COUNT("sinc");
  FloatIn in = GetFloat(self, "sinc");
  Value px = Mul(in.v, BcastD(M_PI, in.v));
  Value r = Div(ir::Unary(ir::op::kSin, px), px);
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kEq, in.v, Zeros(in.v)), ScalarLike(1, in.v), r), in.device);
}

at::Tensor XLANativeFunctions::signbit(const at::Tensor& self) {
  XLA_COUNT("signbit");
  XlaTensorPtr x = GetXlaTensor(self, "signbit");
  return AtenFromIr(SignBit(x->GetIrValue()), x->device());
}

}  // namespace torch_xla
