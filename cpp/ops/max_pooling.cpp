// Max pooling with indices over the trailing two or three spatial dimensions of [N, C, *]
// (or [C, *]) inputs, and its backward; 1-D pooling reaches us as the 2-D ops. One
// generic implementation per op, parameterized by the spatial rank n, over the window
// geometry of ops/pooling_util.h.
//   forward    for each of the prod(k) window offsets, a strided slice of the padded
//              input ([.., o1, .., on]) feeds a running maximum and its flat index
//              (d*H + h)*W + w (first maximum wins, a NaN always wins, as in PyTorch's CPU
//              kernel).
//   backward   the gradient of each offset (masked by indices == that offset's index) is
//              scattered back and summed, phase by phase of the stride (ScatterWindows).
// On the CPU device, float32 and float64 max_pool and its backward run host kernels
// instead (host/max_pool_kernel.h). Low-precision floats accumulate in f32.
#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "XLANativeFunctions.h"
#include "ir/builder_pooling.h"
#include "ops/kernel_util.h"
#include "ops/pooling_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;
using namespace pooling_util;

// ---------------------------------------------------------------------------------
// max_pool windows

// The flat index ((p1 * i2 + p2) * i3 + p3 ..) of per-dimension positions ([o_a] each),
// shaped [o1, .., on].
Value FlatIndex(const std::vector<Value>& pos, const std::vector<int64_t>& in_sizes) {
  std::vector<int64_t> od;
  for (const Value& p : pos) od.push_back(p.shape().dims[0]);
  Value flat;
  for (int64_t a = 0; a < static_cast<int64_t>(pos.size()); ++a) {
    Value p = ir::BroadcastInDim(pos[a], od, {a});
    flat = flat ? Add(Mul(flat, S64(static_cast<double>(in_sizes[a]), od)), p) : p;
  }
  return flat;
}

std::vector<int64_t> InSizes(const PoolDims& g) {
  std::vector<int64_t> s;
  for (const PoolDim& d : g) s.push_back(d.in);
  return s;
}

// The flat index of window offset `off` for every output position, [o1, .., on].
Value OffsetIndex(const PoolDims& g, const std::vector<int64_t>& off) {
  std::vector<Value> pos;
  for (std::size_t a = 0; a < g.size(); ++a)
    pos.push_back(Add(WindowStart(g[a]), S64(static_cast<double>(off[a] * g[a].d), {g[a].out})));
  return FlatIndex(pos, InSizes(g));
}

// The flat index of the first in-bounds element of each window, [o1, .., on].
Value FirstValidIndex(const PoolDims& g) {
  std::vector<Value> first;
  for (const PoolDim& d : g) {
    std::vector<int64_t> n = {d.out};
    Value start = WindowStart(d);
    // start + d * ceil(max(0, -start) / d)
    Value before = ir::Binary(ir::op::kMaximum, ir::Unary(ir::op::kNegate, start), S64(0, n));
    Value steps = Div(Add(before, S64(static_cast<double>(d.d - 1), n)), S64(static_cast<double>(d.d), n));
    first.push_back(Add(start, Mul(steps, S64(static_cast<double>(d.d), n))));
  }
  return FlatIndex(first, InSizes(g));
}

double Lowest(ElementType t) {
  if (runtime::IsFloating(t)) return -std::numeric_limits<double>::infinity();
  if (runtime::IsUnsigned(t)) return 0;
  return -std::ldexp(1.0, static_cast<int>(runtime::ElementSize(t) * 8 - 1));
}

// ---------------------------------------------------------------------------------
// the kernels, for any spatial rank n

std::tuple<at::Tensor, at::Tensor> MaxPoolWithIndices(const char* op, const at::Tensor& self, int64_t n,
                                                      at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                      at::IntArrayRef padding, at::IntArrayRef dilation,
                                                      bool ceil_mode) {
  TORCH_CHECK(self.scalar_type() != at::kBool && !at::isComplexType(self.scalar_type()), op,
              ": unsupported input dtype, got ", DescribeTensor(self));
  PoolDims g = PoolGeometry(op, self, n, kernel_size, stride, padding, dilation, ceil_mode);
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  bool floating = runtime::IsFloating(type);
  std::vector<int64_t> kernel = KernelSizes(g);
  int64_t offsets = Product(kernel);
  return Checked(op, [&] {
    std::vector<int64_t> od = OutDims(x->shape().dims, g);
    if (offsets > 1 && ir::HostMaxPoolAvailable(type)) {
      std::vector<int64_t> stride, padding, dilation;
      for (const PoolDim& d : g) {
        stride.push_back(d.s);
        padding.push_back(d.p);
        dilation.push_back(d.d);
      }
      auto [best, best_index] = ir::HostMaxPool(x->GetIrValue(), OutSizes(g), kernel, stride, padding, dilation);
      return std::make_tuple(AtenFromIr(best, x->device()), AtenFromIr(best_index, x->device()));
    }
    Value padded = PadForWindows(x->GetIrValue(), g, Lowest(type));
    Value best = Full(Lowest(type), type, od);
    Value best_index = ToLastN(FirstValidIndex(g), od);
    for (int64_t f = 0; f < offsets; ++f) {
      std::vector<int64_t> off = Unflatten(f, kernel);
      Value v = WindowSlice(padded, g, off);
      Value take = Cmp(CompareDirection::kGt, v, best);
      if (floating) take = ir::Binary(ir::op::kOr, take, Cmp(CompareDirection::kNe, v, v));
      best = ir::Select(take, v, best);
      best_index = ir::Select(take, ToLastN(OffsetIndex(g, off), od), best_index);
    }
    // Otherwise XLA fuses the whole running-argmax chain into every consumer of the
    // indices and recomputes it once per use (prod(k) times in the backward).
    if (offsets > 1) best_index = ir::Materialize(best_index);
    return std::make_tuple(AtenFromIr(best, x->device()), AtenFromIr(best_index, x->device()));
  });
}

at::Tensor MaxPoolWithIndicesBackward(const char* op, const at::Tensor& grad_output, const at::Tensor& self, int64_t n,
                                      at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                                      at::IntArrayRef dilation, bool ceil_mode, const at::Tensor& indices) {
  PoolDims g = PoolGeometry(op, self, n, kernel_size, stride, padding, dilation, ceil_mode);
  std::vector<int64_t> od = OutDims(self.sizes().vec(), g);
  CheckPoolGrad(op, grad_output, self, od, &indices);
  int device = CommonDevice({&grad_output, &self, &indices}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  Value idx = GetXlaTensor(indices, op)->GetIrValue();
  if (ir::HostMaxPoolAvailable(type)) {
    Value grad = GetXlaTensor(grad_output, op)->GetIrValue();
    return AtenFromIr(Checked(op, [&] { return ir::HostMaxPoolBackward(grad, idx, self.sizes().vec(), n); }), device);
  }
  ElementType acc = AccumulationType(type);
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  std::vector<int64_t> kernel = KernelSizes(g);
  int64_t offsets = Product(kernel);
  return AtenFromIr(Checked(op, [&] {
                      // Read once per window position: computed once (XLA would fuse the
                      // gradient's computation, batch norm's backward say, into each).
                      if (offsets > 1) dy = ir::Materialize(dy);
                      Value zero = Full(0, acc, od);
                      std::vector<Value> contribs;
                      for (int64_t f = 0; f < offsets; ++f) {
                        Value hit = Cmp(CompareDirection::kEq, idx, ToLastN(OffsetIndex(g, Unflatten(f, kernel)), od));
                        contribs.push_back(ir::Select(hit, dy, zero));
                      }
                      return ir::Convert(ScatterWindows(contribs, g, self.sizes().vec()), type);
                    }),
                    device);
}

}  // namespace

// ---------------------------------------------------------------------------------
// 2-d and 3-d entry points

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::max_pool2d_with_indices(const at::Tensor& self,
                                                                               at::IntArrayRef kernel_size,
                                                                               at::IntArrayRef stride,
                                                                               at::IntArrayRef padding,
                                                                               at::IntArrayRef dilation,
                                                                               bool ceil_mode) {
  XLA_COUNT("max_pool2d_with_indices");
  return MaxPoolWithIndices("max_pool2d", self, 2, kernel_size, stride, padding, dilation, ceil_mode);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::max_pool3d_with_indices(const at::Tensor& self,
                                                                               at::IntArrayRef kernel_size,
                                                                               at::IntArrayRef stride,
                                                                               at::IntArrayRef padding,
                                                                               at::IntArrayRef dilation,
                                                                               bool ceil_mode) {
  XLA_COUNT("max_pool3d_with_indices");
  return MaxPoolWithIndices("max_pool3d", self, 3, kernel_size, stride, padding, dilation, ceil_mode);
}

at::Tensor XLANativeFunctions::max_pool2d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                                at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                                at::IntArrayRef padding, at::IntArrayRef dilation,
                                                                bool ceil_mode, const at::Tensor& indices) {
  XLA_COUNT("max_pool2d_with_indices_backward");
  return MaxPoolWithIndicesBackward("max_pool2d_with_indices_backward", grad_output, self, 2, kernel_size, stride,
                                    padding, dilation, ceil_mode, indices);
}

at::Tensor XLANativeFunctions::max_pool3d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                                at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                                at::IntArrayRef padding, at::IntArrayRef dilation,
                                                                bool ceil_mode, const at::Tensor& indices) {
  XLA_COUNT("max_pool3d_with_indices_backward");
  return MaxPoolWithIndicesBackward("max_pool3d_with_indices_backward", grad_output, self, 3, kernel_size, stride,
                                    padding, dilation, ceil_mode, indices);
}

}  // namespace torch_xla
