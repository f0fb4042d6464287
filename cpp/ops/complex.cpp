// Complex numbers: building them (complex, polar, view_as_complex), taking them apart
// (view_as_real, angle) and conjugating them. Views of complex tensors reach the device
// as their *_copy ops through functionalization (view_as_real_copy, _conj_copy,
// _neg_view_copy). Complex values are c64 (f32 parts) or c128 (f64 parts).
#include <ATen/ATen.h>

#include <c10/util/MathConstants.h>

#include "XLANativeFunctions.h"
#include "ir/builder_complex.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::Value;
using runtime::ElementType;

Value Conjugate(const Value& v) {
  if (!runtime::IsComplex(v.shape().type)) return v;
  return ir::Complex(ir::Real(v), ir::Unary(ir::op::kNegate, ir::Imag(v)));
}

// The parts' dtype check shared by complex() and polar(): both inputs of one floating
// type that has a complex counterpart on the device (f32 or f64).
void CheckPartTypes(const at::Tensor& a, const at::Tensor& b, const char* op) {
  at::ScalarType ta = a.scalar_type(), tb = b.scalar_type();
  TORCH_CHECK(at::isFloatingType(ta) && at::isFloatingType(tb) && ta != at::kBFloat16 && tb != at::kBFloat16, op,
              ": expected both inputs to be Half, Float or Double tensors but got ", DescribeTensor(a), " and ",
              DescribeTensor(b));
  TORCH_CHECK(ta == tb, op, ": expected object of scalar type ", ta, " but got scalar type ", tb,
              " for second argument (", DescribeTensor(a), " and ", DescribeTensor(b), ")");
  TORCH_CHECK(ta != at::kHalf, op, ": complex32 (parts of type Half) is not supported on the XLA device, got ",
              DescribeTensor(a), " and ", DescribeTensor(b));
}

}  // namespace

at::Tensor XLANativeFunctions::view_as_real_copy(const at::Tensor& self) {
  XLA_COUNT("view_as_real_copy");
  TORCH_CHECK(self.is_complex(), "view_as_real is only supported for complex tensors, got ", DescribeTensor(self));
  IrInput in = GetIrInput(self, "view_as_real");
  return AtenFromIr(Checked("view_as_real", [&] {
                      std::vector<int64_t> dims = in.v.shape().dims;
                      dims.push_back(1);
                      return ir::Concatenate({ir::Reshape(ir::Real(in.v), dims), ir::Reshape(ir::Imag(in.v), dims)},
                                             static_cast<int64_t>(dims.size()) - 1);
                    }),
                    in.device);
}

at::Tensor XLANativeFunctions::view_as_complex_copy(const at::Tensor& self) {
  XLA_COUNT("view_as_complex_copy");
  at::ScalarType t = self.scalar_type();
  TORCH_CHECK(t == at::kFloat || t == at::kDouble || t == at::kHalf,
              "view_as_complex is only supported for float, double and half tensors, but got a tensor of scalar type: ",
              t, " (", DescribeTensor(self), ")");
  TORCH_CHECK(t != at::kHalf, "view_as_complex: complex32 is not supported on the XLA device, got ",
              DescribeTensor(self));
  TORCH_CHECK(self.dim() != 0, "view_as_complex: Input tensor must have one or more dimensions, got ",
              DescribeTensor(self));
  TORCH_CHECK(self.size(-1) == 2, "view_as_complex: Tensor must have a last dimension of size 2, got ",
              DescribeTensor(self));
  IrInput in = GetIrInput(self, "view_as_complex");
  return AtenFromIr(Checked("view_as_complex", [&] {
                      const std::vector<int64_t>& dims = in.v.shape().dims;
                      int64_t last = static_cast<int64_t>(dims.size()) - 1;
                      std::vector<int64_t> out(dims.begin(), dims.end() - 1);
                      std::vector<int64_t> start(dims.size(), 0), limit = dims, strides(dims.size(), 1);
                      auto part = [&](int64_t i) {
                        start[last] = i;
                        limit[last] = i + 1;
                        return ir::Reshape(ir::Slice(in.v, start, limit, strides), out);
                      };
                      return ir::Complex(part(0), part(1));
                    }),
                    in.device);
}

at::Tensor XLANativeFunctions::_conj_copy(const at::Tensor& self) {
  XLA_COUNT("_conj_copy");
  IrInput in = GetIrInput(self, "conj");
  return AtenFromIr(Checked("conj", [&] { return Conjugate(in.v); }), in.device);
}

at::Tensor XLANativeFunctions::_conj_physical(const at::Tensor& self) {
  XLA_COUNT("_conj_physical");
  IrInput in = GetIrInput(self, "conj_physical");
  return AtenFromIr(Checked("conj_physical", [&] { return Conjugate(in.v); }), in.device);
}

// The negative-bit view (the imaginary part of a conjugate view) made physical.
at::Tensor XLANativeFunctions::_neg_view_copy(const at::Tensor& self) {
  XLA_COUNT("_neg_view_copy");
  IrInput in = GetIrInput(self, "_neg_view");
  return AtenFromIr(Checked("_neg_view", [&] { return ir::Unary(ir::op::kNegate, in.v); }), in.device);
}

at::Tensor XLANativeFunctions::complex(const at::Tensor& real, const at::Tensor& imag) {
  XLA_COUNT("complex");
  const char* op = "complex";
  CheckPartTypes(real, imag, op);
  int device = CommonDevice({&real, &imag}, op);
  std::vector<Value> v = BroadcastOperands({&real, &imag}, ElementTypeOf(real.scalar_type()), op);
  return AtenFromIr(Checked(op, [&] { return ir::Complex(v[0], v[1]); }), device);
}

// abs * (cos(angle) + i sin(angle)).
at::Tensor XLANativeFunctions::polar(const at::Tensor& abs, const at::Tensor& angle) {
  XLA_COUNT("polar");
  const char* op = "polar";
  CheckPartTypes(abs, angle, op);
  int device = CommonDevice({&abs, &angle}, op);
  std::vector<Value> v = BroadcastOperands({&abs, &angle}, ElementTypeOf(abs.scalar_type()), op);
  return AtenFromIr(Checked(op, [&] {
                      return ir::Complex(Mul(v[0], ir::Unary(ir::op::kCos, v[1])),
                                         Mul(v[0], ir::Unary(ir::op::kSin, v[1])));
                    }),
                    device);
}

// Complex: atan2(imag, real). Real (as PyTorch's CPU kernel): NaN stays NaN, negative
// numbers give pi, the others 0; integer and bool inputs compute in the default float
// type.
at::Tensor XLANativeFunctions::angle(const at::Tensor& self) {
  XLA_COUNT("angle");
  IrInput in = GetIrInput(self, "angle");
  return AtenFromIr(Checked("angle", [&] {
                      Value x = in.v;
                      if (runtime::IsComplex(x.shape().type))
                        return ir::Binary(ir::op::kAtan2, ir::Imag(x), ir::Real(x));
                      if (!runtime::IsFloating(x.shape().type)) x = ir::Convert(x, DefaultFloatType());
                      Value zero = ScalarLike(0, x);
                      Value negative = ir::Select(ir::Compare(ir::CompareDirection::kLt, x, zero),
                                                  ScalarLike(c10::pi<double>, x), zero);
                      return ir::Select(ir::Compare(ir::CompareDirection::kNe, x, x), x, negative);
                    }),
                    in.device);
}

}  // namespace torch_xla
