// Binary element-wise kernels: arithmetic (add, sub, mul, div, pow, remainder, fmod,
// floor_divide, atan2, hypot, logaddexp, xlogy, heaviside), maximum / minimum and
// fmax / fmin, comparisons, logical and bitwise ops, shifts and copysign. PyTorch's type
// promotion (at::result_type) picks the compute type; operands are broadcast numpy-style
// (ops/elementwise_util.h).
#include <ATen/ATen.h>

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

// ---- more arithmetic -----------------------------------------------------------

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

// ---- copysign, fmax, fmin, pow, xlogy ------------------------------------------

at::Tensor XLANativeFunctions::copysign(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("copysign");
  Operands o = Promote(self, other, FloatType(ResultType(self, other)), "copysign");
  Value mag = ir::Unary(ir::op::kAbs, o.a);
  return AtenFromIr(ir::Select(SignBit(o.b), ir::Unary(ir::op::kNegate, mag), mag), o.device);
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

}  // namespace torch_xla
