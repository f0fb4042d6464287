// linalg_cross: the cross product of 3-vectors along `dim`, after broadcasting.
//   c0 = a1 b2 - a2 b1,  c1 = a2 b0 - a0 b2,  c2 = a0 b1 - a1 b0
// Any numeric dtype. Its gradients are cross products too, so autograd needs no
// backward kernel.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"

namespace torch_xla {
namespace {

using ir::Value;

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
