// Matrix products with a batch or a vector operand: baddbmm, addmv, dot (matmul with
// 1-D operands) and their backward formulas. Low-precision floats (bf16, f16) compute in
// f32 internally and round once at the end, as PyTorch's CPU kernels do.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"

namespace torch_xla {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;

// ---- baddbmm ---------------------------------------------------------------

at::Tensor XLANativeFunctions::baddbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                                       const at::Scalar& beta, const at::Scalar& alpha) {
  XLA_COUNT("baddbmm");
  const char* op = "baddbmm";
  TORCH_CHECK(batch1.dim() == 3, op, ": batch1 must be a 3D tensor, got ", DescribeTensor(batch1));
  TORCH_CHECK(batch2.dim() == 3, op, ": batch2 must be a 3D tensor, got ", DescribeTensor(batch2));
  TORCH_CHECK(batch1.size(0) == batch2.size(0) && batch1.size(2) == batch2.size(1), op,
              ": shapes cannot be multiplied: batch1 ", DescribeTensor(batch1), " and batch2 ",
              DescribeTensor(batch2));
  TORCH_CHECK(batch1.scalar_type() == batch2.scalar_type() && self.scalar_type() == batch1.scalar_type(), op,
              ": expected self, batch1 and batch2 to have the same dtype, but got ", self.scalar_type(), ", ",
              batch1.scalar_type(), " and ", batch2.scalar_type());
  int device = CommonDevice({&self, &batch1, &batch2}, op);
  Value a = GetXlaTensor(batch1, op)->GetIrValue();
  Value b = GetXlaTensor(batch2, op)->GetIrValue();
  ElementType type = a.shape().type;
  Value product = ir::DotGeneral(a, b, {0}, {0}, {2}, {1}, type);
  const auto& dims = product.shape().dims;
  auto is_value = [](const at::Scalar& s, double v) {
    return s.isIntegral(true) ? s.toLong() == static_cast<int64_t>(v) : s.toDouble() == v;
  };
  // The bias must broadcast to the product even when beta is 0 (PyTorch checks it too).
  Value bias = Checked(op, [&] { return ir::Broadcast(IrOperand(self, type, op), dims); });
  if (!is_value(alpha, 1)) product = Mul(product, ir::Broadcast(IrScalar(alpha, type), dims));
  // beta = 0 ignores self entirely, NaN and inf included.
  if (is_value(beta, 0)) return AtenFromIr(product, device);
  if (!is_value(beta, 1)) bias = Mul(bias, ir::Broadcast(IrScalar(beta, type), dims));
  return AtenFromIr(Add(bias, product), device);
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
  Value product = ir::DotGeneral(a, v, {}, {}, {1}, {0}, type);
  const auto& dims = product.shape().dims;
  auto is_value = [](const at::Scalar& s, double x) {
    return s.isIntegral(true) ? s.toLong() == static_cast<int64_t>(x) : s.toDouble() == x;
  };
  Value bias = Checked(op, [&] { return ir::Broadcast(IrOperand(self, type, op), dims); });
  if (!is_value(alpha, 1)) product = Mul(product, ir::Broadcast(IrScalar(alpha, type), dims));
  // beta = 0 ignores self (mv passes an uninitialized result as self).
  if (is_value(beta, 0)) return AtenFromIr(product, device);
  if (!is_value(beta, 1)) bias = Mul(bias, ir::Broadcast(IrScalar(beta, type), dims));
  return AtenFromIr(Add(bias, product), device);
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

}  // namespace torch_xla
