#pragma once
// Helpers shared by the element-wise kernels (ops/unary_ops.cpp, ops/binary_ops.cpp,
// ops/tensor_compare.cpp, ops/pointwise_ops.cpp, ops/activation.cpp): PyTorch's type
// promotion of the operands (at::result_type picks the compute type; operands are
// broadcast numpy-style) and short names for the IR ops of their formulas.
#include <ATen/core/Tensor.h>

#include "ops/kernel_util.h"

namespace torch_xla::elementwise_util {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;

// Two operands, promoted and broadcast, and their device.
struct Operands {
  Value a, b;
  int device;
};

// Both operands in `type`, broadcast to their common shape.
Operands Promote(const at::Tensor& self, const at::Tensor& other, ElementType type, const char* op);
// self in `type` and the scalar broadcast to its shape.
Operands PromoteScalar(const at::Tensor& self, const at::Scalar& other, ElementType type, const char* op);

// PyTorch's result type of a binary op (at::result_type).
ElementType ResultType(const at::Tensor& a, const at::Tensor& b);
ElementType ResultType(const at::Tensor& a, const at::Scalar& b);

// The type of a float-valued op: integers and bools compute in the default float type.
ElementType FloatType(ElementType t);

// max/min that return NaN when either operand is NaN (PyTorch's semantics; the backend's
// maximum/minimum may return the other operand). `kind`: kMaximum or kMinimum.
Value NanPropagating(ir::OpKind kind, const Value& a, const Value& b);

// The op `kind` on both operands in their result type.
at::Tensor Binary(ir::OpKind kind, const at::Tensor& self, const at::Tensor& other, const char* op);

// The comparison `dir` of both operands in their result type (a bool tensor).
at::Tensor Compare(CompareDirection dir, const at::Tensor& self, const at::Tensor& other, const char* op);
at::Tensor Compare(CompareDirection dir, const at::Tensor& self, const at::Scalar& other, const char* op);

// v != 0 as a predicate (v itself when it is one).
Value Pred(const Value& v);

inline Value And(const Value& a, const Value& b) { return ir::Binary(ir::op::kAnd, a, b); }
inline Value Or(const Value& a, const Value& b) { return ir::Binary(ir::op::kOr, a, b); }

// A scalar (double) broadcast to the shape and type of `like`.
inline Value Bcast(const at::Scalar& s, const Value& like) {
  return ir::Broadcast(IrScalar(s, like.shape().type), like.shape().dims);
}
inline Value BcastD(double v, const Value& like) { return Bcast(at::Scalar(v), like); }

inline bool IsFloatType(ElementType t) { return runtime::IsFloating(t); }

// Raises "<op>: expected a floating-point tensor, got <t>" unless t is floating.
void CheckFloating(const at::Tensor& t, const char* op);

// grad_output and self of an activation's backward, in grad_output's type, same shape.
struct BackIn {
  Value g, x;
  int device;
};
BackIn GetBack(const at::Tensor& grad_output, const at::Tensor& self, const char* op);

inline Value Zeros(const Value& like) { return ScalarLike(0, like); }
inline Value Exp(const Value& x) { return ir::Unary(ir::op::kExp, x); }
inline Value Log1p(const Value& x) { return ir::Unary(ir::op::kLog1p, x); }

// True where the sign bit is set (also for -0.0 and negative NaNs).
Value SignBit(const Value& v);

}  // namespace torch_xla::elementwise_util
