// Element-wise kernels: arithmetic, comparisons, logical ops, activations and their
// backward formulas. PyTorch's type promotion (at::result_type) picks the compute type;
// operands are broadcast numpy-style.
#include <ATen/ATen.h>
#include <ATen/native/TypeProperties.h>

#include <cmath>
#include <limits>
#include <optional>

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
  std::vector<Value> v = BroadcastOperands({&self, &other}, type, op);
  return Operands{v[0], v[1], device};
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
// maximum/minimum may return the other operand). `kind`: kMaximum or kMinimum.
Value NanPropagating(ir::OpKind kind, const Value& a, const Value& b) {
  if (!runtime::IsFloating(a.shape().type)) return ir::Binary(kind, a, b);
  return ir::Binary(kind == ir::op::kMaximum ? ir::op::kNanMaximum : ir::op::kNanMinimum, a, b);
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


Value Pred(const Value& v) {
  if (v.shape().type == ElementType::kPred) return v;
  return ir::Compare(CompareDirection::kNe, v, ScalarLike(0, v));
}


Value And(const Value& a, const Value& b) { return ir::Binary(ir::op::kAnd, a, b); }
Value Or(const Value& a, const Value& b) { return ir::Binary(ir::op::kOr, a, b); }

// floor(a / b) for floating operands, computed like PyTorch's div_floor_floating so
// that quotients close to an integer round the same way.
Value FloorDivFloat(const Value& a, const Value& b) {
  Value zero = ScalarLike(0, a);
  Value mod = ir::Binary(ir::op::kRemainder, a, b);
  Value div = Div(Sub(a, mod), b);
  Value adjust = And(Cmp(CompareDirection::kNe, mod, zero),
                     Cmp(CompareDirection::kNe, Cmp(CompareDirection::kLt, b, zero), Cmp(CompareDirection::kLt, mod, zero)));
  div = ir::Select(adjust, Sub(div, ScalarLike(1, div)), div);
  Value fl = ir::Unary(ir::op::kFloor, div);
  fl = ir::Select(Cmp(CompareDirection::kGt, Sub(div, fl), ScalarLike(0.5, div)), Add(fl, ScalarLike(1, fl)), fl);
  Value plain = Div(a, b);
  // b == 0 gives inf/nan like true division; a zero quotient keeps the sign of a / b.
  Value result = ir::Select(Cmp(CompareDirection::kEq, div, zero), ir::Binary(ir::op::kMultiply, zero, plain), fl);
  return ir::Select(Cmp(CompareDirection::kEq, b, zero), plain, result);
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

// rsub: other - alpha * self (sub with the operands swapped).
at::Tensor XLANativeFunctions::rsub(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  XLA_COUNT("rsub");
  TORCH_CHECK(self.scalar_type() != at::kBool || other.scalar_type() != at::kBool,
              "Subtraction, the `-` operator, with two bool tensors is not supported.");
  return AddLike(ir::op::kSubtract, other, self, alpha, "rsub");
}

at::Tensor XLANativeFunctions::rsub(const at::Tensor& self, const at::Scalar& other, const at::Scalar& alpha) {
  XLA_COUNT("rsub");
  // A Python number takes part in type promotion as a wrapped 0-dim CPU tensor, as in eager.
  at::Tensor wrapped = c10::scalar_to_tensor(other);
  wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
  TORCH_CHECK(self.scalar_type() != at::kBool || wrapped.scalar_type() != at::kBool,
              "Subtraction, the `-` operator, with two bool tensors is not supported.");
  return AddLike(ir::op::kSubtract, wrapped, self, alpha, "rsub");
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
      q = FloorDivFloat(o.a, o.b);
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
  at::native::ResultTypeState state{};
  state = at::native::update_result_type_state(self, state);
  if (min) state = at::native::update_result_type_state(*min, state);
  if (max) state = at::native::update_result_type_state(*max, state);
  ElementType type = ElementTypeOf(at::native::result_type(state));
  Value v = ir::Convert(x->GetIrValue(), type);
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

// ---- more math, activations, optimizer helpers --------------------------------
namespace {

Value Bcast(const at::Scalar& s, const Value& like) {
  return ir::Broadcast(IrScalar(s, like.shape().type), like.shape().dims);
}
Value BcastD(double v, const Value& like) { return Bcast(at::Scalar(v), like); }

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

bool IsFloatType(ElementType t) { return runtime::IsFloating(t); }

void CheckFloating(const at::Tensor& t, const char* op) {
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), op, ": expected a floating-point tensor, got ", DescribeTensor(t));
}
void CheckNotBool(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.scalar_type() != at::kBool, op, ": boolean tensors are not supported, got ", DescribeTensor(t));
}

// The operand of a float-valued unary op, converted to its float compute type.
struct FloatIn {
  Value v;
  int device;
};
FloatIn GetFloat(const at::Tensor& self, const char* op) {
  XlaTensorPtr x = GetXlaTensor(self, op);
  return FloatIn{ir::Convert(x->GetIrValue(), FloatType(x->shape().type)), x->device()};
}

// An activation computed in self's (floating) type.
struct ActIn {
  Value x;
  int device;
};
ActIn GetAct(const at::Tensor& self, const char* op) {
  CheckFloating(self, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  return ActIn{x->GetIrValue(), x->device()};
}

// grad_output and self of an activation's backward, in grad_output's type, same shape.
struct BackIn {
  Value g, x;
  int device;
};
BackIn GetBack(const at::Tensor& grad_output, const at::Tensor& self, const char* op) {
  TORCH_CHECK(grad_output.sizes() == self.sizes(), op, ": grad_output ", DescribeTensor(grad_output),
              " and self ", DescribeTensor(self), " must have the same shape");
  CheckFloating(grad_output, op);
  Operands o = Promote(grad_output, self, ElementTypeOf(grad_output.scalar_type()), op);
  return BackIn{o.a, o.b, o.device};
}

Value Zeros(const Value& like) { return ScalarLike(0, like); }
Value Sigmoid(const Value& x) { return ir::Unary(ir::op::kLogistic, x); }
Value Exp(const Value& x) { return ir::Unary(ir::op::kExp, x); }
Value Log1p(const Value& x) { return ir::Unary(ir::op::kLog1p, x); }
Value Trunc(const Value& x) {
  return ir::Select(Cmp(CompareDirection::kLt, x, Zeros(x)), ir::Unary(ir::op::kCeil, x), ir::Unary(ir::op::kFloor, x));
}
Value IsNan(const Value& x) { return Cmp(CompareDirection::kNe, x, x); }

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

at::Tensor XLANativeFunctions::remainder(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("remainder");
  ElementType type = ResultType(self, other);
  TORCH_CHECK(type != ElementType::kPred, "remainder: boolean tensors are not supported, got ", DescribeTensor(self),
              " and ", DescribeTensor(other));
  Operands o = Promote(self, other, type, "remainder");
  Value r = ir::Binary(ir::op::kRemainder, o.a, o.b);
  if (!runtime::IsUnsigned(type)) {
    // Python's modulo: the result takes the divisor's sign.
    Value zero = Zeros(r);
    Value fix = And(Cmp(CompareDirection::kNe, r, zero),
                    Cmp(CompareDirection::kNe, Cmp(CompareDirection::kLt, r, zero), Cmp(CompareDirection::kLt, o.b, zero)));
    r = ir::Select(fix, Add(r, o.b), r);
  }
  return AtenFromIr(r, o.device);
}

at::Tensor XLANativeFunctions::fmod(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("fmod");
  ElementType type = ResultType(self, other);
  TORCH_CHECK(type != ElementType::kPred, "fmod: boolean tensors are not supported, got ", DescribeTensor(self),
              " and ", DescribeTensor(other));
  return Binary(ir::op::kRemainder, self, other, "fmod");
}

at::Tensor XLANativeFunctions::atan2(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("atan2");
  Operands o = Promote(self, other, FloatType(ResultType(self, other)), "atan2");
  return AtenFromIr(ir::Binary(ir::op::kAtan2, o.a, o.b), o.device);
}

at::Tensor XLANativeFunctions::hypot(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("hypot");
  ElementType type = ResultType(self, other);
  TORCH_CHECK(IsFloatType(type), "hypot: expected floating-point tensors, got ", DescribeTensor(self), " and ",
              DescribeTensor(other));
  Operands o = Promote(self, other, type, "hypot");
  return AtenFromIr(ir::Unary(ir::op::kSqrt, Add(Mul(o.a, o.a), Mul(o.b, o.b))), o.device);
}

at::Tensor XLANativeFunctions::logaddexp(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("logaddexp");
  ElementType type = ResultType(self, other);
  TORCH_CHECK(IsFloatType(type), "logaddexp: expected floating-point tensors, got ", DescribeTensor(self), " and ",
              DescribeTensor(other));
  Operands o = Promote(self, other, type, "logaddexp");
  Value m = ir::Binary(ir::op::kMaximum, o.a, o.b);
  Value r = Add(m, Log1p(Exp(ir::Unary(ir::op::kNegate, ir::Unary(ir::op::kAbs, Sub(o.a, o.b))))));
  // Equal infinities: a - b is nan, the result is the infinity itself.
  Value same_inf = And(Cmp(CompareDirection::kEq, o.a, o.b),
                       Cmp(CompareDirection::kEq, ir::Unary(ir::op::kAbs, o.a), BcastD(INFINITY, o.a)));
  return AtenFromIr(ir::Select(same_inf, o.a, r), o.device);
}

at::Tensor XLANativeFunctions::heaviside(const at::Tensor& self, const at::Tensor& values) {
  XLA_COUNT("heaviside");
  TORCH_CHECK(self.scalar_type() == values.scalar_type(),
              "heaviside is not yet implemented for tensors with different dtypes");
  TORCH_CHECK(!at::isComplexType(self.scalar_type()), "heaviside is not yet implemented for complex tensors.");
  Operands o = Promote(self, values, ElementTypeOf(self.scalar_type()), "heaviside");
  Value zero = Zeros(o.a);
  Value step = ir::Convert(Cmp(CompareDirection::kGt, o.a, zero), o.a.shape().type);
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kEq, o.a, zero), o.b, step), o.device);
}

at::Tensor XLANativeFunctions::floor_divide(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("floor_divide");
  TORCH_CHECK(ResultType(self, other) != ElementType::kPred, "floor_divide: boolean tensors are not supported");
  return div(self, other, std::string_view("floor"));
}

// ---- bitwise -------------------------------------------------------------------
namespace {
at::Tensor Bitwise(ir::OpKind kind, const at::Tensor& self, const at::Tensor& other, const char* op, bool allow_bool) {
  ElementType type = ResultType(self, other);
  TORCH_CHECK(!IsFloatType(type) && !runtime::IsComplex(type) && (allow_bool || type != ElementType::kPred), op,
              ": expected integer", allow_bool ? " or boolean" : "", " tensors, got ", DescribeTensor(self), " and ",
              DescribeTensor(other));
  return Binary(kind, self, other, op);
}
}  // namespace

at::Tensor XLANativeFunctions::bitwise_and(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("bitwise_and");
  return Bitwise(ir::op::kAnd, self, other, "bitwise_and", true);
}
at::Tensor XLANativeFunctions::bitwise_or(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("bitwise_or");
  return Bitwise(ir::op::kOr, self, other, "bitwise_or", true);
}
at::Tensor XLANativeFunctions::bitwise_xor(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("bitwise_xor");
  return Bitwise(ir::op::kXor, self, other, "bitwise_xor", true);
}
at::Tensor XLANativeFunctions::bitwise_left_shift(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("bitwise_left_shift");
  return Bitwise(ir::op::kShiftLeft, self, other, "bitwise_left_shift", false);
}
at::Tensor XLANativeFunctions::bitwise_right_shift(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("bitwise_right_shift");
  bool is_unsigned = runtime::IsUnsigned(ResultType(self, other));
  return Bitwise(is_unsigned ? ir::op::kShiftRightLogical : ir::op::kShiftRightArithmetic, self, other,
                 "bitwise_right_shift", false);
}

namespace {
at::Tensor WrappedScalar(const at::Scalar& s) {
  at::Tensor t = at::scalar_tensor(s, at::device(at::kCPU).dtype(s.type()));
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}
}  // namespace

at::Tensor XLANativeFunctions::__lshift__(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("bitwise_left_shift");
  return Bitwise(ir::op::kShiftLeft, self, other, "bitwise_left_shift", false);
}
at::Tensor XLANativeFunctions::__lshift__(const at::Tensor& self, const at::Scalar& other) {
  return __lshift__(self, WrappedScalar(other));
}
at::Tensor XLANativeFunctions::__rshift__(const at::Tensor& self, const at::Tensor& other) {
  return bitwise_right_shift(self, other);
}
at::Tensor XLANativeFunctions::__rshift__(const at::Tensor& self, const at::Scalar& other) {
  return __rshift__(self, WrappedScalar(other));
}

// ---- predicates ------------------------------------------------------------------
at::Tensor XLANativeFunctions::isnan(const at::Tensor& self) {
  XLA_COUNT("isnan");
  XlaTensorPtr x = GetXlaTensor(self, "isnan");
  Value v = x->GetIrValue();
  if (!IsFloatType(v.shape().type))
    return AtenFromIr(ir::Constant(0, ir::Shape(ElementType::kPred, v.shape().dims)), x->device());
  return AtenFromIr(IsNan(v), x->device());
}

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

// ---- clamps ----------------------------------------------------------------------
at::Tensor XLANativeFunctions::clamp(const at::Tensor& self, const std::optional<at::Tensor>& min,
                                     const std::optional<at::Tensor>& max) {
  XLA_COUNT("clamp");
  bool has_min = min.has_value() && min->defined(), has_max = max.has_value() && max->defined();
  TORCH_CHECK(has_min || has_max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  TORCH_CHECK(self.scalar_type() != at::kBool, "clamp is not supported for boolean tensors");
  at::native::ResultTypeState state{};
  state = at::native::update_result_type_state(self, state);
  if (has_min) state = at::native::update_result_type_state(*min, state);
  if (has_max) state = at::native::update_result_type_state(*max, state);
  ElementType type = ElementTypeOf(at::native::result_type(state));
  int device = CommonDevice({&self, has_min ? &*min : &self, has_max ? &*max : &self}, "clamp");
  return Checked("clamp", [&] {
    Value v = IrOperand(self, type, "clamp");
    Value lo = has_min ? IrOperand(*min, type, "clamp") : Value();
    Value hi = has_max ? IrOperand(*max, type, "clamp") : Value();
    std::vector<int64_t> dims = v.shape().dims;
    if (lo) dims = ir::BroadcastDims(dims, lo.shape().dims, "clamp");
    if (hi) dims = ir::BroadcastDims(dims, hi.shape().dims, "clamp");
    v = ir::Broadcast(v, dims);
    if (lo) v = NanPropagating(ir::op::kMaximum, v, ir::Broadcast(lo, dims));
    if (hi) v = NanPropagating(ir::op::kMinimum, v, ir::Broadcast(hi, dims));
    return AtenFromIr(v, device);
  });
}

at::Tensor XLANativeFunctions::clamp_min(const at::Tensor& self, const at::Scalar& min) {
  XLA_COUNT("clamp_min");
  return clamp(self, std::optional<at::Scalar>(min), std::optional<at::Scalar>());
}

at::Tensor XLANativeFunctions::clamp_max(const at::Tensor& self, const at::Scalar& max) {
  XLA_COUNT("clamp_max");
  return clamp(self, std::optional<at::Scalar>(), std::optional<at::Scalar>(max));
}

at::Tensor XLANativeFunctions::clamp_min(const at::Tensor& self, const at::Tensor& min) {
  XLA_COUNT("clamp_min");
  return clamp(self, std::optional<at::Tensor>(min), std::optional<at::Tensor>());
}

at::Tensor XLANativeFunctions::clamp_max(const at::Tensor& self, const at::Tensor& max) {
  XLA_COUNT("clamp_max");
  return clamp(self, std::optional<at::Tensor>(), std::optional<at::Tensor>(max));
}

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

// ---- activations and their backward formulas --------------------------------------
at::Tensor XLANativeFunctions::hardtanh(const at::Tensor& self, const at::Scalar& min_val, const at::Scalar& max_val) {
  XLA_COUNT("hardtanh");
  CheckNotBool(self, "hardtanh");
  TORCH_CHECK(min_val.toDouble() <= max_val.toDouble(), "hardtanh: min_val (", min_val, ") must be <= max_val (", max_val, ")");
  XlaTensorPtr x = GetXlaTensor(self, "hardtanh");
  Value v = x->GetIrValue();
  v = NanPropagating(ir::op::kMaximum, v, Bcast(min_val, v));
  v = NanPropagating(ir::op::kMinimum, v, Bcast(max_val, v));
  return AtenFromIr(v, x->device());
}

at::Tensor XLANativeFunctions::hardtanh_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                 const at::Scalar& min_val, const at::Scalar& max_val) {
  XLA_COUNT("hardtanh_backward");
  BackIn b = GetBack(grad_output, self, "hardtanh_backward");
  Value outside = Or(Cmp(CompareDirection::kLe, b.x, Bcast(min_val, b.x)), Cmp(CompareDirection::kGe, b.x, Bcast(max_val, b.x)));
  return AtenFromIr(ir::Select(outside, Zeros(b.g), b.g), b.device);
}

at::Tensor XLANativeFunctions::leaky_relu(const at::Tensor& self, const at::Scalar& negative_slope) {
  XLA_COUNT("leaky_relu");
  ActIn in = GetAct(self, "leaky_relu");
  Value pos = Cmp(CompareDirection::kGt, in.x, Zeros(in.x));
  return AtenFromIr(ir::Select(pos, in.x, Mul(in.x, Bcast(negative_slope, in.x))), in.device);
}

at::Tensor XLANativeFunctions::leaky_relu_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                   const at::Scalar& negative_slope, bool self_is_result) {
  XLA_COUNT("leaky_relu_backward");
  TORCH_CHECK(!self_is_result || negative_slope.toDouble() >= 0.0,
              "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
              "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
              "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
              "in-place leakRelu backward calculation with negative slope");
  BackIn b = GetBack(grad_output, self, "leaky_relu_backward");
  Value pos = Cmp(CompareDirection::kGt, b.x, Zeros(b.x));
  return AtenFromIr(ir::Select(pos, b.g, Mul(b.g, Bcast(negative_slope, b.g))), b.device);
}

at::Tensor XLANativeFunctions::elu(const at::Tensor& self, const at::Scalar& alpha, const at::Scalar& scale,
                                   const at::Scalar& input_scale) {
  XLA_COUNT("elu");
  ActIn in = GetAct(self, "elu");
  Value x = in.x;
  Value neg = Mul(ir::Unary(ir::op::kExpm1, Mul(x, Bcast(input_scale, x))),
                  BcastD(alpha.toDouble() * scale.toDouble(), x));
  Value pos = Mul(x, Bcast(scale, x));
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kLe, x, Zeros(x)), neg, pos), in.device);
}

at::Tensor XLANativeFunctions::elu_backward(const at::Tensor& grad_output, const at::Scalar& alpha, const at::Scalar& scale,
                                            const at::Scalar& input_scale, bool is_result,
                                            const at::Tensor& self_or_result) {
  XLA_COUNT("elu_backward");
  TORCH_CHECK(!is_result || alpha.toDouble() >= 0.0,
              "In-place elu backward calculation is triggered with a negative slope which is not supported. This is "
              "caused by calling in-place forward function with a negative slope, please call out-of-place version "
              "instead.");
  BackIn b = GetBack(grad_output, self_or_result, "elu_backward");
  double negcoef = alpha.toDouble() * scale.toDouble();
  Value x = b.x, g = b.g;
  Value neg_grad = is_result ? Mul(Mul(g, Bcast(input_scale, g)), Add(x, BcastD(negcoef, x)))
                             : Mul(Mul(g, BcastD(input_scale.toDouble() * negcoef, g)),
                                   Exp(Mul(x, Bcast(input_scale, x))));
  Value pos_grad = Mul(g, Bcast(scale, g));
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kLe, x, Zeros(x)), neg_grad, pos_grad), b.device);
}

at::Tensor XLANativeFunctions::silu(const at::Tensor& self) {
  XLA_COUNT("silu");
  ActIn in = GetAct(self, "silu");
  return AtenFromIr(Mul(in.x, Sigmoid(in.x)), in.device);
}

at::Tensor XLANativeFunctions::silu_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  XLA_COUNT("silu_backward");
  BackIn b = GetBack(grad_output, self, "silu_backward");
  Value s = Sigmoid(b.x);
  Value one = ScalarLike(1, s);
  return AtenFromIr(Mul(Mul(b.g, s), Add(one, Mul(b.x, Sub(one, s)))), b.device);
}

at::Tensor XLANativeFunctions::softplus(const at::Tensor& self, const at::Scalar& beta, const at::Scalar& threshold) {
  XLA_COUNT("softplus");
  ActIn in = GetAct(self, "softplus");
  Value x = in.x;
  Value bx = Mul(x, Bcast(beta, x));
  Value soft = Div(Log1p(Exp(bx)), Bcast(beta, x));
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kGt, bx, Bcast(threshold, x)), x, soft), in.device);
}

at::Tensor XLANativeFunctions::softplus_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                 const at::Scalar& beta, const at::Scalar& threshold) {
  XLA_COUNT("softplus_backward");
  BackIn b = GetBack(grad_output, self, "softplus_backward");
  Value bx = Mul(b.x, Bcast(beta, b.x));
  Value z = Exp(bx);
  Value soft = Div(Mul(b.g, z), Add(z, ScalarLike(1, z)));
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kGt, bx, Bcast(threshold, b.x)), b.g, soft), b.device);
}

at::Tensor XLANativeFunctions::mish(const at::Tensor& self) {
  XLA_COUNT("mish");
  ActIn in = GetAct(self, "mish");
  return AtenFromIr(Mul(in.x, ir::Unary(ir::op::kTanh, Log1p(Exp(in.x)))), in.device);
}

at::Tensor XLANativeFunctions::hardsigmoid(const at::Tensor& self) {
  XLA_COUNT("hardsigmoid");
  ActIn in = GetAct(self, "hardsigmoid");
  Value x = in.x;
  Value r = ir::Binary(ir::op::kMinimum, ir::Binary(ir::op::kMaximum, Add(x, ScalarLike(3, x)), Zeros(x)), ScalarLike(6, x));
  return AtenFromIr(Div(r, ScalarLike(6, r)), in.device);
}

at::Tensor XLANativeFunctions::hardsigmoid_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  XLA_COUNT("hardsigmoid_backward");
  BackIn b = GetBack(grad_output, self, "hardsigmoid_backward");
  Value inside = And(Cmp(CompareDirection::kGt, b.x, ScalarLike(-3, b.x)), Cmp(CompareDirection::kLt, b.x, ScalarLike(3, b.x)));
  return AtenFromIr(ir::Select(inside, Div(b.g, ScalarLike(6, b.g)), Zeros(b.g)), b.device);
}

at::Tensor XLANativeFunctions::hardswish(const at::Tensor& self) {
  XLA_COUNT("hardswish");
  ActIn in = GetAct(self, "hardswish");
  Value x = in.x;
  Value r = ir::Binary(ir::op::kMinimum, ir::Binary(ir::op::kMaximum, Add(x, ScalarLike(3, x)), Zeros(x)), ScalarLike(6, x));
  return AtenFromIr(Div(Mul(x, r), ScalarLike(6, r)), in.device);
}

at::Tensor XLANativeFunctions::hardswish_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  XLA_COUNT("hardswish_backward");
  BackIn b = GetBack(grad_output, self, "hardswish_backward");
  Value x = b.x, g = b.g;
  Value mid = Mul(g, Add(Div(x, ScalarLike(3, x)), ScalarLike(0.5, x)));
  Value r = ir::Select(Cmp(CompareDirection::kLe, x, ScalarLike(3, x)), mid, g);
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kLt, x, ScalarLike(-3, x)), Zeros(g), r), b.device);
}

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

// ---- more special functions, shrinkage activations, gated units --------------------
namespace {
const ir::OpKind kErfc = ir::OpKind::Get("chlo.erfc");
const ir::OpKind kLgamma = ir::OpKind::Get("chlo.lgamma");
const ir::OpKind kDigamma = ir::OpKind::Get("chlo.digamma");
const ir::OpKind kBitcast = ir::OpKind::Get("stablehlo.bitcast_convert");

// True where the sign bit is set (also for -0.0 and negative NaNs).
Value SignBit(const Value& v) {
  ElementType t = v.shape().type;
  if (t == ElementType::kPred || runtime::IsUnsigned(t))
    return ir::Constant(0, ir::Shape(ElementType::kPred, v.shape().dims));
  if (!IsFloatType(t)) return Cmp(CompareDirection::kLt, v, Zeros(v));
  ElementType as_int = t == ElementType::kF64 ? ElementType::kS64
                       : (t == ElementType::kBF16 || t == ElementType::kF16) ? ElementType::kS16
                                                                               : ElementType::kS32;
  Value bits = Value(ir::MakeNode(kBitcast, std::vector<Value>{v}, ir::Shape(as_int, v.shape().dims)));
  return Cmp(CompareDirection::kLt, bits, Zeros(bits));
}
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

at::Tensor XLANativeFunctions::copysign(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("copysign");
  Operands o = Promote(self, other, FloatType(ResultType(self, other)), "copysign");
  Value mag = ir::Unary(ir::op::kAbs, o.a);
  return AtenFromIr(ir::Select(SignBit(o.b), ir::Unary(ir::op::kNegate, mag), mag), o.device);
}

at::Tensor XLANativeFunctions::isposinf(const at::Tensor& self) {
  XLA_COUNT("isposinf");
  XlaTensorPtr x = GetXlaTensor(self, "isposinf");
  Value v = x->GetIrValue();
  if (!IsFloatType(v.shape().type))
    return AtenFromIr(ir::Constant(0, ir::Shape(ElementType::kPred, v.shape().dims)), x->device());
  return AtenFromIr(Cmp(CompareDirection::kEq, v, BcastD(INFINITY, v)), x->device());
}

at::Tensor XLANativeFunctions::isneginf(const at::Tensor& self) {
  XLA_COUNT("isneginf");
  XlaTensorPtr x = GetXlaTensor(self, "isneginf");
  Value v = x->GetIrValue();
  if (!IsFloatType(v.shape().type))
    return AtenFromIr(ir::Constant(0, ir::Shape(ElementType::kPred, v.shape().dims)), x->device());
  return AtenFromIr(Cmp(CompareDirection::kEq, v, BcastD(-INFINITY, v)), x->device());
}

namespace {
// fmax/fmin: NaN only where both operands are NaN.
at::Tensor NanIgnoring(ir::OpKind kind, const at::Tensor& self, const at::Tensor& other, const char* op) {
  ElementType type = ResultType(self, other);
  TORCH_CHECK(!runtime::IsComplex(type), op, " not implemented for complex tensors.");
  Operands o = Promote(self, other, type, op);
  Value r = ir::Binary(kind, o.a, o.b);
  if (IsFloatType(type)) r = ir::Select(IsNan(o.a), o.b, ir::Select(IsNan(o.b), o.a, r));
  return AtenFromIr(r, o.device);
}
}  // namespace

at::Tensor XLANativeFunctions::fmax(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("fmax");
  return NanIgnoring(ir::op::kMaximum, self, other, "fmax");
}

at::Tensor XLANativeFunctions::fmin(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("fmin");
  return NanIgnoring(ir::op::kMinimum, self, other, "fmin");
}

at::Tensor XLANativeFunctions::pow(const at::Scalar& self, const at::Tensor& exponent) {
  XLA_COUNT("pow");
  ElementType type = ResultType(exponent, self);
  XlaTensorPtr x = GetXlaTensor(exponent, "pow");
  Value e = ir::Convert(x->GetIrValue(), type);
  return AtenFromIr(ir::Binary(ir::op::kPower, Bcast(self, e), e), x->device());
}

at::Tensor XLANativeFunctions::xlogy(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("xlogy");
  Operands o = Promote(self, other, FloatType(ResultType(self, other)), "xlogy");
  Value r = Mul(o.a, ir::Unary(ir::op::kLog, o.b));
  r = ir::Select(Cmp(CompareDirection::kEq, o.a, Zeros(o.a)), Zeros(r), r);
  return AtenFromIr(ir::Select(IsNan(o.b), o.b, r), o.device);
}

at::Tensor XLANativeFunctions::threshold(const at::Tensor& self, const at::Scalar& threshold, const at::Scalar& value) {
  XLA_COUNT("threshold");
  CheckNotBool(self, "threshold");
  XlaTensorPtr x = GetXlaTensor(self, "threshold");
  Value v = x->GetIrValue();
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kLe, v, Bcast(threshold, v)), Bcast(value, v), v), x->device());
}

at::Tensor XLANativeFunctions::hardshrink(const at::Tensor& self, const at::Scalar& lambd) {
  XLA_COUNT("hardshrink");
  ActIn in = GetAct(self, "hardshrink");
  Value x = in.x;
  Value inside = And(Cmp(CompareDirection::kGe, x, Bcast(-lambd.toDouble(), x)), Cmp(CompareDirection::kLe, x, Bcast(lambd, x)));
  return AtenFromIr(ir::Select(inside, Zeros(x), x), in.device);
}

at::Tensor XLANativeFunctions::hardshrink_backward(const at::Tensor& grad_out, const at::Tensor& self,
                                                   const at::Scalar& lambd) {
  XLA_COUNT("hardshrink_backward");
  BackIn b = GetBack(grad_out, self, "hardshrink_backward");
  Value inside = And(Cmp(CompareDirection::kGe, b.x, Bcast(-lambd.toDouble(), b.x)), Cmp(CompareDirection::kLe, b.x, Bcast(lambd, b.x)));
  return AtenFromIr(ir::Select(inside, Zeros(b.g), b.g), b.device);
}

at::Tensor XLANativeFunctions::softshrink(const at::Tensor& self, const at::Scalar& lambd) {
  XLA_COUNT("softshrink");
  TORCH_CHECK(lambd.toDouble() >= 0, "softshrink: lambda must be greater or equal to 0, but found to be ", lambd.toDouble(), ".");
  ActIn in = GetAct(self, "softshrink");
  Value x = in.x, l = Bcast(lambd, in.x);
  Value r = ir::Select(Cmp(CompareDirection::kGt, x, l), Sub(x, l),
                       ir::Select(Cmp(CompareDirection::kLt, x, ir::Unary(ir::op::kNegate, l)), Add(x, l), Zeros(x)));
  return AtenFromIr(ir::Select(IsNan(x), x, r), in.device);
}

at::Tensor XLANativeFunctions::softshrink_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                   const at::Scalar& lambd) {
  XLA_COUNT("softshrink_backward");
  BackIn b = GetBack(grad_output, self, "softshrink_backward");
  Value inside = And(Cmp(CompareDirection::kGe, b.x, Bcast(-lambd.toDouble(), b.x)), Cmp(CompareDirection::kLe, b.x, Bcast(lambd, b.x)));
  return AtenFromIr(ir::Select(inside, Zeros(b.g), b.g), b.device);
}

namespace {
struct Halves {
  Value a, b;
  int64_t dim;
  int device;
};
Halves GluHalves(const at::Tensor& self, int64_t dim, const char* op) {
  TORCH_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  CheckFloating(self, op);
  int64_t d = WrapDim(dim, self.dim(), op);
  int64_t n = self.size(d);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  XlaTensorPtr x = GetXlaTensor(self, op);
  Value v = x->GetIrValue();
  std::vector<int64_t> lo(v.shape().rank(), 0), hi = v.shape().dims, st(v.shape().rank(), 1);
  hi[d] = n / 2;
  Value a = ir::Slice(v, lo, hi, st);
  lo[d] = n / 2;
  hi[d] = n;
  return Halves{a, ir::Slice(v, lo, hi, st), d, x->device()};
}
}  // namespace

at::Tensor XLANativeFunctions::glu(const at::Tensor& self, int64_t dim) {
  XLA_COUNT("glu");
  Halves h = GluHalves(self, dim, "glu");
  return AtenFromIr(Mul(h.a, Sigmoid(h.b)), h.device);
}

at::Tensor XLANativeFunctions::glu_backward(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim) {
  XLA_COUNT("glu_backward");
  Halves h = GluHalves(self, dim, "glu_backward");
  Value g = ir::Convert(GetXlaTensor(grad_output, "glu_backward")->GetIrValue(), h.a.shape().type);
  TORCH_CHECK(g.shape().dims == h.a.shape().dims, "glu_backward: grad_output ", DescribeTensor(grad_output),
              " does not match half of self ", DescribeTensor(self));
  Value s = Sigmoid(h.b);
  Value grad_a = Mul(g, s);
  Value grad_b = Mul(Mul(grad_a, h.a), Sub(ScalarLike(1, s), s));
  return AtenFromIr(ir::Concatenate({grad_a, grad_b}, h.dim), h.device);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::log_sigmoid_forward(const at::Tensor& self) {
  XLA_COUNT("log_sigmoid_forward");
  ActIn in = GetAct(self, "log_sigmoid");
  Value x = in.x;
  // min(x, 0) - log1p(exp(-|x|)), stable for large |x|.
  Value r = Sub(ir::Binary(ir::op::kMinimum, x, Zeros(x)),
                Log1p(Exp(ir::Unary(ir::op::kNegate, ir::Unary(ir::op::kAbs, x)))));
  // The buffer is unused by our backward (like CUDA's, it is empty).
  Value buffer = ir::Constant(0, ir::Shape(x.shape().type, {0}));
  return {AtenFromIr(ir::Select(IsNan(x), x, r), in.device), AtenFromIr(buffer, in.device)};
}

at::Tensor XLANativeFunctions::log_sigmoid_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                    const at::Tensor& buffer) {
  XLA_COUNT("log_sigmoid_backward");
  BackIn b = GetBack(grad_output, self, "log_sigmoid_backward");
  return AtenFromIr(Mul(b.g, Sigmoid(ir::Unary(ir::op::kNegate, b.x))), b.device);
}

}  // namespace torch_xla
