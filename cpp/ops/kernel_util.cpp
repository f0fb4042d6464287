#include "ops/kernel_util.h"

#include <algorithm>

#include <c10/core/DefaultDtype.h>

#include "aten/xla_tensor_impl.h"

namespace torch_xla {

ir::Value Full(double v, runtime::ElementType type, const std::vector<int64_t>& dims) {
  return ir::Constant(v, ir::Shape(type, dims));
}

std::vector<ir::Value> BroadcastOperands(std::initializer_list<const at::Tensor*> tensors, runtime::ElementType type,
                                         const char* op) {
  return Checked(op, [&] {
    std::vector<ir::Value> values;
    std::vector<int64_t> dims;
    for (const at::Tensor* t : tensors) {
      values.push_back(IrOperand(*t, type, op));
      dims = ir::BroadcastDims(dims, values.back().shape().dims, op);
    }
    for (ir::Value& v : values) v = ir::Broadcast(v, dims);
    return values;
  });
}

int64_t WrapDim(int64_t dim, int64_t rank, const char* op) {
  int64_t r = std::max<int64_t>(rank, 1);
  TORCH_CHECK(dim >= -r && dim < r, op, ": dimension out of range (expected to be in range of [", -r, ", ", r - 1,
              "], but got ", dim, ")");
  return dim < 0 ? dim + r : dim;
}

IrInput GetIrInput(const at::Tensor& t, const char* op) {
  XlaTensorPtr x = GetXlaTensor(t, op);
  return IrInput{x->GetIrValue(), x->device()};
}

runtime::ElementType AccumulationType(runtime::ElementType t) {
  using runtime::ElementType;
  return t == ElementType::kBF16 || t == ElementType::kF16 ? ElementType::kF32 : t;
}

runtime::ElementType DefaultFloatType() { return ElementTypeOf(c10::typeMetaToScalarType(c10::get_default_dtype())); }

std::vector<int64_t> KeepDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& reduced) {
  std::vector<int64_t> out = dims;
  for (int64_t d : reduced) out[d] = 1;
  return out;
}

std::vector<int64_t> AllDims(int64_t rank) {
  std::vector<int64_t> d;
  for (int64_t i = 0; i < rank; ++i) d.push_back(i);
  return d;
}

std::vector<int64_t> AllBut(int64_t rank, int64_t skip) {
  std::vector<int64_t> d;
  for (int64_t i = 0; i < rank; ++i)
    if (i != skip) d.push_back(i);
  return d;
}

std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> t(sizes.size());
  for (int64_t a = static_cast<int64_t>(sizes.size()) - 1; a >= 0; --a) {
    t[a] = flat % sizes[a];
    flat /= sizes[a];
  }
  return t;
}

ir::Value SliceDim(const ir::Value& v, int64_t dim, int64_t start, int64_t end, int64_t step) {
  std::vector<int64_t> lo(v.shape().rank(), 0), hi = v.shape().dims, st(v.shape().rank(), 1);
  lo[dim] = start;
  hi[dim] = end;
  st[dim] = step;
  return ir::Slice(v, lo, hi, st);
}

ir::Value ApplyAlong(const ir::Value& x, int64_t dim, const ir::Value& a, bool transposed) {
  int64_t r = x.shape().rank();
  ir::Value y = ir::DotGeneral(x, a, {}, {}, {dim}, {transposed ? 0 : 1}, x.shape().type);  // [.. without dim, n]
  if (dim == r - 1) return y;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < r; ++d) perm.push_back(d == dim ? r - 1 : (d < dim ? d : d - 1));
  return ir::Transpose(y, perm);
}

XlaTensorImpl* InnerImpl(const at::Tensor& t) {
  auto* impl = dynamic_cast<XlaTensorImpl*>(t.unsafeGetTensorImpl());
  TORCH_CHECK(impl, "expected an unwrapped XLA tensor");
  return impl;
}

ir::Value ReduceBroadcast(ir::ReduceKind kind, const ir::Value& v, const std::vector<int64_t>& dims) {
  ir::Value r = ir::Reduce(kind, v, dims);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < v.shape().rank(); ++i)
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) kept.push_back(i);
  return ir::BroadcastInDim(r, v.shape().dims, kept);
}

ir::Value SoftmaxOf(const ir::Value& x, int64_t dim) {
  ir::Value max = ReduceBroadcast(ir::ReduceKind::kMax, x, {dim});
  ir::Value e = ir::Unary(ir::op::kExp, Sub(x, max));
  return Div(e, ReduceBroadcast(ir::ReduceKind::kSum, e, {dim}));
}

void CheckFloatingArg(const at::Tensor& t, const char* op, const char* what) {
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), op, ": expected a floating point ", what, ", got ",
              DescribeTensor(t));
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

std::string SizesString(at::IntArrayRef sizes) {
  std::string s = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

bool ScalarIs(const at::Scalar& s, double v) {
  return s.isIntegral(true) ? s.toLong() == static_cast<int64_t>(v) : s.toDouble() == v;
}

void CheckBatchProductArgs(const char* op, const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                           const char* mismatch) {
  TORCH_CHECK(batch1.dim() == 3, op, ": batch1 must be a 3D tensor, got ", DescribeTensor(batch1));
  TORCH_CHECK(batch2.dim() == 3, op, ": batch2 must be a 3D tensor, got ", DescribeTensor(batch2));
  TORCH_CHECK(batch1.size(0) == batch2.size(0) && batch1.size(2) == batch2.size(1), op, ": ", mismatch, ": batch1 ",
              DescribeTensor(batch1), " and batch2 ", DescribeTensor(batch2));
  TORCH_CHECK(batch1.scalar_type() == batch2.scalar_type() && self.scalar_type() == batch1.scalar_type(), op,
              ": expected self, batch1 and batch2 to have the same dtype, but got ", self.scalar_type(), ", ",
              batch1.scalar_type(), " and ", batch2.scalar_type());
}

ir::Value BiasPlusScaledProduct(const at::Tensor& self, ir::Value product, const at::Scalar& beta,
                                const at::Scalar& alpha, runtime::ElementType type, const char* op) {
  const std::vector<int64_t> dims = product.shape().dims;
  ir::Value bias = Checked(op, [&] { return ir::Broadcast(IrOperand(self, type, op), dims); });
  if (!ScalarIs(alpha, 1)) product = Mul(product, ir::Broadcast(IrScalar(alpha, type), dims));
  if (ScalarIs(beta, 0)) return product;
  if (!ScalarIs(beta, 1)) bias = Mul(bias, ir::Broadcast(IrScalar(beta, type), dims));
  return Add(bias, product);
}

}  // namespace torch_xla
