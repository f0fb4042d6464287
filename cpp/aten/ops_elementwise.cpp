// Element-wise kernels: arithmetic, comparisons, logical ops, activations and their
// backward formulas. PyTorch's type promotion (at::result_type) picks the compute type;
// operands are broadcast numpy-style.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;

struct Operands {
  Value a, b;
  int device;
};

// Both operands in `type`, broadcast to their common shape.
Operands Promote(const at::Tensor& self, const at::Tensor& other, ElementType type, const char* op) {
  int device = CommonDevice({&self, &other}, op);
  return Checked(op, [&] {
    Value a = IrOperand(self, type, op);
    Value b = IrOperand(other, type, op);
    std::vector<int64_t> dims = ir::BroadcastDims(a.shape().dims, b.shape().dims, op);
    return Operands{ir::Broadcast(a, dims), ir::Broadcast(b, dims), device};
  });
}

Operands PromoteScalar(const at::Tensor& self, const at::Scalar& other, ElementType type, const char* op) {
  XlaTensorPtr x = GetXlaTensor(self, op);
  Value a = ir::Convert(x->GetIrValue(), type);
  return Operands{a, ir::Broadcast(IrScalar(other, type), a.shape().dims), x->device()};
}

ElementType ResultType(const at::Tensor& a, const at::Tensor& b) { return ElementTypeOf(at::result_type(a, b)); }
ElementType ResultType(const at::Tensor& a, const at::Scalar& b) { return ElementTypeOf(at::result_type(a, b)); }

// The type of a float-valued op: integers and bools compute in the default float type.
ElementType FloatType(ElementType t) {
  return runtime::IsFloating(t) || runtime::IsComplex(t) ? t : DefaultFloatType();
}

// max/min that return NaN when either operand is NaN (PyTorch's semantics; the backend's
// maximum/minimum may return the other operand).
Value NanPropagating(ir::OpKind kind, const Value& a, const Value& b) {
  Value r = ir::Binary(kind, a, b);
  if (!runtime::IsFloating(a.shape().type)) return r;
  Value a_nan = ir::Compare(CompareDirection::kNe, a, a);
  Value b_nan = ir::Compare(CompareDirection::kNe, b, b);
  return ir::Select(a_nan, a, ir::Select(b_nan, b, r));
}

at::Tensor Binary(ir::OpKind kind, const at::Tensor& self, const at::Tensor& other, const char* op) {
  Operands o = Promote(self, other, ResultType(self, other), op);
  return AtenFromIr(ir::Binary(kind, o.a, o.b), o.device);
}

// self + alpha * other (alpha = 1 adds no multiply).
at::Tensor AddLike(ir::OpKind kind, const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha,
                   const char* op) {
  ElementType type = ResultType(self, other);
  Operands o = Promote(self, other, type, op);
  Value b = o.b;
  if (!(alpha.isIntegral(true) ? alpha.toLong() == 1 : alpha.toDouble() == 1.0))
    b = ir::Binary(ir::op::kMultiply, b, ir::Broadcast(IrScalar(alpha, type), b.shape().dims));
  return AtenFromIr(ir::Binary(kind, o.a, b), o.device);
}

at::Tensor Compare(CompareDirection dir, const at::Tensor& self, const at::Tensor& other, const char* op) {
  Operands o = Promote(self, other, ResultType(self, other), op);
  return AtenFromIr(ir::Compare(dir, o.a, o.b), o.device);
}

at::Tensor Compare(CompareDirection dir, const at::Tensor& self, const at::Scalar& other, const char* op) {
  Operands o = PromoteScalar(self, other, ResultType(self, other), op);
  return AtenFromIr(ir::Compare(dir, o.a, o.b), o.device);
}

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

Value ScalarLike(double v, const Value& like) { return ir::Constant(v, like.shape()); }

Value Pred(const Value& v) {
  if (v.shape().type == ElementType::kPred) return v;
  return ir::Compare(CompareDirection::kNe, v, ScalarLike(0, v));
}

}  // namespace

// ---- arithmetic ----------------------------------------------------------
at::Tensor XLANativeFunctions::add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  XLA_COUNT("add");
  return AddLike(ir::op::kAdd, self, other, alpha, "add");
}

at::Tensor XLANativeFunctions::sub(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  XLA_COUNT("sub");
  TORCH_CHECK(self.scalar_type() != at::kBool || other.scalar_type() != at::kBool,
              "Subtraction, the `-` operator, with two bool tensors is not supported.");
  return AddLike(ir::op::kSubtract, self, other, alpha, "sub");
}

at::Tensor XLANativeFunctions::mul(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("mul");
  ElementType type = ResultType(self, other);
  // bool * bool is logical and.
  return Binary(type == ElementType::kPred ? ir::op::kAnd : ir::op::kMultiply, self, other, "mul");
}

at::Tensor XLANativeFunctions::div(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("div");
  Operands o = Promote(self, other, FloatType(ResultType(self, other)), "div");
  return AtenFromIr(ir::Binary(ir::op::kDivide, o.a, o.b), o.device);
}

at::Tensor XLANativeFunctions::div(const at::Tensor& self, const at::Tensor& other,
                                   std::optional<std::string_view> rounding_mode) {
  if (!rounding_mode.has_value()) return div(self, other);
  XLA_COUNT("div");
  ElementType type = ResultType(self, other);
  Operands o = Promote(self, other, type, "div");
  Value q = ir::Binary(ir::op::kDivide, o.a, o.b);
  if (*rounding_mode == "floor") {
    if (runtime::IsFloating(type)) {
      q = ir::Unary(ir::op::kFloor, q);
    } else {
      // Integer division truncates; floor differs when the signs differ and it is inexact.
      Value rem = ir::Binary(ir::op::kRemainder, o.a, o.b);
      Value zero = ScalarLike(0, o.a);
      Value inexact = ir::Compare(CompareDirection::kNe, rem, zero);
      Value signs_differ = ir::Compare(CompareDirection::kNe, ir::Compare(CompareDirection::kLt, o.a, zero),
                                       ir::Compare(CompareDirection::kLt, o.b, zero));
      Value adjust = ir::Binary(ir::op::kAnd, inexact, signs_differ);
      q = ir::Select(adjust, ir::Binary(ir::op::kSubtract, q, ScalarLike(1, q)), q);
    }
  } else {
    TORCH_CHECK(*rounding_mode == "trunc", "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
                *rounding_mode, "'");
    if (runtime::IsFloating(type)) {
      Value neg = ir::Compare(CompareDirection::kLt, q, ScalarLike(0, q));
      q = ir::Select(neg, ir::Unary(ir::op::kCeil, q), ir::Unary(ir::op::kFloor, q));
    }
  }
  return AtenFromIr(q, o.device);
}

at::Tensor XLANativeFunctions::maximum(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("maximum");
  Operands o = Promote(self, other, ResultType(self, other), "maximum");
  return AtenFromIr(NanPropagating(ir::op::kMaximum, o.a, o.b), o.device);
}

at::Tensor XLANativeFunctions::minimum(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("minimum");
  Operands o = Promote(self, other, ResultType(self, other), "minimum");
  return AtenFromIr(NanPropagating(ir::op::kMinimum, o.a, o.b), o.device);
}

at::Tensor XLANativeFunctions::pow(const at::Tensor& self, const at::Scalar& exponent) {
  XLA_COUNT("pow");
  Operands o = PromoteScalar(self, exponent, ResultType(self, exponent), "pow");
  if (!exponent.isComplex() && exponent.toDouble() == 2.0)
    return AtenFromIr(ir::Binary(ir::op::kMultiply, o.a, o.a), o.device);
  return AtenFromIr(ir::Binary(ir::op::kPower, o.a, o.b), o.device);
}

at::Tensor XLANativeFunctions::pow(const at::Tensor& self, const at::Tensor& exponent) {
  XLA_COUNT("pow");
  return Binary(ir::op::kPower, self, exponent, "pow");
}

at::Tensor XLANativeFunctions::neg(const at::Tensor& self) {
  XLA_COUNT("neg");
  TORCH_CHECK(self.scalar_type() != at::kBool,
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
              "use the `~` or `logical_not()` operator instead.");
  return SameTypeUnary(ir::op::kNegate, self, "neg");
}

at::Tensor XLANativeFunctions::abs(const at::Tensor& self) {
  XLA_COUNT("abs");
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

at::Tensor XLANativeFunctions::relu(const at::Tensor& self) {
  XLA_COUNT("relu");
  TORCH_CHECK(self.scalar_type() != at::kBool, "relu: Boolean inputs not supported");
  XlaTensorPtr x = GetXlaTensor(self, "relu");
  Value v = x->GetIrValue();
  return AtenFromIr(NanPropagating(ir::op::kMaximum, v, ScalarLike(0, v)), x->device());
}

at::Tensor XLANativeFunctions::threshold_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                  const at::Scalar& threshold) {
  XLA_COUNT("threshold_backward");
  ElementType type = ElementTypeOf(grad_output.scalar_type());
  Operands o = Promote(grad_output, self, type, "threshold_backward");
  Value at_or_below = ir::Compare(CompareDirection::kLe, o.b, ir::Broadcast(IrScalar(threshold, type), o.b.shape().dims));
  return AtenFromIr(ir::Select(at_or_below, ScalarLike(0, o.a), o.a), o.device);
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

at::Tensor XLANativeFunctions::clamp(const at::Tensor& self, const std::optional<at::Scalar>& min,
                                     const std::optional<at::Scalar>& max) {
  XLA_COUNT("clamp");
  TORCH_CHECK(min.has_value() || max.has_value(), "torch.clamp: At least one of 'min' or 'max' must not be None");
  XlaTensorPtr x = GetXlaTensor(self, "clamp");
  ElementType type = x->shape().type;
  Value v = x->GetIrValue();
  if (min) v = NanPropagating(ir::op::kMaximum, v, ir::Broadcast(IrScalar(*min, type), v.shape().dims));
  if (max) v = NanPropagating(ir::op::kMinimum, v, ir::Broadcast(IrScalar(*max, type), v.shape().dims));
  return AtenFromIr(v, x->device());
}

at::Tensor XLANativeFunctions::where(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("where");
  TORCH_CHECK(condition.scalar_type() == at::kBool || condition.scalar_type() == at::kByte,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ", condition.scalar_type());
  int device = CommonDevice({&condition, &self, &other}, "where");
  ElementType type = ResultType(self, other);
  return Checked("where", [&] {
    Value c = Pred(IrOperand(condition, ElementTypeOf(condition.scalar_type()), "where"));
    Value a = IrOperand(self, type, "where");
    Value b = IrOperand(other, type, "where");
    std::vector<int64_t> dims = ir::BroadcastDims(ir::BroadcastDims(c.shape().dims, a.shape().dims, "where"),
                                                  b.shape().dims, "where");
    return AtenFromIr(ir::Select(ir::Broadcast(c, dims), ir::Broadcast(a, dims), ir::Broadcast(b, dims)), device);
  });
}

// ---- comparisons -----------------------------------------------------------
#define XLA_COMPARE(name, dir)                                                                     \
  at::Tensor XLANativeFunctions::name(const at::Tensor& self, const at::Tensor& other) {          \
    XLA_COUNT(#name);                                                                              \
    return Compare(CompareDirection::dir, self, other, #name);                                     \
  }                                                                                                \
  at::Tensor XLANativeFunctions::name(const at::Tensor& self, const at::Scalar& other) {          \
    XLA_COUNT(#name);                                                                              \
    return Compare(CompareDirection::dir, self, other, #name);                                     \
  }
XLA_COMPARE(eq, kEq)
XLA_COMPARE(ne, kNe)
XLA_COMPARE(lt, kLt)
XLA_COMPARE(le, kLe)
XLA_COMPARE(gt, kGt)
XLA_COMPARE(ge, kGe)
#undef XLA_COMPARE

// ---- logical ---------------------------------------------------------------
at::Tensor XLANativeFunctions::logical_not(const at::Tensor& self) {
  XLA_COUNT("logical_not");
  XlaTensorPtr x = GetXlaTensor(self, "logical_not");
  return AtenFromIr(ir::Unary(ir::op::kNot, Pred(x->GetIrValue())), x->device());
}

#define XLA_LOGICAL(name, kind)                                                                    \
  at::Tensor XLANativeFunctions::name(const at::Tensor& self, const at::Tensor& other) {          \
    XLA_COUNT(#name);                                                                              \
    int device = CommonDevice({&self, &other}, #name);                                             \
    return Checked(#name, [&] {                                                                    \
      Value a = Pred(IrOperand(self, ElementTypeOf(self.scalar_type()), #name));                  \
      Value b = Pred(IrOperand(other, ElementTypeOf(other.scalar_type()), #name));                \
      std::vector<int64_t> dims = ir::BroadcastDims(a.shape().dims, b.shape().dims, #name);        \
      return AtenFromIr(ir::Binary(ir::op::kind, ir::Broadcast(a, dims), ir::Broadcast(b, dims)), device); \
    });                                                                                            \
  }
XLA_LOGICAL(logical_and, kAnd)
XLA_LOGICAL(logical_or, kOr)
XLA_LOGICAL(logical_xor, kXor)
#undef XLA_LOGICAL

at::Tensor XLANativeFunctions::bitwise_not(const at::Tensor& self) {
  XLA_COUNT("bitwise_not");
  TORCH_CHECK(!runtime::IsFloating(ElementTypeOf(self.scalar_type())),
              "bitwise_not is only supported for integer and boolean tensors, got ", DescribeTensor(self));
  return SameTypeUnary(ir::op::kNot, self, "bitwise_not");
}

}  // namespace torch_xla
