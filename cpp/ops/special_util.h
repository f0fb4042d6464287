#pragma once
// Helpers shared by the special-function kernels (ops/special.cpp, ops/special_bessel.cpp,
// ops/special_gamma.cpp, ops/special_polynomials.cpp): their operands and compute types,
// short names for the element-wise IR ops of their formulas, Cephes' polevl, and the
// element-wise device loop of the series and recurrences whose length depends on the
// data; defined in special_util.cpp.
#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "ops/kernel_util.h"

namespace torch_xla::special_util {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;

// ---- compute types and operands --------------------------------------------------

// The result type of a float-valued op: integers and bools give the default float type.
inline ElementType FloatResult(ElementType t) { return runtime::IsFloating(t) ? t : DefaultFloatType(); }

// Raises "<op>: complex tensors are not supported, got <t>" for a complex t.
void CheckReal(const at::Tensor& t, const char* op);

// An operand in its compute type, the type of the op's result and the device.
struct UnaryIn {
  Value x;
  ElementType result;
  int device;
};
UnaryIn GetUnary(const at::Tensor& self, const char* op);

struct BinaryIn {
  Value a, b;
  ElementType result;
  int device;
};
// Both operands promoted like PyTorch (at::result_type, integers to the default float),
// broadcast, in the compute type.
BinaryIn GetBinary(const at::Tensor& self, const at::Tensor& other, const char* op);

// r rounded to the result type, on `device`.
inline at::Tensor Result(const Value& r, ElementType type, int device) {
  return AtenFromIr(ir::Convert(r, type), device);
}

// ---- element-wise shorthands -----------------------------------------------------

inline Value C(double v, const Value& like) { return ScalarLike(v, like); }
inline Value Lt(const Value& a, double b) { return Cmp(CompareDirection::kLt, a, C(b, a)); }
inline Value Le(const Value& a, double b) { return Cmp(CompareDirection::kLe, a, C(b, a)); }
inline Value Gt(const Value& a, double b) { return Cmp(CompareDirection::kGt, a, C(b, a)); }
inline Value Eq(const Value& a, double b) { return Cmp(CompareDirection::kEq, a, C(b, a)); }
inline Value And(const Value& a, const Value& b) { return ir::Binary(ir::op::kAnd, a, b); }
inline Value Or(const Value& a, const Value& b) { return ir::Binary(ir::op::kOr, a, b); }
inline Value Not(const Value& a) { return ir::Unary(ir::op::kNot, a); }
inline Value Sel(const Value& p, const Value& a, const Value& b) { return ir::Select(p, a, b); }
inline Value Neg(const Value& x) { return ir::Unary(ir::op::kNegate, x); }
inline Value Abs(const Value& x) { return ir::Unary(ir::op::kAbs, x); }
inline Value Exp(const Value& x) { return ir::Unary(ir::op::kExp, x); }
inline Value Log(const Value& x) { return ir::Unary(ir::op::kLog, x); }
inline Value Log1p(const Value& x) { return ir::Unary(ir::op::kLog1p, x); }
inline Value Sqrt(const Value& x) { return ir::Unary(ir::op::kSqrt, x); }
inline Value Sin(const Value& x) { return ir::Unary(ir::op::kSin, x); }
inline Value Cos(const Value& x) { return ir::Unary(ir::op::kCos, x); }

// An integer constant in the shape and type of `like`.
inline Value IntLike(int64_t v, const Value& like) { return ir::Constant(static_cast<double>(v), like.shape()); }

// chlo.erfc.
extern const ir::OpKind kErfc;

// Cephes' polevl: c[0] x^n + c[1] x^(n-1) + ... + c[n] by Horner's rule.
Value Polevl(const Value& x, const std::vector<double>& c);

// ---- element-wise loops ------------------------------------------------------------

// Whether any element of the predicate v is true (v itself when it has no dimensions).
Value AnyTrue(const Value& v);

// One step of an element-wise loop: the new state and where it stops.
struct LoopStep {
  std::vector<Value> state;
  Value stop;  // pred, per element
};
// i: the step's number (s64[], from 0); inputs: loop-invariant operands; state: this step's.
using LoopBody =
    std::function<LoopStep(const Value& i, const std::vector<Value>& inputs, const std::vector<Value>& state)>;

// Per element: `while (!done) { state = body(state); done = stop || max_steps taken; }`,
// as one stablehlo.while whose trip count is decided on the device: it ends once every
// element is done. Elements marked in `done` take no step. Inputs and states all have
// the shape of `done`. Returns the final states.
std::vector<Value> ElementwiseLoop(const std::vector<Value>& inputs, const std::vector<Value>& state, const Value& done,
                                   int64_t max_steps, const LoopBody& body);

}  // namespace torch_xla::special_util
