// Adaptive average and max pooling over the trailing two or three spatial dimensions of
// [N, C, *] (or [C, *]) inputs, and their backward formulas.
//   adaptive avg pool   separable [out, in] weight matrices built from iotas, applied
//                       along each dimension by a dot_general; the backward applies the
//                       transposes.
//   adaptive max pool   for each offset < the largest window, the element at
//                       start + offset of every window, gathered by one-hot selects
//                       dimension by dimension (ops/pooling_util.h), feeds a running
//                       argmax; the 2-D backward scatters back through the transposed
//                       selects, the 3-D one by a scatter-add at the indices.
// Low-precision floats accumulate in f32.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"
#include "ops/pooling_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;
using namespace pooling_util;

// ---------------------------------------------------------------------------------
// adaptive pooling and one-hot selection

// Row o averages inputs [floor(o*in/out), ceil((o+1)*in/out)).
Value AdaptiveMatrix(int64_t in, int64_t out, ElementType type) {
  std::vector<int64_t> md = {out, in};
  Value o = ir::Iota(ir::Shape(ElementType::kS64, md), 0);
  Value i = ir::Iota(ir::Shape(ElementType::kS64, md), 1);
  Value start = Div(Mul(o, S64(static_cast<double>(in), md)), S64(static_cast<double>(out), md));
  Value end = Div(Add(Mul(Add(o, S64(1, md)), S64(static_cast<double>(in), md)), S64(static_cast<double>(out - 1), md)),
                  S64(static_cast<double>(out), md));
  Value inside = ir::Binary(ir::op::kAnd, Cmp(CompareDirection::kGe, i, start), Cmp(CompareDirection::kLt, i, end));
  Value weight = Div(Full(1, type, md), ir::Convert(Sub(end, start), type));
  return ir::Select(inside, weight, Full(0, type, md));
}

// The transpose of SelectSum: g's dimension `dim` (size out) summed back onto in.
Value SelectSumTransposed(const Value& g, int64_t dim, const Value& mask) {
  return SelectSum(g, dim, ir::Transpose(mask, {1, 0}));
}

// Adaptive pooling windows of one dimension: [start, end) per output index.
struct AdaptiveDim {
  int64_t in, out, kmax;
  Value start, end;  // [out], s64
};

AdaptiveDim AdaptiveWindows(int64_t in, int64_t out) {
  AdaptiveDim a{in, out, 0, {}, {}};
  for (int64_t o = 0; o < out; ++o) {
    int64_t s = (o * in) / out, e = ((o + 1) * in + out - 1) / out;
    a.kmax = std::max(a.kmax, e - s);
  }
  std::vector<int64_t> n = {out};
  Value o = ir::Iota(ir::Shape(ElementType::kS64, n), 0);
  a.start = Div(Mul(o, S64(static_cast<double>(in), n)), S64(static_cast<double>(out), n));
  a.end = Div(Add(Mul(Add(o, S64(1, n)), S64(static_cast<double>(in), n)), S64(static_cast<double>(out - 1), n)),
              S64(static_cast<double>(out), n));
  return a;
}

// Position start + i of each window ([out], s64) and whether it lies inside the window.
std::pair<Value, Value> AdaptiveOffset(const AdaptiveDim& a, int64_t i) {
  std::vector<int64_t> n = {a.out};
  Value pos = Add(a.start, S64(static_cast<double>(i), n));
  return {pos, Cmp(CompareDirection::kLt, pos, a.end)};
}

// One-hot [out, in] mask of positions `pos` ([out]) where `valid`.
Value PositionMask(const Value& pos, const Value& valid, int64_t in) {
  int64_t out = pos.shape().dims[0];
  std::vector<int64_t> md = {out, in};
  Value col = ir::Iota(ir::Shape(ElementType::kS64, md), 1);
  Value hit = Cmp(CompareDirection::kEq, col, ir::BroadcastInDim(pos, md, {0}));
  return ir::Binary(ir::op::kAnd, hit, ir::BroadcastInDim(valid, md, {0}));
}

// ---------------------------------------------------------------------------------
// the kernels, for any spatial rank n

// The taps of adaptive pooling windows: windows[a][i] is offset i of every window of
// dimension a.
std::vector<std::vector<WindowTap>> AdaptiveTaps(const at::Tensor& self, at::IntArrayRef output_size, int64_t n,
                                                 std::vector<Value>* first) {
  int64_t r = self.dim();
  std::vector<std::vector<WindowTap>> windows(n);
  for (int64_t a = 0; a < n; ++a) {
    AdaptiveDim ad = AdaptiveWindows(self.size(r - n + a), output_size[a]);
    if (first) first->push_back(ad.start);
    for (int64_t i = 0; i < ad.kmax; ++i) {
      auto [pos, valid] = AdaptiveOffset(ad, i);
      windows[a].push_back({pos, valid, PositionMask(pos, valid, ad.in)});
    }
  }
  return windows;
}

// adaptive_avg_pool3d in bf16/f16 as PyTorch's CPU kernel computes it: the window's
// sum accumulated in the input's type, tap by tap, then divided by the window's extent
// along each dimension in turn, rounding after each operation (an f32 sum differs by
// up to a few bf16 ulps).
Value AdaptiveAvgPoolRounded(const at::Tensor& self, const Value& x, at::IntArrayRef output_size, int64_t n) {
  ElementType type = x.shape().type;
  const ElementType f = ElementType::kF32;
  auto rounded = [&](const Value& v) { return ir::Convert(ir::Convert(v, type), f); };
  std::vector<std::vector<WindowTap>> windows = AdaptiveTaps(self, output_size, n, nullptr);
  Value xf = ir::Convert(x, f);
  std::vector<int64_t> od = TapOutDims(xf, windows);
  Value zero = Full(0, f, od);
  Value sum = zero;
  ForEachTap(xf, windows, [&](const Value& v, const std::vector<const WindowTap*>& chosen) {
    sum = rounded(Add(sum, ir::Select(TapsValid(chosen, od), v, zero)));
  });
  int64_t r = self.dim();
  for (int64_t a = 0; a < n; ++a) {
    AdaptiveDim ad = AdaptiveWindows(self.size(r - n + a), output_size[a]);
    sum = rounded(Div(sum, AtDim(ir::Convert(Sub(ad.end, ad.start), f), od, r - n + a)));
  }
  return ir::Convert(sum, type);
}

at::Tensor AdaptiveAvgPool(const char* op, const at::Tensor& self, int64_t n, at::IntArrayRef output_size) {
  TORCH_CHECK(static_cast<int64_t>(output_size.size()) == n, op, ": output_size must be ", n, ", got ",
              SizesString(output_size));
  for (int64_t s : output_size)
    TORCH_CHECK(s >= 0, op, ": elements of output_size must be greater than or equal to 0 but received ",
                SizesString(output_size));
  CheckPoolInput(op, self, n);
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(self));
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  ElementType acc = AccumulationType(type);
  int64_t r = self.dim();
  return AtenFromIr(Checked(op, [&] {
                      if (n == 3 && acc != type) return AdaptiveAvgPoolRounded(self, x->GetIrValue(), output_size, n);
                      Value v = ir::Convert(x->GetIrValue(), acc);
                      // the last dimension first: its dot needs no transpose
                      for (int64_t a = n - 1; a >= 0; --a)
                        v = ApplyAlong(v, r - n + a, AdaptiveMatrix(self.size(r - n + a), output_size[a], acc), false);
                      return ir::Convert(v, type);
                    }),
                    x->device());
}

at::Tensor AdaptiveAvgPoolBackward(const char* op, const at::Tensor& grad_output, const at::Tensor& self, int64_t n) {
  CheckPoolInput(op, self, n);
  TORCH_CHECK(grad_output.dim() == self.dim(), op, ": expected grad_output of ", self.dim(), " dimensions, got ",
              DescribeTensor(grad_output), " for input ", DescribeTensor(self));
  for (int64_t i = 0; i < self.dim() - n; ++i)
    TORCH_CHECK(grad_output.size(i) == self.size(i), op, ": grad_output ", DescribeTensor(grad_output),
                " does not match input ", DescribeTensor(self), " outside the pooled dimensions");
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && at::isFloatingType(self.scalar_type()), op,
              ": expected floating point grad_output and input of the same dtype, got ", DescribeTensor(grad_output),
              " and ", DescribeTensor(self));
  int device = CommonDevice({&grad_output, &self}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  int64_t r = self.dim();
  return AtenFromIr(Checked(op, [&] {
                      Value v = dy;
                      for (int64_t a = n - 1; a >= 0; --a)
                        v = ApplyAlong(v, r - n + a, AdaptiveMatrix(self.size(r - n + a), grad_output.size(r - n + a), acc),
                                       true);
                      return ir::Convert(v, type);
                    }),
                    device);
}

std::tuple<at::Tensor, at::Tensor> AdaptiveMaxPool(const char* op, const at::Tensor& self, int64_t n,
                                                   at::IntArrayRef output_size) {
  TORCH_CHECK(static_cast<int64_t>(output_size.size()) == n, op, ": internal error: output_size.size() must be ", n,
              ", got ", SizesString(output_size));
  CheckPoolInput(op, self, n);
  for (int64_t s : output_size)
    TORCH_CHECK(s > 0, op, ": elements of output_size must be greater than 0, got ", SizesString(output_size));
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": \"", op, "\" not implemented for '",
              self.scalar_type(), "' (input ", DescribeTensor(self), ")");
  XlaTensorPtr x = GetXlaTensor(self, op);
  return Checked(op, [&] {
    std::vector<Value> first;
    std::vector<std::vector<WindowTap>> windows = AdaptiveTaps(self, output_size, n, &first);
    int64_t taps = 1;
    for (const auto& w : windows) taps *= static_cast<int64_t>(w.size());
    auto [best, best_index] = MaxOverTaps(x->GetIrValue(), windows, first);
    // computed once, not fused into (and recomputed by) each consumer of the indices
    if (taps > 1) best_index = ir::Materialize(best_index);
    return std::make_tuple(AtenFromIr(best, x->device()), AtenFromIr(best_index, x->device()));
  });
}

}  // namespace

// ---------------------------------------------------------------------------------
// 2-d and 3-d entry points

at::Tensor XLANativeFunctions::_adaptive_avg_pool2d(const at::Tensor& self, at::IntArrayRef output_size) {
  XLA_COUNT("_adaptive_avg_pool2d");
  return AdaptiveAvgPool("adaptive_avg_pool2d", self, 2, output_size);
}

at::Tensor XLANativeFunctions::_adaptive_avg_pool3d(const at::Tensor& self, at::IntArrayRef output_size) {
  XLA_COUNT("_adaptive_avg_pool3d");
  return AdaptiveAvgPool("adaptive_avg_pool3d", self, 3, output_size);
}

at::Tensor XLANativeFunctions::_adaptive_avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  XLA_COUNT("_adaptive_avg_pool2d_backward");
  return AdaptiveAvgPoolBackward("adaptive_avg_pool2d_backward", grad_output, self, 2);
}

at::Tensor XLANativeFunctions::_adaptive_avg_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  XLA_COUNT("_adaptive_avg_pool3d_backward");
  return AdaptiveAvgPoolBackward("adaptive_avg_pool3d_backward", grad_output, self, 3);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::adaptive_max_pool2d(const at::Tensor& self,
                                                                           at::IntArrayRef output_size) {
  XLA_COUNT("adaptive_max_pool2d");
  return AdaptiveMaxPool("adaptive_max_pool2d", self, 2, output_size);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::adaptive_max_pool3d(const at::Tensor& self,
                                                                           at::IntArrayRef output_size) {
  XLA_COUNT("adaptive_max_pool3d");
  return AdaptiveMaxPool("adaptive_max_pool3d", self, 3, output_size);
}

// The 2-d backward gathers back through the transposed one-hot selects (no scatter).
at::Tensor XLANativeFunctions::adaptive_max_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                            const at::Tensor& indices) {
  XLA_COUNT("adaptive_max_pool2d_backward");
  const char* op = "adaptive_max_pool2d_backward";
  CheckPoolInput(op, self, 2);
  TORCH_CHECK(grad_output.dim() == self.dim() && grad_output.sizes() == indices.sizes(), op,
              ": expected grad_output and indices of the same size with the input's rank, got grad_output ",
              DescribeTensor(grad_output), ", indices ", DescribeTensor(indices), " for input ", DescribeTensor(self));
  for (int64_t i = 0; i < self.dim() - 2; ++i)
    TORCH_CHECK(grad_output.size(i) == self.size(i), op, ": grad_output ", DescribeTensor(grad_output),
                " does not match input ", DescribeTensor(self), " outside the last two dimensions");
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": expected indices of dtype Long, got ", DescribeTensor(indices));
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && at::isFloatingType(self.scalar_type()), op,
              ": expected floating point grad_output and input of the same dtype, got ", DescribeTensor(grad_output),
              " and ", DescribeTensor(self));
  int device = CommonDevice({&grad_output, &self, &indices}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  int64_t r = self.dim();
  AdaptiveDim ah = AdaptiveWindows(self.size(-2), grad_output.size(-2));
  AdaptiveDim aw = AdaptiveWindows(self.size(-1), grad_output.size(-1));
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  Value idx = GetXlaTensor(indices, op)->GetIrValue();
  return AtenFromIr(Checked(op, [&] {
                      std::vector<int64_t> od = dy.shape().dims;
                      std::vector<int64_t> od2 = {ah.out, aw.out};
                      Value zero = Full(0, acc, od);
                      Value sum;
                      for (int64_t i = 0; i < ah.kmax; ++i) {
                        auto [hpos, hvalid] = AdaptiveOffset(ah, i);
                        Value row_sum;
                        for (int64_t j = 0; j < aw.kmax; ++j) {
                          auto [wpos, wvalid] = AdaptiveOffset(aw, j);
                          Value flat = Add(Mul(ir::BroadcastInDim(hpos, od2, {0}),
                                               Full(static_cast<double>(aw.in), ElementType::kS64, od2)),
                                           ir::BroadcastInDim(wpos, od2, {1}));
                          Value valid = ir::Binary(ir::op::kAnd, ir::BroadcastInDim(hvalid, od2, {0}),
                                                   ir::BroadcastInDim(wvalid, od2, {1}));
                          Value hit = ir::Binary(ir::op::kAnd, Cmp(CompareDirection::kEq, idx, ToLastN(flat, od)),
                                                 ToLastN(valid, od));
                          Value cols = SelectSumTransposed(ir::Select(hit, dy, zero), r - 1,
                                                           PositionMask(wpos, wvalid, aw.in));  // [.., oh, W]
                          row_sum = row_sum ? Add(row_sum, cols) : cols;
                        }
                        Value back = SelectSumTransposed(row_sum, r - 2, PositionMask(hpos, hvalid, ah.in));
                        sum = sum ? Add(sum, back) : back;
                      }
                      return ir::Convert(sum, type);
                    }),
                    device);
}

at::Tensor XLANativeFunctions::adaptive_max_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                            const at::Tensor& indices) {
  XLA_COUNT("adaptive_max_pool3d_backward");
  return ScatterAddBackward("adaptive_max_pool3d_backward", grad_output, self, 3, indices);
}

}  // namespace torch_xla
