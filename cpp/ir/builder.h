#pragma once
// Constructors of IR values with their shape rules. Every function checks its inputs
// and throws std::invalid_argument naming the operation and the shapes, so bad input
// never reaches the XLA compiler. Operand types/shapes must already match where a
// function says so; Broadcast() and Convert() make them match (and are free when
// nothing changes).
#include <string>
#include <vector>

#include "ir/node.h"

namespace torch_xla::ir {

namespace op {
// StableHLO element-wise operations.
extern const OpKind kAdd, kSubtract, kMultiply, kDivide, kMaximum, kMinimum, kPower, kRemainder, kAnd,
    kOr, kXor, kNot, kNegate, kAbs, kExp, kExpm1, kLog, kLog1p, kSqrt, kRsqrt, kTanh, kLogistic, kSin,
    kCos, kTan, kFloor, kCeil, kSign, kRoundEven, kAtan2, kSelect, kClamp, kIsFinite, kConvert, kErf,
    kShiftLeft, kShiftRightArithmetic, kShiftRightLogical;
// max/min that return NaN when either operand is NaN (PyTorch's semantics; StableHLO's
// maximum/minimum may return the other operand). One node at trace time; lowered to
// maximum/minimum plus NaN selects (lowering/rules_elementwise.cpp). Floating types only.
extern const OpKind kNanMaximum, kNanMinimum;
}  // namespace op

enum class CompareDirection : int64_t { kEq, kNe, kGe, kGt, kLe, kLt };
enum class ReduceKind : int64_t { kSum, kProd, kMax, kMin, kAnd, kOr };

// numpy-style broadcast of two shapes; throws naming `op_name` on mismatch.
std::vector<int64_t> BroadcastDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                   const char* op_name);

// A splat of `value`, which the node holds as its one floating attribute (attrs.floats).
Value Constant(double value, Shape shape);
// Whether `v` is Constant(0, ...).
bool IsZeroConstant(const Value& v);
Value ScalarParameter(double value, ElementType type);
Value Convert(const Value& v, ElementType type);
// Broadcasts trailing-aligned to `dims` (numpy rules).
Value Broadcast(const Value& v, const std::vector<int64_t>& dims);
Value BroadcastInDim(const Value& v, const std::vector<int64_t>& dims, const std::vector<int64_t>& broadcast_dims);
Value Reshape(const Value& v, std::vector<int64_t> dims);
Value Transpose(const Value& v, const std::vector<int64_t>& permutation);
Value Slice(const Value& v, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& strides);
Value Concatenate(const std::vector<Value>& values, int64_t dim);
Value Pad(const Value& v, const Value& pad_value, const std::vector<int64_t>& low,
          const std::vector<int64_t>& high, const std::vector<int64_t>& interior);
Value Reverse(const Value& v, const std::vector<int64_t>& dims);
Value Iota(Shape shape, int64_t dim);

// The attributes of a node, by name: each struct below is what its constructor stores in
// the node (ToAttrs) and what the lowering rule and any other reader read back
// (FromAttrs, which throws std::invalid_argument naming the op when the attrs do not have
// the struct's form). Lists "per dimension" have one value per dimension of the operand.
struct BroadcastInDimAttrs {
  std::vector<int64_t> broadcast_dims;  // the result dimension of each operand dimension
  Attrs ToAttrs() const;
  static BroadcastInDimAttrs FromAttrs(const Attrs& attrs);
};
struct TransposeAttrs {
  std::vector<int64_t> permutation;  // result dimension i is operand dimension permutation[i]
  Attrs ToAttrs() const;
  static TransposeAttrs FromAttrs(const Attrs& attrs);
};
struct SliceAttrs {
  std::vector<int64_t> start, limit, strides;  // per dimension
  Attrs ToAttrs() const;
  static SliceAttrs FromAttrs(const Attrs& attrs);
};
struct ConcatenateAttrs {
  int64_t dim = 0;
  Attrs ToAttrs() const;
  static ConcatenateAttrs FromAttrs(const Attrs& attrs);
};
struct PadAttrs {
  std::vector<int64_t> low, high, interior;  // per dimension
  Attrs ToAttrs() const;
  static PadAttrs FromAttrs(const Attrs& attrs);
};
struct ReverseAttrs {
  std::vector<int64_t> dims;  // the dimensions reversed
  Attrs ToAttrs() const;
  static ReverseAttrs FromAttrs(const Attrs& attrs);
};
struct IotaAttrs {
  int64_t dim = 0;  // the dimension along which the values count up
  Attrs ToAttrs() const;
  static IotaAttrs FromAttrs(const Attrs& attrs);
};

// Element-wise on operands of equal shape; the result has `result_type` (default: the
// operands' type).
Value Unary(OpKind kind, const Value& v);
Value Binary(OpKind kind, const Value& a, const Value& b);
Value Compare(CompareDirection direction, const Value& a, const Value& b);
struct CompareAttrs {
  CompareDirection direction = CompareDirection::kEq;
  Attrs ToAttrs() const;
  static CompareAttrs FromAttrs(const Attrs& attrs);
};
// The complex numbers real + i * imag (operands of equal shape, f32 or f64).
Value Complex(const Value& real, const Value& imag);
Value Select(const Value& pred, const Value& on_true, const Value& on_false);

// Reduces `dims` away (in the value's own type).
Value Reduce(ReduceKind kind, const Value& v, const std::vector<int64_t>& dims);
struct ReduceAttrs {
  ReduceKind kind = ReduceKind::kSum;
  std::vector<int64_t> dims;  // the reduced dimensions, sorted and distinct
  Attrs ToAttrs() const;
  static ReduceAttrs FromAttrs(const Attrs& attrs);
};

// dot_general with result type `type`.
Value DotGeneral(const Value& a, const Value& b, const std::vector<int64_t>& lhs_batch,
                 const std::vector<int64_t>& rhs_batch, const std::vector<int64_t>& lhs_contract,
                 const std::vector<int64_t>& rhs_contract, ElementType type);
struct DotGeneralAttrs {
  // lhs_batch[i] pairs with rhs_batch[i], lhs_contract[i] with rhs_contract[i].
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contract, rhs_contract;
  Attrs ToAttrs() const;
  static DotGeneralAttrs FromAttrs(const Attrs& attrs);
};

// A call of one of PyTorch's own CPU kernels inside the graph, on the CPU device, as a
// host kernel (host/aten_ops.cpp; host/kernel_targets.h): `config` (the
// custom call's config, attrs.ints) names the op and holds its non-tensor arguments,
// `operands` are its tensor arguments in order, `results` its outputs' shapes.
std::vector<Value> HostAtenCall(std::vector<Value> operands, std::vector<Shape> results, std::vector<int64_t> config);

// v unchanged, but computed once into a buffer: XLA does not fuse the computation of v
// into its consumers (which would recompute it once per use). On the CPU device, a call
// of the pass-through host kernel (host/pass_through_kernel.h), whose result aliases
// v: free at run time. Elsewhere a maximum of v and the type's lowest value by
// reduce_window, an op XLA does not fuse: one more pass over v (builder_pooling.cpp).
Value Materialize(const Value& v);

}  // namespace torch_xla::ir
