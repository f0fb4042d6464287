// Softmax kernels: _softmax and _log_softmax with their backward formulas, and
// _safe_softmax (fully masked rows give zeros instead of NaN, as the attention math path
// uses it). Low-precision floats (bf16, f16) compute in f32 internally and round once at
// the end, as PyTorch's CPU kernels do.
#include <ATen/ATen.h>

#include <limits>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;

}  // namespace

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

// ---- log_softmax -----------------------------------------------------------

namespace {

// Reduces dimension `dim` away and broadcasts the result back to v's shape.
Value ReduceBack(ReduceKind kind, const Value& v, int64_t dim) {
  if (v.shape().rank() == 0) return v;
  Value r = ir::Reduce(kind, v, {dim});
  return ir::BroadcastInDim(r, v.shape().dims, AllBut(v.shape().rank(), dim));
}

}  // namespace

at::Tensor XLANativeFunctions::_log_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  XLA_COUNT("_log_softmax");
  const char* op = "log_softmax";
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(self));
  int64_t d = WrapDim(dim, self.dim(), op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  ElementType out_type = half_to_float && AccumulationType(type) != type ? ElementType::kF32 : type;
  return AtenFromIr(Checked(op, [&] {
                      Value v = ir::Convert(x->GetIrValue(), AccumulationType(type));
                      // x - max - log(sum(exp(x - max))): no overflow for large inputs.
                      Value shifted = Sub(v, ReduceBack(ReduceKind::kMax, v, d));
                      Value lse = ir::Unary(ir::op::kLog, ReduceBack(ReduceKind::kSum, ir::Unary(ir::op::kExp, shifted), d));
                      return ir::Convert(Sub(shifted, lse), out_type);
                    }),
                    x->device());
}

at::Tensor XLANativeFunctions::_log_softmax_backward_data(const at::Tensor& grad_output, const at::Tensor& output,
                                                          int64_t dim, at::ScalarType input_dtype) {
  XLA_COUNT("_log_softmax_backward_data");
  const char* op = "log_softmax_backward";
  TORCH_CHECK(grad_output.sizes() == output.sizes(), op, ": grad_output ", DescribeTensor(grad_output),
              " and output ", DescribeTensor(output), " must have the same size");
  TORCH_CHECK(at::isFloatingType(grad_output.scalar_type()) && grad_output.scalar_type() == output.scalar_type(), op,
              ": expected floating point grad_output and output of the same dtype, got ", DescribeTensor(grad_output),
              " and ", DescribeTensor(output));
  TORCH_CHECK(at::isFloatingType(input_dtype), op, ": expected a floating point input_dtype, got ", input_dtype);
  int64_t d = WrapDim(dim, output.dim(), op);
  int device = CommonDevice({&grad_output, &output}, op);
  ElementType type = ElementTypeOf(grad_output.scalar_type());
  ElementType acc = AccumulationType(type);
  Value g = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  Value y = ir::Convert(GetXlaTensor(output, op)->GetIrValue(), acc);
  return AtenFromIr(Checked(op, [&] {
                      // dx = dy - exp(y) * sum(dy)
                      Value r = Sub(g, Mul(ir::Unary(ir::op::kExp, y), ReduceBack(ReduceKind::kSum, g, d)));
                      return ir::Convert(r, ElementTypeOf(input_dtype));
                    }),
                    device);
}

}  // namespace torch_xla
