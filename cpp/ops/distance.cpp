// Distance kernels: _cdist_forward (cdist) and _pdist_forward (pdist), the p-norm
// distances between rows.
#include <ATen/ATen.h>

#include <cmath>

#include "XLANativeFunctions.h"
#include "aten/transfer.h"
#include "ir/builder_indexing.h"
#include "ops/kernel_util.h"
#include "ops/reduce_util.h"

namespace torch_xla {
namespace {

using ir::ReduceKind;
using ir::Shape;
using ir::Value;
using runtime::ElementType;
using namespace reduce_util;

// The p-norm over the last dimension of differences d (in their floating type): p = 0
// counts non-zeros, p = inf takes the max of |d|, p = 1 sums |d|, p = 2 is the
// Euclidean norm, others (sum |d|^p)^(1/p).
Value PNormOfLast(const Value& d, double p) {
  int64_t last = d.shape().rank() - 1;
  Value a = ir::Unary(ir::op::kAbs, d);
  if (p == 0) return ir::Reduce(ReduceKind::kSum, ir::Convert(NonZero(d), d.shape().type), {last});
  if (std::isinf(p)) return ir::Reduce(ReduceKind::kMax, a, {last});
  if (p == 1) return ir::Reduce(ReduceKind::kSum, a, {last});
  if (p == 2) return ir::Unary(ir::op::kSqrt, ir::Reduce(ReduceKind::kSum, ir::Binary(ir::op::kMultiply, d, d), {last}));
  Value powered = ir::Binary(ir::op::kPower, a, ScalarLike(p, a));
  Value sum = ir::Reduce(ReduceKind::kSum, powered, {last});
  return ir::Binary(ir::op::kPower, sum, ScalarLike(1.0 / p, sum));
}

}  // namespace

// _cdist_forward: x1 [*, P, M], x2 [*, R, M] -> [*, P, R] p-norm distances of every
// pair of rows, from the [*, P, R, M] differences (batch dimensions broadcast).
at::Tensor XLANativeFunctions::_cdist_forward(const at::Tensor& x1, const at::Tensor& x2, double p,
                                              std::optional<int64_t> /*compute_mode*/) {
  XLA_COUNT("_cdist_forward");
  const char* op = "cdist";
  TORCH_CHECK(x1.dim() >= 2, op, " only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, op, " only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1), op, ": X1 and X2 must have the same number of columns. X1: ",
              DescribeTensor(x1), " X2: ", DescribeTensor(x2));
  TORCH_CHECK(at::isFloatingType(x1.scalar_type()) && x1.scalar_type() == x2.scalar_type(), op,
              " only supports floating-point dtypes of the same type, X1 got: ", x1.scalar_type(), ", X2 got: ",
              x2.scalar_type());
  TORCH_CHECK(p >= 0, op, " only supports non-negative p values, got ", p);
  int device = CommonDevice({&x1, &x2}, op);
  ElementType type = ElementTypeOf(x1.scalar_type());
  ElementType acc = AccumulationType(type);
  return Checked(op, [&] {
    Value a = ir::Convert(GetXlaTensor(x1, op)->GetIrValue(), acc);
    Value b = ir::Convert(GetXlaTensor(x2, op)->GetIrValue(), acc);
    std::vector<int64_t> ab(x1.sizes().begin(), x1.sizes().end() - 2), bb(x2.sizes().begin(), x2.sizes().end() - 2);
    std::vector<int64_t> batch = ir::BroadcastDims(ab, bb, op);
    int64_t nb = static_cast<int64_t>(batch.size());
    int64_t P = x1.size(-2), R = x2.size(-2), M = x1.size(-1);
    std::vector<int64_t> full = batch;
    full.insert(full.end(), {P, R, M});
    std::vector<int64_t> a_dims = batch, b_dims = batch;
    a_dims.insert(a_dims.end(), {P, M});
    b_dims.insert(b_dims.end(), {R, M});
    std::vector<int64_t> a_map, b_map;
    for (int64_t i = 0; i < nb; ++i) {
      a_map.push_back(i);
      b_map.push_back(i);
    }
    a_map.insert(a_map.end(), {nb, nb + 2});
    b_map.insert(b_map.end(), {nb + 1, nb + 2});
    Value diff = ir::Binary(ir::op::kSubtract, ir::BroadcastInDim(ir::Broadcast(a, a_dims), full, a_map),
                            ir::BroadcastInDim(ir::Broadcast(b, b_dims), full, b_map));
    return AtenFromIr(ir::Convert(PNormOfLast(diff, p), type), device);
  });
}

// _pdist_forward: self [N, M] -> the p-norm distances of the row pairs i < j, in
// row-major order of (i, j); the pairs are static, gathered with host-built indices.
at::Tensor XLANativeFunctions::_pdist_forward(const at::Tensor& self, double p) {
  XLA_COUNT("_pdist_forward");
  const char* op = "pdist";
  TORCH_CHECK(self.dim() == 2, op, " only supports 2D tensors, got: ", self.dim(), "D");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, " only supports floating-point dtypes");
  TORCH_CHECK(p >= 0, op, " only supports non-negative p values");
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  const int64_t n = self.size(0), m = self.size(1);
  const int64_t pairs = n * (n - 1) / 2;
  if (pairs == 0) return AtenFromIr(ir::Constant(0, Shape(type, {0})), x->device());
  std::vector<int64_t> first, second;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) {
      first.push_back(i);
      second.push_back(j);
    }
  return Checked(op, [&] {
    Value v = ir::Convert(x->GetIrValue(), AccumulationType(type));
    auto rows = [&](const std::vector<int64_t>& which) {
      at::Tensor idx = at::tensor(which, at::kLong).reshape({pairs, 1});
      Value iv = FromCpuTensor(idx, x->device())->GetIrValue();
      return ir::Gather(v, iv, {1}, {0}, {0}, 1, {1, m});
    };
    Value diff = ir::Binary(ir::op::kSubtract, rows(first), rows(second));
    return AtenFromIr(ir::Convert(PNormOfLast(diff, p), type), x->device());
  });
}

}  // namespace torch_xla
