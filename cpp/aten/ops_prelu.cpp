// PReLU's kernels. PyTorch's composite prelu reshapes the weight to broadcast against
// the input (one value, or one per channel) and calls these:
//   _prelu_kernel            x > 0 ? x : w * x
//   _prelu_kernel_backward   grad_input  = x > 0 ? g : w * g
//                            grad_weight = x > 0 ? 0 : x * g   (in the broadcast shape;
//                            autograd sums it down to the weight's shape)
// Low-precision inputs compute in f32 and round at the end.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;

// The type the kernels compute in: the operands' promoted type, which must be floating.
ElementType CheckedType(const char* op, const at::Tensor& self, const at::Tensor& weight) {
  at::ScalarType common = at::result_type(self, weight);
  TORCH_CHECK(at::isFloatingType(common), op, ": expected a floating point input and weight, got input ",
              DescribeTensor(self), " and weight ", DescribeTensor(weight));
  return ElementTypeOf(common);
}

Value Positive(const Value& x) { return ir::Compare(CompareDirection::kGt, x, ScalarLike(0, x)); }

}  // namespace

at::Tensor XLANativeFunctions::_prelu_kernel(const at::Tensor& self, const at::Tensor& weight) {
  XLA_COUNT("_prelu_kernel");
  const char* op = "prelu";
  ElementType type = CheckedType(op, self, weight);
  int device = CommonDevice({&self, &weight}, op);
  return AtenFromIr(Checked(op, [&] {
                      std::vector<Value> v = BroadcastOperands({&self, &weight}, AccumulationType(type), op);
                      const Value &x = v[0], &w = v[1];
                      return ir::Convert(ir::Select(Positive(x), x, Mul(w, x)), type);
                    }),
                    device);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::_prelu_kernel_backward(const at::Tensor& grad_output,
                                                                              const at::Tensor& self,
                                                                              const at::Tensor& weight) {
  XLA_COUNT("_prelu_kernel_backward");
  const char* op = "prelu_backward";
  ElementType type = CheckedType(op, self, weight);
  int device = CommonDevice({&grad_output, &self, &weight}, op);
  return Checked(op, [&] {
    std::vector<Value> v = BroadcastOperands({&grad_output, &self, &weight}, AccumulationType(type), op);
    const Value &g = v[0], &x = v[1], &w = v[2];
    Value positive = Positive(x);
    Value grad_input = ir::Select(positive, g, Mul(w, g));
    Value grad_weight = ir::Select(positive, ScalarLike(0, x), Mul(x, g));
    return std::make_tuple(AtenFromIr(ir::Convert(grad_input, ElementTypeOf(self.scalar_type())), device),
                           AtenFromIr(ir::Convert(grad_weight, ElementTypeOf(weight.scalar_type())), device));
  });
}

}  // namespace torch_xla
