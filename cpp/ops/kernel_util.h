#pragma once
// Small helpers shared by the kernels in ops/*.cpp.
#include <ATen/core/Tensor.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "aten/bridge.h"
#include "ir/builder.h"
#include "runtime/metrics.h"

namespace torch_xla {

class XlaTensorImpl;

// Runs `body`, turning the IR layer's std::invalid_argument into a c10::Error (Python
// RuntimeError) that names the ATen op.
template <typename F>
auto Checked(const char* op, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK(false, op, ": ", e.what());
  }
}

// An array of `dims` whose elements are all v.
ir::Value Full(double v, runtime::ElementType type, const std::vector<int64_t>& dims);

// ir::Compare under the short name the kernels' comparison chains use.
inline ir::Value Cmp(ir::CompareDirection d, const ir::Value& a, const ir::Value& b) { return ir::Compare(d, a, b); }

// v != v: true where v is NaN (only for floating types).
inline ir::Value IsNan(const ir::Value& v) { return Cmp(ir::CompareDirection::kNe, v, v); }

// Wraps a possibly negative dimension index like PyTorch does.
int64_t WrapDim(int64_t dim, int64_t rank, const char* op);

// A kernel operand as IR: its value and device.
struct IrInput {
  ir::Value v;
  int device;
};
IrInput GetIrInput(const at::Tensor& t, const char* op);

// The type low-precision floats (bf16, f16) accumulate and compute in: f32, as
// PyTorch's CPU kernels do; other types unchanged.
runtime::ElementType AccumulationType(runtime::ElementType t);

// Element-wise arithmetic on IR values of equal shape and type.
inline ir::Value Add(const ir::Value& a, const ir::Value& b) { return ir::Binary(ir::op::kAdd, a, b); }
inline ir::Value Sub(const ir::Value& a, const ir::Value& b) { return ir::Binary(ir::op::kSubtract, a, b); }
inline ir::Value Mul(const ir::Value& a, const ir::Value& b) { return ir::Binary(ir::op::kMultiply, a, b); }
inline ir::Value Div(const ir::Value& a, const ir::Value& b) { return ir::Binary(ir::op::kDivide, a, b); }

// A constant of value `v` in the shape and type of `like`.
inline ir::Value ScalarLike(double v, const ir::Value& like) { return ir::Constant(v, like.shape()); }

// The tensor of an optional argument, or nullptr when it is absent or undefined.
inline const at::Tensor* DefinedOrNull(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined() ? &*t : nullptr;
}

// The operands (XLA tensors, or 0-dim CPU tensors taken as scalars) in `type`, broadcast
// to their common shape; a shape mismatch raises an error naming `op`.
std::vector<ir::Value> BroadcastOperands(std::initializer_list<const at::Tensor*> tensors, runtime::ElementType type,
                                         const char* op);

// The default floating type (torch.get_default_dtype()) as an element type.
runtime::ElementType DefaultFloatType();

// Reduces `dims` of `v` and broadcasts the result back to v's shape.
ir::Value ReduceBroadcast(ir::ReduceKind kind, const ir::Value& v, const std::vector<int64_t>& dims);

// Whether a Scalar argument (alpha, beta...) equals `v`, compared as an integer when it
// is one.
bool ScalarIs(const at::Scalar& s, double v);

// The checks of baddbmm and addbmm, with PyTorch's messages: 3-D batches whose batch and
// inner sizes agree (else "<op>: <mismatch>: batch1 ... and batch2 ..."), one dtype.
void CheckBatchProductArgs(const char* op, const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                           const char* mismatch);

// beta * self + alpha * product in `type`, as addmm's relatives compute it: self must
// broadcast to the product even when beta is 0, and beta = 0 ignores self entirely (NaN
// and inf included; mv passes an uninitialized result as self).
ir::Value BiasPlusScaledProduct(const at::Tensor& self, ir::Value product, const at::Scalar& beta,
                                const at::Scalar& alpha, runtime::ElementType type, const char* op);

// Softmax of `x` along `dim` (max-subtracted).
ir::Value SoftmaxOf(const ir::Value& x, int64_t dim);

// Raises "<op>: expected a floating point <what>, got <tensor>" unless `t` is floating.
void CheckFloatingArg(const at::Tensor& t, const char* op, const char* what);

// The product of the values (1 for none): an element count.
int64_t Product(const std::vector<int64_t>& v);

// "[2, 3]" for messages.
std::string SizesString(at::IntArrayRef sizes);

// dims with the reduced dimensions set to 1 (for keepdim=True).
std::vector<int64_t> KeepDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& reduced);

// The dimensions 0 .. rank - 1 (to reduce all of them).
std::vector<int64_t> AllDims(int64_t rank);

// The dimensions 0 .. rank - 1 except `skip`.
std::vector<int64_t> AllBut(int64_t rank, int64_t skip);

// The offset tuple of row-major flat index `flat` over `sizes`.
std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& sizes);

// Elements start, start + step, ... (below end) of v along `dim`.
ir::Value SliceDim(const ir::Value& v, int64_t dim, int64_t start, int64_t end, int64_t step = 1);

// x with dimension `dim` mapped by the [out, in] matrix a (or, `transposed`, by its
// transpose): one dot_general, and a transpose back unless `dim` is the last.
ir::Value ApplyAlong(const ir::Value& x, int64_t dim, const ir::Value& a, bool transposed);

// The XlaTensorImpl of a tensor that functionalization hands over unwrapped (a copy_
// destination, an out= tensor); raises "expected an unwrapped XLA tensor" otherwise.
XlaTensorImpl* InnerImpl(const at::Tensor& t);

}  // namespace torch_xla
