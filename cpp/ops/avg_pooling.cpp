// Average pooling over the trailing two or three spatial dimensions of [N, C, *] (or
// [C, *]) inputs, and its backward; 1-D pooling reaches us as the 2-D ops. For each of the
// prod(k) window offsets, a strided slice of the padded input ([.., o1, .., on]) is
// summed; the backward scatters each offset's share of the gradient back and sums them,
// phase by phase of the stride (ScatterWindows, ops/pooling_util.h). Low-precision
// floats accumulate in f32.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"
#include "ops/pooling_util.h"

namespace torch_xla {
namespace {

using ir::Value;
using runtime::ElementType;
using namespace pooling_util;

// ---------------------------------------------------------------------------------
// avg_pool windows

// avg_pool's divisor per output position, [o1, .., on] in `type`.
Value AvgDivisor(const PoolDims& g, bool count_include_pad, std::optional<int64_t> divisor_override,
                 ElementType type) {
  std::vector<int64_t> od = OutSizes(g);
  if (divisor_override) return Full(static_cast<double>(*divisor_override), type, od);
  Value prod;
  for (int64_t a = 0; a < static_cast<int64_t>(g.size()); ++a) {
    const PoolDim& d = g[a];
    std::vector<int64_t> n = {d.out};
    Value start = WindowStart(d);
    Value end = ir::Binary(ir::op::kMinimum, Add(start, S64(static_cast<double>(d.k), n)),
                           S64(static_cast<double>(d.in + d.p), n));
    Value count;
    if (count_include_pad) {
      count = Sub(end, start);
    } else {
      Value s = ir::Binary(ir::op::kMaximum, start, S64(0, n));
      Value e = ir::Binary(ir::op::kMinimum, end, S64(static_cast<double>(d.in), n));
      count = Sub(e, s);
    }
    Value c = ir::BroadcastInDim(count, od, {a});
    prod = prod ? Mul(prod, c) : c;
  }
  return ir::Convert(prod, type);
}

void CheckAvgArgs(const char* op, std::optional<int64_t> divisor_override) {
  TORCH_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor must be not zero");
}

// ---------------------------------------------------------------------------------
// the kernels, for any spatial rank n

at::Tensor AvgPool(const char* op, const at::Tensor& self, int64_t n, at::IntArrayRef kernel_size,
                   at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                   std::optional<int64_t> divisor_override) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kLong, op, ": \"", op,
              "\" not implemented for '", self.scalar_type(), "' (input ", DescribeTensor(self), ")");
  CheckAvgArgs(op, divisor_override);
  PoolDims g = PoolGeometry(op, self, n, kernel_size, stride, padding, {1}, ceil_mode);
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  ElementType acc = runtime::IsFloating(type) ? AccumulationType(type) : ElementType::kS64;
  std::vector<int64_t> kernel = KernelSizes(g);
  return AtenFromIr(Checked(op, [&] {
                      std::vector<int64_t> od = OutDims(x->shape().dims, g);
                      Value padded = PadForWindows(ir::Convert(x->GetIrValue(), acc), g, 0);
                      Value sum = Full(0, acc, od);
                      for (int64_t f = 0; f < Product(kernel); ++f)
                        sum = Add(sum, WindowSlice(padded, g, Unflatten(f, kernel)));
                      Value div = ToLastN(AvgDivisor(g, count_include_pad, divisor_override, acc), od);
                      return ir::Convert(Div(sum, div), type);
                    }),
                    x->device());
}

at::Tensor AvgPoolBackward(const char* op, const at::Tensor& grad_output, const at::Tensor& self, int64_t n,
                           at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                           bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  CheckAvgArgs(op, divisor_override);
  PoolDims g = PoolGeometry(op, self, n, kernel_size, stride, padding, {1}, ceil_mode);
  std::vector<int64_t> od = OutDims(self.sizes().vec(), g);
  CheckPoolGrad(op, grad_output, self, od, nullptr);
  int device = CommonDevice({&grad_output, &self}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  return AtenFromIr(Checked(op, [&] {
                      Value scaled = Div(dy, ToLastN(AvgDivisor(g, count_include_pad, divisor_override, acc), od));
                      std::vector<Value> contribs(Product(KernelSizes(g)), scaled);
                      return ir::Convert(ScatterWindows(contribs, g, self.sizes().vec()), type);
                    }),
                    device);
}

}  // namespace

// ---------------------------------------------------------------------------------
// 2-d and 3-d entry points

at::Tensor XLANativeFunctions::avg_pool2d(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                          at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                          std::optional<int64_t> divisor_override) {
  XLA_COUNT("avg_pool2d");
  return AvgPool("avg_pool2d", self, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}

at::Tensor XLANativeFunctions::avg_pool3d(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                          at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                          std::optional<int64_t> divisor_override) {
  XLA_COUNT("avg_pool3d");
  return AvgPool("avg_pool3d", self, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}

at::Tensor XLANativeFunctions::avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                   at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                   at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                                   std::optional<int64_t> divisor_override) {
  XLA_COUNT("avg_pool2d_backward");
  return AvgPoolBackward("avg_pool2d_backward", grad_output, self, 2, kernel_size, stride, padding, ceil_mode,
                         count_include_pad, divisor_override);
}

at::Tensor XLANativeFunctions::avg_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                   at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                   at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                                   std::optional<int64_t> divisor_override) {
  XLA_COUNT("avg_pool3d_backward");
  return AvgPoolBackward("avg_pool3d_backward", grad_output, self, 3, kernel_size, stride, padding, ceil_mode,
                         count_include_pad, divisor_override);
}

}  // namespace torch_xla
