#include "ops/elementwise_util.h"

#include <ATen/ATen.h>

namespace torch_xla::elementwise_util {
namespace {

const ir::OpKind kBitcast = ir::OpKind::Get("stablehlo.bitcast_convert");

}  // namespace

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

ElementType FloatType(ElementType t) {
  return runtime::IsFloating(t) || runtime::IsComplex(t) ? t : DefaultFloatType();
}

Value NanPropagating(ir::OpKind kind, const Value& a, const Value& b) {
  if (!runtime::IsFloating(a.shape().type)) return ir::Binary(kind, a, b);
  return ir::Binary(kind == ir::op::kMaximum ? ir::op::kNanMaximum : ir::op::kNanMinimum, a, b);
}

at::Tensor Binary(ir::OpKind kind, const at::Tensor& self, const at::Tensor& other, const char* op) {
  Operands o = Promote(self, other, ResultType(self, other), op);
  return AtenFromIr(ir::Binary(kind, o.a, o.b), o.device);
}

at::Tensor Compare(CompareDirection dir, const at::Tensor& self, const at::Tensor& other, const char* op) {
  Operands o = Promote(self, other, ResultType(self, other), op);
  return AtenFromIr(ir::Compare(dir, o.a, o.b), o.device);
}

at::Tensor Compare(CompareDirection dir, const at::Tensor& self, const at::Scalar& other, const char* op) {
  Operands o = PromoteScalar(self, other, ResultType(self, other), op);
  return AtenFromIr(ir::Compare(dir, o.a, o.b), o.device);
}

Value Pred(const Value& v) {
  if (v.shape().type == ElementType::kPred) return v;
  return ir::Compare(CompareDirection::kNe, v, ScalarLike(0, v));
}

void CheckFloating(const at::Tensor& t, const char* op) {
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), op, ": expected a floating-point tensor, got ", DescribeTensor(t));
}

BackIn GetBack(const at::Tensor& grad_output, const at::Tensor& self, const char* op) {
  TORCH_CHECK(grad_output.sizes() == self.sizes(), op, ": grad_output ", DescribeTensor(grad_output),
              " and self ", DescribeTensor(self), " must have the same shape");
  CheckFloating(grad_output, op);
  Operands o = Promote(grad_output, self, ElementTypeOf(grad_output.scalar_type()), op);
  return BackIn{o.a, o.b, o.device};
}

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

}  // namespace torch_xla::elementwise_util
