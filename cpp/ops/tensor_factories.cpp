// Factory kernels that create XLA tensors: empty, empty_strided, new_empty_strided,
// _efficientzerotensor, fill, zero, and the ranges arange, eye and linspace (out=
// forms, whose XLA tensor takes the new value).
#include <ATen/ATen.h>

#include <cmath>

#include "XLANativeFunctions.h"
#include "aten/xla_tensor_impl.h"
#include "exec/replication.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

at::Tensor Full(at::IntArrayRef size, const at::Scalar& value, at::ScalarType dtype, int device) {
  runtime::ElementType type = ElementTypeOf(dtype);
  ir::Shape shape(type, std::vector<int64_t>(size.begin(), size.end()));
  for (int64_t d : shape.dims) TORCH_CHECK(d >= 0, "negative dimension in size ", size);
  double v = value.isComplex() ? value.toComplexDouble().real() : value.toDouble();
  // 0 and 1 are inlined (they are the usual fills); other values are parameters. While
  // replicas run, every value is a parameter: a fill that differs between replicas (one
  // replica's 1, another's 2) must not make their graphs differ.
  bool real = !value.isComplex() || value.toComplexDouble().imag() == 0;
  bool inline_value = (v == 0 || v == 1) && real && !exec::ReplicationRunning();
  ir::Value ir = inline_value ? ir::Constant(v, shape) : ir::Broadcast(IrScalar(value, type), shape.dims);
  return AtenFromIr(ir, device);
}

}  // namespace

at::Tensor XLANativeFunctions::empty(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                                     std::optional<at::Layout> layout, std::optional<at::Device> device,
                                     std::optional<bool> pin_memory, std::optional<at::MemoryFormat> memory_format) {
  XLA_COUNT("empty");
  int ordinal = OrdinalOf(device.value_or(XlaDeviceOf(0)));
  return Full(size, 0, dtype.value_or(c10::typeMetaToScalarType(c10::get_default_dtype())), ordinal);
}

at::Tensor XLANativeFunctions::empty_strided(at::IntArrayRef size, at::IntArrayRef stride,
                                             std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                                             std::optional<at::Device> device, std::optional<bool> pin_memory) {
  XLA_COUNT("empty_strided");
  int ordinal = OrdinalOf(device.value_or(XlaDeviceOf(0)));
  return Full(size, 0, dtype.value_or(c10::typeMetaToScalarType(c10::get_default_dtype())), ordinal);
}

// Autograd's zero gradients (sgn, ...): PyTorch's CPU and CUDA kernels make a tensor that
// is zero without memory; here it is a zero fill like any other.
at::Tensor XLANativeFunctions::_efficientzerotensor(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                                                   std::optional<at::Layout> layout, std::optional<at::Device> device,
                                                   std::optional<bool> pin_memory) {
  XLA_COUNT("_efficientzerotensor");
  int ordinal = OrdinalOf(device.value_or(XlaDeviceOf(0)));
  return Full(size, 0, dtype.value_or(c10::typeMetaToScalarType(c10::get_default_dtype())), ordinal);
}

at::Tensor XLANativeFunctions::new_empty_strided(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride,
                                                 std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                                                 std::optional<at::Device> device, std::optional<bool> pin_memory) {
  XLA_COUNT("new_empty_strided");
  int ordinal = device ? OrdinalOf(*device) : GetXlaTensor(self, "new_empty_strided")->device();
  return Full(size, 0, dtype.value_or(self.scalar_type()), ordinal);
}

at::Tensor XLANativeFunctions::fill(const at::Tensor& self, const at::Scalar& value) {
  XLA_COUNT("fill");
  return Full(self.sizes(), value, self.scalar_type(), GetXlaTensor(self, "fill_")->device());
}

at::Tensor XLANativeFunctions::fill(const at::Tensor& self, const at::Tensor& value) {
  XLA_COUNT("fill");
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  XlaTensorPtr x = GetXlaTensor(self, "fill_");
  ir::Value v = IrOperand(value, x->shape().type, "fill_");
  return AtenFromIr(ir::Broadcast(v, x->shape().dims), x->device());
}

at::Tensor XLANativeFunctions::zero(const at::Tensor& self) {
  XLA_COUNT("zero");
  return Full(self.sizes(), 0, self.scalar_type(), GetXlaTensor(self, "zero_")->device());
}

at::Tensor& XLANativeFunctions::arange_out(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step,
                                           at::Tensor& out) {
  XLA_COUNT("arange");
  double s = start.toDouble(), e = end.toDouble(), st = step.toDouble();
  TORCH_CHECK(std::isfinite(s) && std::isfinite(e), "arange: unsupported range: ", s, " -> ", e);
  TORCH_CHECK(st != 0, "arange: step must be nonzero");
  TORCH_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "arange: upper bound and larger bound inconsistent with step sign");
  bool integral = start.isIntegral(true) && end.isIntegral(true) && step.isIntegral(true);
  int64_t n = integral ? (end.toLong() - start.toLong() + step.toLong() - (st > 0 ? 1 : -1)) / step.toLong()
                       : static_cast<int64_t>(std::ceil((e - s) / st));
  XlaTensorImpl* impl = InnerImpl(out);
  runtime::ElementType type = impl->tensor()->shape().type;
  // Computed in f64 (or s64) and converted, so large ranges stay exact.
  runtime::ElementType work = runtime::IsFloating(type) ? runtime::ElementType::kF64 : runtime::ElementType::kS64;
  ir::Value iota = ir::Iota(ir::Shape(work, {n}), 0);
  ir::Value value = ir::Binary(ir::op::kAdd, ir::Binary(ir::op::kMultiply, iota, ir::Broadcast(IrScalar(step, work), {n})),
                               ir::Broadcast(IrScalar(start, work), {n}));
  impl->set_tensor(XlaTensor::FromIr(ir::Convert(value, type), impl->tensor()->device()));
  return out;
}

namespace {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;

XlaTensorImpl* OutImpl(const at::Tensor& out, const char* op) {
  auto* impl = dynamic_cast<XlaTensorImpl*>(out.unsafeGetTensorImpl());
  TORCH_CHECK(impl, op, ": expected an XLA out= tensor, got ", DescribeTensor(out));
  return impl;
}

}  // namespace

at::Tensor& XLANativeFunctions::eye_out(int64_t n, int64_t m, at::Tensor& out) {
  XLA_COUNT("eye");
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  XlaTensorImpl* impl = OutImpl(out, "eye");
  ir::Shape s(ElementType::kS64, {n, m});
  Value diag = ir::Compare(CompareDirection::kEq, ir::Iota(s, 0), ir::Iota(s, 1));
  impl->set_tensor(XlaTensor::FromIr(ir::Convert(diag, impl->tensor()->shape().type), impl->tensor()->device()));
  return out;
}

at::Tensor& XLANativeFunctions::eye_out(int64_t n, at::Tensor& out) { return eye_out(n, n, out); }

at::Tensor& XLANativeFunctions::linspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps,
                                             at::Tensor& out) {
  XLA_COUNT("linspace");
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  XlaTensorImpl* impl = OutImpl(out, "linspace");
  ElementType type = impl->tensor()->shape().type;
  double s = start.toDouble(), e = end.toDouble();
  ElementType work = ElementType::kF64;
  Value value;
  if (steps <= 1) {
    value = ir::Broadcast(IrScalar(start, work), {steps});
  } else {
    // Like PyTorch: the first half counts up from start, the second half down from end.
    double step = (e - s) / static_cast<double>(steps - 1);
    int64_t half = steps / 2;
    ir::Shape shp(work, {steps});
    Value idx = ir::Iota(shp, 0);
    Value up = ir::Binary(ir::op::kAdd, ir::Broadcast(IrScalar(start, work), {steps}),
                          ir::Binary(ir::op::kMultiply, idx, ir::Broadcast(IrScalar(step, work), {steps})));
    Value down = ir::Binary(ir::op::kSubtract, ir::Broadcast(IrScalar(end, work), {steps}),
                            ir::Binary(ir::op::kMultiply,
                                       ir::Binary(ir::op::kSubtract, ir::Constant(static_cast<double>(steps - 1), shp), idx),
                                       ir::Broadcast(IrScalar(step, work), {steps})));
    Value first = ir::Compare(CompareDirection::kLt, idx, ir::Constant(static_cast<double>(half), shp));
    value = ir::Select(first, up, down);
  }
  if (!runtime::IsFloating(type)) {
    // Integer outputs truncate toward zero like a C++ cast.
    Value neg = ir::Compare(CompareDirection::kLt, value, ir::Constant(0, value.shape()));
    value = ir::Select(neg, ir::Unary(ir::op::kCeil, value), ir::Unary(ir::op::kFloor, value));
  }
  impl->set_tensor(XlaTensor::FromIr(ir::Convert(value, type), impl->tensor()->device()));
  return out;
}

}  // namespace torch_xla
