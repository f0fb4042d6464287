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

}  // namespace torch_xla
