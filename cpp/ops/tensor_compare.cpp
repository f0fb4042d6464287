// Comparison kernels beyond the element-wise operators: where, clamp (scalar and tensor
// bounds), clamp_min, clamp_max, isnan, isposinf, isneginf, equal and isin. Element-wise,
// with PyTorch's type promotion (ops/elementwise_util.h).
#include <ATen/ATen.h>
#include <ATen/native/TypeProperties.h>

#include <cmath>
#include <optional>

#include "XLANativeFunctions.h"
#include "aten/transfer.h"
#include "ops/elementwise_util.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Shape;
using ir::Value;
using runtime::ElementType;
using namespace elementwise_util;

}  // namespace

// ---- clamp, where ------------------------------------------------------------------

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

// ---- isnan ------------------------------------------------------------------------
at::Tensor XLANativeFunctions::isnan(const at::Tensor& self) {
  XLA_COUNT("isnan");
  XlaTensorPtr x = GetXlaTensor(self, "isnan");
  Value v = x->GetIrValue();
  if (!IsFloatType(v.shape().type))
    return AtenFromIr(ir::Constant(0, ir::Shape(ElementType::kPred, v.shape().dims)), x->device());
  return AtenFromIr(IsNan(v), x->device());
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

// ---- isposinf, isneginf -------------------------------------------------------------

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

// ---- equal, isin -------------------------------------------------------------------

// equal: same sizes and every element equal (NaN never equals), as one device reduction
// whose single boolean is read back.
bool XLANativeFunctions::equal(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("equal");
  const char* op = "equal";
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), op, ": Expected object of scalar type ",
              self.scalar_type(), " but got scalar type ", other.scalar_type(), " for argument 'other'");
  if (self.sizes() != other.sizes()) return false;
  if (self.numel() == 0) return true;
  int device = CommonDevice({&self, &other}, op);
  Value a = GetXlaTensor(self, op)->GetIrValue();
  Value b = GetXlaTensor(other, op)->GetIrValue();
  Value same = ir::Compare(ir::CompareDirection::kEq, a, b);
  std::vector<int64_t> all_dims;
  for (int64_t i = 0; i < same.shape().rank(); ++i) all_dims.push_back(i);
  Value all = ir::Reduce(ReduceKind::kAnd, same, all_dims);
  return ToCpuTensor(GetXlaTensor(AtenFromIr(all, device), op)).item<bool>();
}

namespace {

// isin on IR values: every element compared with every test element ([N, M] predicates,
// reduced with or over the tests). Both operands in their promoted type.
Value IsIn(const Value& elements, const Value& tests, bool invert) {
  const std::vector<int64_t> dims = elements.shape().dims;
  int64_t n = elements.shape().numel(), m = tests.shape().numel();
  if (m == 0) return ir::Constant(invert ? 1 : 0, Shape(ElementType::kPred, dims));
  Value e = ir::BroadcastInDim(ir::Reshape(elements, {n}), {n, m}, {0});
  Value t = ir::BroadcastInDim(ir::Reshape(tests, {m}), {n, m}, {1});
  Value found = ir::Reduce(ReduceKind::kOr, ir::Compare(ir::CompareDirection::kEq, e, t), {1});
  if (invert) found = ir::Compare(ir::CompareDirection::kEq, found, ir::Constant(0, found.shape()));
  return ir::Reshape(found, dims);
}

at::Tensor IsInOf(const at::Tensor& elements, const at::Tensor& tests, bool invert, const char* op) {
  ElementType type = ElementTypeOf(at::result_type(elements, tests));
  const at::Tensor& on_device = IsXlaTensor(elements) ? elements : tests;
  int device = GetXlaTensor(on_device, op)->device();
  auto operand = [&](const at::Tensor& t) {
    if (IsXlaTensor(t)) return ir::Convert(GetXlaTensor(t, op)->GetIrValue(), type);
    return ir::Convert(FromCpuTensor(t.contiguous(), device)->GetIrValue(), type);
  };
  return AtenFromIr(IsIn(operand(elements), operand(tests), invert), device);
}

}  // namespace

at::Tensor XLANativeFunctions::isin(const at::Tensor& elements, const at::Tensor& test_elements, bool /*assume_unique*/,
                                    bool invert) {
  XLA_COUNT("isin");
  return IsInOf(elements, test_elements, invert, "isin");
}

at::Tensor XLANativeFunctions::isin(const at::Tensor& elements, const at::Scalar& test_element, bool /*assume_unique*/,
                                    bool invert) {
  XLA_COUNT("isin");
  return IsInOf(elements, c10::scalar_to_tensor(test_element), invert, "isin");
}

at::Tensor XLANativeFunctions::isin(const at::Scalar& element, const at::Tensor& test_elements, bool /*assume_unique*/,
                                    bool invert) {
  XLA_COUNT("isin");
  return IsInOf(c10::scalar_to_tensor(element), test_elements, invert, "isin");
}

}  // namespace torch_xla
