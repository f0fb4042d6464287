// flip, roll and rot90: reversals and rotations built from reverses, slices and
// concatenations (no gather needed).
#include <ATen/ATen.h>

#include <algorithm>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::Value;

}  // namespace

at::Tensor XLANativeFunctions::flip(const at::Tensor& self, at::IntArrayRef dims) {
  XLA_COUNT("flip");
  IrInput in = GetIrInput(self, "flip");
  int64_t rank = in.v.shape().rank();
  std::vector<bool> seen(std::max<int64_t>(rank, 1), false);
  std::vector<int64_t> ds;
  for (int64_t d : dims) {
    int64_t w = WrapDim(d, rank, "flip");
    TORCH_CHECK(!seen[w], "flip: dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
    if (rank > 0) ds.push_back(w);
  }
  return AtenFromIr(ir::Reverse(in.v, ds), in.device);
}

at::Tensor XLANativeFunctions::roll(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  XLA_COUNT("roll");
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  TORCH_CHECK(dims.empty() ? shifts.size() == 1 : shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ",
              shifts.size(), ", dims:", dims.size());
  IrInput in = GetIrInput(self, "roll");
  Value v = in.v;
  std::vector<int64_t> orig = v.shape().dims;
  std::vector<int64_t> ds(dims.begin(), dims.end());
  if (ds.empty()) {
    v = ir::Reshape(v, {v.shape().numel()});
    ds = {0};
  }
  for (std::size_t i = 0; i < ds.size(); ++i) {
    int64_t d = WrapDim(ds[i], v.shape().rank(), "roll");
    int64_t n = v.shape().dims[d];
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    v = ir::Concatenate({SliceDim(v, d, n - s, n), SliceDim(v, d, 0, n - s)}, d);
  }
  return AtenFromIr(ir::Reshape(v, orig), in.device);
}

at::Tensor XLANativeFunctions::rot90(const at::Tensor& self, int64_t k, at::IntArrayRef dims) {
  XLA_COUNT("rot90");
  int64_t rank = self.dim();
  TORCH_CHECK(dims.size() == 2, "expected total rotation dims == 2, but got dims = ", dims.size());
  TORCH_CHECK(rank >= 2, "expected total dims >= 2, but got total dims = ", rank);
  int64_t a = WrapDim(dims[0], rank, "rot90"), b = WrapDim(dims[1], rank, "rot90");
  TORCH_CHECK(a != b, "expected rotation dims to be different, but got dim0 = ", a, " and dim1 = ", b);
  IrInput in = GetIrInput(self, "rot90");
  k = ((k % 4) + 4) % 4;
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[a], perm[b]);
  Value v = in.v;
  if (k == 1) v = ir::Transpose(ir::Reverse(v, {b}), perm);
  if (k == 2) v = ir::Reverse(v, {a, b});
  if (k == 3) v = ir::Transpose(ir::Reverse(v, {a}), perm);
  return AtenFromIr(v, in.device);
}

}  // namespace torch_xla
