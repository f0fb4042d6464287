// Linear algebra kernels: the matrix products mm, bmm, addmm, addbmm, baddbmm, addmv, dot
// and vdot, _trilinear (bilinear's kernel) and linalg_cross. Low-precision floats (bf16,
// f16) compute in f32 internally and round once at the end, as PyTorch's CPU kernels do.
// On the CPU device, mm's large float32 weight gradients run PyTorch's product as a host
// call (host/matmul.h).
#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>

#include <algorithm>

#include "XLANativeFunctions.h"
#include "aten/cpu_fallback.h"
#include "ops/host_matmul.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;

}  // namespace

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
  if (std::optional<at::Tensor> product = HostMatrixProduct(a, b, device)) return *product;
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

// ---- addbmm, vdot -------------------------------------------------------------------

// addbmm: beta * self + alpha * sum over the batch of batch1[b] @ batch2[b], one
// dot_general contracting the batch and inner dimensions together.
at::Tensor XLANativeFunctions::addbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                                      const at::Scalar& beta, const at::Scalar& alpha) {
  XLA_COUNT("addbmm");
  const char* op = "addbmm";
  CheckBatchProductArgs(op, self, batch1, batch2, "incompatible matrix sizes for bmm");
  int device = CommonDevice({&self, &batch1, &batch2}, op);
  Value a = GetXlaTensor(batch1, op)->GetIrValue();
  Value b = GetXlaTensor(batch2, op)->GetIrValue();
  ElementType type = a.shape().type;
  const int64_t batches = batch1.size(0);
  constexpr int64_t kMaxRoundedBatches = 64;
  if ((type == ElementType::kBF16 || type == ElementType::kF16) && batches > 0 && batches <= kMaxRoundedBatches) {
    // Eager adds batch after batch into the low-precision result (addmm_ per batch, one
    // rounding each); the same order of roundings keeps bf16 results within its
    // tolerance of eager (one f32 sum differs from it by up to ~9% at 10 batches).
    ElementType f32 = ElementType::kF32;
    Value products = ir::DotGeneral(a, b, {0}, {0}, {2}, {1}, f32);  // [B, n, p]
    const int64_t n = batch1.size(1), p = batch2.size(2);
    std::vector<int64_t> dims{n, p};
    Value alpha_v = ir::Broadcast(IrScalar(alpha, f32), dims);
    auto batch = [&](int64_t i) {
      Value one = ir::Reshape(ir::Slice(products, {i, 0, 0}, {i + 1, n, p}, {1, 1, 1}), dims);
      return ScalarIs(alpha, 1) ? one : ir::Binary(ir::op::kMultiply, one, alpha_v);
    };
    Value acc = batch(0);
    Value bias = Checked(op, [&] { return ir::Broadcast(IrOperand(self, f32, op), dims); });
    if (!ScalarIs(beta, 0)) {
      if (!ScalarIs(beta, 1)) bias = ir::Binary(ir::op::kMultiply, bias, ir::Broadcast(IrScalar(beta, f32), dims));
      acc = ir::Binary(ir::op::kAdd, bias, acc);
    }
    Value result = ir::Convert(acc, type);
    for (int64_t i = 1; i < batches; ++i)
      result = ir::Convert(ir::Binary(ir::op::kAdd, ir::Convert(result, f32), batch(i)), type);
    return AtenFromIr(result, device);
  }
  Value product = ir::DotGeneral(a, b, {}, {}, {0, 2}, {0, 1}, type);
  return AtenFromIr(BiasPlusScaledProduct(self, product, beta, alpha, type, op), device);
}

// vdot: the dot product with self conjugated; for real types exactly dot. Complex
// vectors run on the CPU (no conjugate lowering yet).
at::Tensor XLANativeFunctions::vdot(const at::Tensor& self, const at::Tensor& other) {
  if (self.is_complex() || other.is_complex())
    return at::native::call_fallback_fn<&XlaCpuFallback, ATEN_OP(vdot)>::call(self, other);
  XLA_COUNT("vdot");
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "vdot: 1D tensors expected, but got ", self.dim(), "D and ",
              other.dim(), "D tensors");
  return dot(self, other);
}

// ---- _trilinear ---------------------------------------------------------------------

// _trilinear (bilinear's kernel): i1, i2, i3 each get size-1 dimensions inserted at
// their expand lists (ascending), are multiplied with broadcasting, and the sumdim
// dimensions are summed away. Low-precision types accumulate in f32.
at::Tensor XLANativeFunctions::_trilinear(const at::Tensor& i1, const at::Tensor& i2, const at::Tensor& i3,
                                          at::IntArrayRef expand1, at::IntArrayRef expand2, at::IntArrayRef expand3,
                                          at::IntArrayRef sumdim, int64_t unroll_dim) {
  XLA_COUNT("_trilinear");
  const char* op = "_trilinear";
  const int64_t total = i1.dim() + static_cast<int64_t>(expand1.size());
  TORCH_CHECK(i2.dim() + static_cast<int64_t>(expand2.size()) == total &&
                  i3.dim() + static_cast<int64_t>(expand3.size()) == total,
              op, ": expanded dimensions do not match: i1 ", DescribeTensor(i1), ", i2 ", DescribeTensor(i2), ", i3 ",
              DescribeTensor(i3));
  TORCH_CHECK(unroll_dim >= 0 && unroll_dim < total, op, ": unroll_dim must be in [0,", total - 1, "]");
  TORCH_CHECK(i1.scalar_type() == i2.scalar_type() && i1.scalar_type() == i3.scalar_type(), op,
              ": expected i1, i2 and i3 to have the same dtype, got ", i1.scalar_type(), ", ", i2.scalar_type(),
              " and ", i3.scalar_type());
  int device = CommonDevice({&i1, &i2, &i3}, op);
  ElementType type = ElementTypeOf(i1.scalar_type());
  ElementType acc = AccumulationType(type);
  auto expanded = [&](const at::Tensor& t, at::IntArrayRef expand) {
    std::vector<int64_t> sorted(expand.begin(), expand.end());
    for (int64_t& d : sorted) d = WrapDim(d, total, op);
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> dims = t.sizes().vec();
    for (int64_t d : sorted) dims.insert(dims.begin() + d, 1);
    return ir::Reshape(ir::Convert(GetXlaTensor(t, op)->GetIrValue(), acc), dims);
  };
  return Checked(op, [&] {
    Value a = expanded(i1, expand1), b = expanded(i2, expand2), c = expanded(i3, expand3);
    std::vector<int64_t> dims = ir::BroadcastDims(ir::BroadcastDims(a.shape().dims, b.shape().dims, op),
                                                  c.shape().dims, op);
    Value product = ir::Binary(ir::op::kMultiply,
                               ir::Binary(ir::op::kMultiply, ir::Broadcast(a, dims), ir::Broadcast(b, dims)),
                               ir::Broadcast(c, dims));
    std::vector<int64_t> summed;
    for (int64_t d : sumdim) summed.push_back(WrapDim(d, total, op));
    std::sort(summed.begin(), summed.end());
    summed.erase(std::unique(summed.begin(), summed.end()), summed.end());
    if (!summed.empty()) product = ir::Reduce(ReduceKind::kSum, product, summed);
    return AtenFromIr(ir::Convert(product, type), device);
  });
}

// ---- baddbmm ---------------------------------------------------------------

at::Tensor XLANativeFunctions::baddbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                                       const at::Scalar& beta, const at::Scalar& alpha) {
  XLA_COUNT("baddbmm");
  const char* op = "baddbmm";
  CheckBatchProductArgs(op, self, batch1, batch2, "shapes cannot be multiplied");
  int device = CommonDevice({&self, &batch1, &batch2}, op);
  Value a = GetXlaTensor(batch1, op)->GetIrValue();
  Value b = GetXlaTensor(batch2, op)->GetIrValue();
  ElementType type = a.shape().type;
  return AtenFromIr(BiasPlusScaledProduct(self, ir::DotGeneral(a, b, {0}, {0}, {2}, {1}, type), beta, alpha, type, op),
                    device);
}

// ---- matrix-vector products (matmul with a 1-D operand) ----------------------

at::Tensor XLANativeFunctions::addmv(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                                     const at::Scalar& beta, const at::Scalar& alpha) {
  XLA_COUNT("addmv");
  const char* op = "addmv";
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1 && mat.size(1) == vec.size(0), op,
              ": vector + matrix @ vector expected, got mat ", DescribeTensor(mat), " and vec ", DescribeTensor(vec));
  TORCH_CHECK(mat.scalar_type() == vec.scalar_type() && self.scalar_type() == mat.scalar_type(), op,
              ": expected self, mat and vec to have the same dtype, but got ", self.scalar_type(), ", ",
              mat.scalar_type(), " and ", vec.scalar_type());
  int device = CommonDevice({&self, &mat, &vec}, op);
  Value a = GetXlaTensor(mat, op)->GetIrValue();
  Value v = GetXlaTensor(vec, op)->GetIrValue();
  ElementType type = a.shape().type;
  return AtenFromIr(BiasPlusScaledProduct(self, ir::DotGeneral(a, v, {}, {}, {1}, {0}, type), beta, alpha, type, op),
                    device);
}

at::Tensor XLANativeFunctions::dot(const at::Tensor& self, const at::Tensor& tensor) {
  XLA_COUNT("dot");
  TORCH_CHECK(self.dim() == 1 && tensor.dim() == 1, "dot: 1D tensors expected, but got ", self.dim(), "D and ",
              tensor.dim(), "D tensors");
  TORCH_CHECK(self.size(0) == tensor.size(0), "dot: inconsistent tensor size, expected tensor [", self.size(0),
              "] and src [", tensor.size(0), "] to have the same number of elements, but got ", self.size(0), " and ",
              tensor.size(0), " elements respectively");
  TORCH_CHECK(self.scalar_type() == tensor.scalar_type(), "dot: expected both vectors to have same dtype, but found ",
              self.scalar_type(), " and ", tensor.scalar_type());
  int device = CommonDevice({&self, &tensor}, "dot");
  Value a = GetXlaTensor(self, "dot")->GetIrValue();
  Value b = GetXlaTensor(tensor, "dot")->GetIrValue();
  return AtenFromIr(ir::DotGeneral(a, b, {}, {}, {0}, {0}, a.shape().type), device);
}

// ---- linalg_cross --------------------------------------------------------------
// The cross product of 3-vectors along `dim`, after broadcasting.
//   c0 = a1 b2 - a2 b1,  c1 = a2 b0 - a0 b2,  c2 = a0 b1 - a1 b0
// Any numeric dtype. Its gradients are cross products too, so autograd needs no
// backward kernel.
namespace {

// Component i of the 3-vectors of `v` along `dim` (size 1 there).
Value Component(const Value& v, int64_t dim, int64_t i) {
  std::vector<int64_t> start(v.shape().rank(), 0), limit = v.shape().dims, strides(v.shape().rank(), 1);
  start[dim] = i;
  limit[dim] = i + 1;
  return ir::Slice(v, start, limit, strides);
}

}  // namespace

at::Tensor XLANativeFunctions::linalg_cross(const at::Tensor& self, const at::Tensor& other, int64_t dim) {
  XLA_COUNT("linalg_cross");
  const char* op = "linalg.cross";
  TORCH_CHECK(self.dim() == other.dim(), op, ": inputs must have the same number of dimensions, got ",
              DescribeTensor(self), " and ", DescribeTensor(other));
  TORCH_CHECK(self.scalar_type() != at::kBool && other.scalar_type() != at::kBool, op,
              ": boolean inputs are not supported, got ", DescribeTensor(self), " and ", DescribeTensor(other));
  int64_t d = WrapDim(dim, self.dim(), op);
  TORCH_CHECK(self.size(d) == 3 && other.size(d) == 3, op, ": inputs dimension ", dim, " must have length 3. Got ",
              self.size(d), " and ", other.size(d));
  at::ScalarType type = at::result_type(self, other);
  int device = CommonDevice({&self, &other}, op);
  return AtenFromIr(Checked(op, [&] {
                      std::vector<Value> v = BroadcastOperands({&self, &other}, ElementTypeOf(type), op);
                      const Value &a = v[0], &b = v[1];
                      auto term = [&](int64_t i, int64_t j) {
                        return Sub(Mul(Component(a, d, i), Component(b, d, j)),
                                   Mul(Component(a, d, j), Component(b, d, i)));
                      };
                      return ir::Concatenate({term(1, 2), term(2, 0), term(0, 1)}, d);
                    }),
                    device);
}

}  // namespace torch_xla
