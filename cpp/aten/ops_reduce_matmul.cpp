// Reduction and matrix-multiplication kernels.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"

namespace torch_xla {
namespace {

using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;

std::vector<int64_t> ReducedDims(at::OptionalIntArrayRef dim, int64_t rank, const char* op) {
  std::vector<int64_t> dims;
  if (!dim.has_value() || dim->empty()) {
    for (int64_t i = 0; i < rank; ++i) dims.push_back(i);
    return dims;
  }
  for (int64_t d : *dim) {
    int64_t w = WrapDim(d, rank, op);
    // A 0-dim tensor accepts dim 0 / -1 (as PyTorch does) and has nothing to reduce.
    if (rank > 0) dims.push_back(w);
  }
  return dims;
}

// Low-precision floats accumulate in f32, as PyTorch's CPU kernels do.
ElementType AccumulationType(ElementType t) {
  return t == ElementType::kBF16 || t == ElementType::kF16 ? ElementType::kF32 : t;
}

Value SumOf(const Value& v, const std::vector<int64_t>& dims, ElementType out_type) {
  Value acc = ir::Convert(v, AccumulationType(out_type));
  return ir::Convert(ir::Reduce(ReduceKind::kSum, acc, dims), out_type);
}

at::Tensor Finish(Value v, const std::vector<int64_t>& input_dims, const std::vector<int64_t>& reduced, bool keepdim,
                  int device) {
  if (keepdim) v = ir::Reshape(v, KeepDims(input_dims, reduced));
  return AtenFromIr(v, device);
}

ElementType SumType(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  if (dtype) return ElementTypeOf(*dtype);
  ElementType t = ElementTypeOf(self.scalar_type());
  // Integer and bool sums are int64, as in PyTorch.
  return runtime::IsFloating(t) || runtime::IsComplex(t) ? t : ElementType::kS64;
}

}  // namespace

at::Tensor XLANativeFunctions::sum(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  return sum(self, at::OptionalIntArrayRef(), false, dtype);
}

at::Tensor XLANativeFunctions::sum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                   std::optional<at::ScalarType> dtype) {
  XLA_COUNT("sum");
  XlaTensorPtr x = GetXlaTensor(self, "sum");
  std::vector<int64_t> dims = ReducedDims(dim, x->shape().rank(), "sum");
  Value v = SumOf(x->GetIrValue(), dims, SumType(self, dtype));
  return Finish(v, x->shape().dims, dims, keepdim, x->device());
}

at::Tensor XLANativeFunctions::mean(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  return mean(self, at::OptionalIntArrayRef(), false, dtype);
}

at::Tensor XLANativeFunctions::mean(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                    std::optional<at::ScalarType> dtype) {
  XLA_COUNT("mean");
  XlaTensorPtr x = GetXlaTensor(self, "mean");
  ElementType out = dtype ? ElementTypeOf(*dtype) : x->shape().type;
  TORCH_CHECK(runtime::IsFloating(out) || runtime::IsComplex(out),
              "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
              "Got: ", ScalarTypeOf(out));
  std::vector<int64_t> dims = ReducedDims(dim, x->shape().rank(), "mean");
  int64_t count = 1;
  for (int64_t d : dims) count *= x->shape().dims[d];
  ElementType acc = AccumulationType(out);
  Value sum = ir::Reduce(ReduceKind::kSum, ir::Convert(x->GetIrValue(), acc), dims);
  Value mean = ir::Binary(ir::op::kDivide, sum, ir::Constant(static_cast<double>(count), sum.shape()));
  return Finish(ir::Convert(mean, out), x->shape().dims, dims, keepdim, x->device());
}

at::Tensor XLANativeFunctions::mm(const at::Tensor& self, const at::Tensor& mat2) {
  XLA_COUNT("mm");
  TORCH_CHECK(self.dim() == 2, "mm: self must be a matrix, got ", DescribeTensor(self));
  TORCH_CHECK(mat2.dim() == 2, "mm: mat2 must be a matrix, got ", DescribeTensor(mat2));
  TORCH_CHECK(self.size(1) == mat2.size(0), "mm: mat1 and mat2 shapes cannot be multiplied (", self.size(0), "x",
              self.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), "mm: expected m1 and m2 to have the same dtype, but got: ",
              self.scalar_type(), " != ", mat2.scalar_type());
  int device = CommonDevice({&self, &mat2}, "mm");
  Value a = GetXlaTensor(self, "mm")->GetIrValue();
  Value b = GetXlaTensor(mat2, "mm")->GetIrValue();
  return AtenFromIr(ir::DotGeneral(a, b, {}, {}, {1}, {0}, a.shape().type), device);
}

at::Tensor XLANativeFunctions::bmm(const at::Tensor& self, const at::Tensor& mat2) {
  XLA_COUNT("bmm");
  TORCH_CHECK(self.dim() == 3, "bmm: batch1 must be a 3D tensor, got ", DescribeTensor(self));
  TORCH_CHECK(mat2.dim() == 3, "bmm: batch2 must be a 3D tensor, got ", DescribeTensor(mat2));
  TORCH_CHECK(self.size(0) == mat2.size(0) && self.size(2) == mat2.size(1),
              "bmm: shapes cannot be multiplied: ", DescribeTensor(self), " and ", DescribeTensor(mat2));
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), "bmm: expected batch1 and batch2 to have the same dtype, but got: ",
              self.scalar_type(), " != ", mat2.scalar_type());
  int device = CommonDevice({&self, &mat2}, "bmm");
  Value a = GetXlaTensor(self, "bmm")->GetIrValue();
  Value b = GetXlaTensor(mat2, "bmm")->GetIrValue();
  return AtenFromIr(ir::DotGeneral(a, b, {0}, {0}, {2}, {1}, a.shape().type), device);
}

at::Tensor XLANativeFunctions::addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                                     const at::Scalar& beta, const at::Scalar& alpha) {
  XLA_COUNT("addmm");
  TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2 && mat1.size(1) == mat2.size(0),
              "addmm: mat1 and mat2 shapes cannot be multiplied (", DescribeTensor(mat1), " and ",
              DescribeTensor(mat2), ")");
  TORCH_CHECK(mat1.scalar_type() == mat2.scalar_type() && self.scalar_type() == mat1.scalar_type(),
              "addmm: expected self, mat1 and mat2 to have the same dtype, got ", self.scalar_type(), ", ",
              mat1.scalar_type(), " and ", mat2.scalar_type());
  int device = CommonDevice({&self, &mat1, &mat2}, "addmm");
  Value a = GetXlaTensor(mat1, "addmm")->GetIrValue();
  Value b = GetXlaTensor(mat2, "addmm")->GetIrValue();
  ElementType type = a.shape().type;
  Value product = ir::DotGeneral(a, b, {}, {}, {1}, {0}, type);
  const auto& dims = product.shape().dims;
  if (alpha.toDouble() != 1.0) product = ir::Binary(ir::op::kMultiply, product, ir::Broadcast(IrScalar(alpha, type), dims));
  if (beta.toDouble() == 0.0) return AtenFromIr(product, device);
  Value bias = Checked("addmm", [&] { return ir::Broadcast(GetXlaTensor(self, "addmm")->GetIrValue(), dims); });
  if (beta.toDouble() != 1.0) bias = ir::Binary(ir::op::kMultiply, bias, ir::Broadcast(IrScalar(beta, type), dims));
  return AtenFromIr(ir::Binary(ir::op::kAdd, product, bias), device);
}

}  // namespace torch_xla
