// tril and triu: the lower and upper triangles of the trailing two dimensions, by a mask
// of col - row against the diagonal.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;

// A [rows, cols] predicate pattern broadcast over the leading dims of `like`:
// col - row compared with `diagonal`.
Value TriangleMask(const Value& like, int64_t diagonal, CompareDirection dir) {
  const auto& dims = like.shape().dims;
  int64_t rank = like.shape().rank();
  ir::Shape s(ElementType::kS64, {dims[rank - 2], dims[rank - 1]});
  Value diff = ir::Binary(ir::op::kSubtract, ir::Iota(s, 1), ir::Iota(s, 0));
  Value mask = ir::Compare(dir, diff, ir::Constant(static_cast<double>(diagonal), s));
  return ir::Broadcast(mask, dims);
}

at::Tensor Triangle(const at::Tensor& self, int64_t diagonal, CompareDirection dir, const char* op) {
  TORCH_CHECK(self.dim() >= 2, op, ": input tensor must have at least 2 dimensions, got ", DescribeTensor(self));
  IrInput in = GetIrInput(self, op);
  Value mask = TriangleMask(in.v, diagonal, dir);
  return AtenFromIr(ir::Select(mask, in.v, ir::Constant(0, in.v.shape())), in.device);
}

}  // namespace

at::Tensor XLANativeFunctions::tril(const at::Tensor& self, int64_t diagonal) {
  XLA_COUNT("tril");
  return Triangle(self, diagonal, CompareDirection::kLe, "tril");
}

at::Tensor XLANativeFunctions::triu(const at::Tensor& self, int64_t diagonal) {
  XLA_COUNT("triu");
  return Triangle(self, diagonal, CompareDirection::kGe, "triu");
}

}  // namespace torch_xla
