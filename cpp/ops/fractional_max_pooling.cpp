// Fractional max pooling over the trailing two or three spatial dimensions of [N, C, *]
// (or [C, *]) inputs: windows of a fixed size starting at positions drawn from the
// `random_samples` operand (per plane), gathered by one-hot selects like adaptive max
// pool (ops/pooling_util.h); the backward is a scatter-add at the indices. Low-precision
// floats accumulate in f32.
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
// the kernels, for any spatial rank n

// fractional_max_pool{2,3}d: the windows of dimension a start at PyTorch's
// generate_intervals of the plane's sample u (computed in the input's type, as PyTorch
// does): start[o] = int((o + u) * alpha) - int(u * alpha) with
// alpha = (in - k) / (out - 1), and in - k for the last o. The samples of a plane list
// the dimensions in the order `sample_of` gives.
std::tuple<at::Tensor, at::Tensor> FractionalMaxPool(const char* op, const at::Tensor& self, int64_t n,
                                                     at::IntArrayRef kernel_size, at::IntArrayRef output_size,
                                                     const at::Tensor& random_samples,
                                                     const std::vector<int64_t>& sample_of) {
  TORCH_CHECK(static_cast<int64_t>(kernel_size.size()) == n && static_cast<int64_t>(output_size.size()) == n, op,
              ": expected ", n, " kernel sizes and output sizes, got kernel_size=", SizesString(kernel_size),
              " and output_size=", SizesString(output_size));
  CheckPoolInput(op, self, n);
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": \"", op, "\" not implemented for '",
              self.scalar_type(), "' (input ", DescribeTensor(self), ")");
  int64_t r = self.dim();
  std::vector<int64_t> lead(self.sizes().begin(), self.sizes().end() - n);
  int64_t planes = Product(lead);
  for (int64_t a = 0; a < n; ++a) {
    int64_t in = self.size(r - n + a);
    TORCH_CHECK(kernel_size[a] > 0 && output_size[a] > 0 && output_size[a] + kernel_size[a] - 1 <= in, op,
                ": out(", output_size[a], ") + pool(", kernel_size[a], ") - 1 must be at most the input size ", in,
                " of dimension ", r - n + a, " (input ", DescribeTensor(self), ")");
  }
  TORCH_CHECK(random_samples.numel() == planes * n && random_samples.scalar_type() == self.scalar_type(), op,
              ": expected random_samples of ", planes * n, " elements (", n, " per plane) of the input's dtype, got ",
              DescribeTensor(random_samples), " for input ", DescribeTensor(self));
  int device = CommonDevice({&self, &random_samples}, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  const ElementType f = ElementType::kF32;
  // f32 arithmetic rounded to the input's type after each operation, as scalar_t does
  auto rounded = [&](const Value& v) { return ir::Convert(ir::Convert(v, type), f); };
  return Checked(op, [&] {
    std::vector<int64_t> with_n = lead;
    with_n.push_back(n);
    Value samples = rounded(ir::Convert(ir::Reshape(GetXlaTensor(random_samples, op)->GetIrValue(), with_n), f));
    std::vector<std::vector<WindowTap>> windows(n);
    std::vector<Value> first;
    int64_t l = static_cast<int64_t>(lead.size());
    for (int64_t a = 0; a < n; ++a) {
      int64_t in = self.size(r - n + a), out = output_size[a], k = kernel_size[a];
      std::vector<int64_t> od = lead, md = lead;
      od.push_back(out);
      md.insert(md.end(), {out, in});
      std::vector<int64_t> start_idx(l + 1, 0), limit = with_n, strides(l + 1, 1);
      start_idx[l] = sample_of[a];
      limit[l] = sample_of[a] + 1;
      Value u = ir::Reshape(ir::Slice(samples, start_idx, limit, strides), lead);
      Value ub = ir::BroadcastInDim(u, od, [&] {
        std::vector<int64_t> d;
        for (int64_t i = 0; i < l; ++i) d.push_back(i);
        return d;
      }());
      Value o = ir::Iota(ir::Shape(ElementType::kS64, od), l);
      Value start;
      if (out > 1) {
        float alpha = static_cast<float>(in - k) / static_cast<float>(out - 1);
        Value al = rounded(Full(alpha, f, od));
        Value hi = ir::Convert(rounded(Mul(rounded(Add(ir::Convert(o, f), ub)), al)), ElementType::kS64);
        Value lo = ir::Convert(rounded(Mul(ub, al)), ElementType::kS64);
        start = ir::Select(Cmp(CompareDirection::kLt, o, S64(static_cast<double>(out - 1), od)), Sub(hi, lo),
                           S64(static_cast<double>(in - k), od));
      } else {
        start = S64(static_cast<double>(in - k), od);
      }
      first.push_back(start);
      Value col = ir::Iota(ir::Shape(ElementType::kS64, md), l + 1);
      std::vector<int64_t> to_md;
      for (int64_t i = 0; i <= l; ++i) to_md.push_back(i);
      Value all = ir::Constant(1, ir::Shape(ElementType::kPred, od));
      for (int64_t i = 0; i < k; ++i) {
        Value pos = Add(start, S64(static_cast<double>(i), od));
        windows[a].push_back({pos, all, Cmp(CompareDirection::kEq, col, ir::BroadcastInDim(pos, md, to_md))});
      }
    }
    auto [best, best_index] = MaxOverTaps(x->GetIrValue(), windows, first);
    if (Product(std::vector<int64_t>(kernel_size.begin(), kernel_size.end())) > 1)
      best_index = ir::Materialize(best_index);
    return std::make_tuple(AtenFromIr(best, device), AtenFromIr(best_index, device));
  });
}

}  // namespace

// ---------------------------------------------------------------------------------
// 2-d and 3-d entry points

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::fractional_max_pool2d(const at::Tensor& self,
                                                                             at::IntArrayRef kernel_size,
                                                                             at::IntArrayRef output_size,
                                                                             const at::Tensor& random_samples) {
  XLA_COUNT("fractional_max_pool2d");
  // a plane's samples are (w, h)
  return FractionalMaxPool("fractional_max_pool2d", self, 2, kernel_size, output_size, random_samples, {1, 0});
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::fractional_max_pool3d(const at::Tensor& self,
                                                                             at::IntArrayRef kernel_size,
                                                                             at::IntArrayRef output_size,
                                                                             const at::Tensor& random_samples) {
  XLA_COUNT("fractional_max_pool3d");
  // a plane's samples are (t, h, w)
  return FractionalMaxPool("fractional_max_pool3d", self, 3, kernel_size, output_size, random_samples, {0, 1, 2});
}

at::Tensor XLANativeFunctions::fractional_max_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                              at::IntArrayRef kernel_size,
                                                              at::IntArrayRef output_size,
                                                              const at::Tensor& indices) {
  XLA_COUNT("fractional_max_pool2d_backward");
  return ScatterAddBackward("fractional_max_pool2d_backward", grad_output, self, 2, indices);
}

at::Tensor XLANativeFunctions::fractional_max_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                              at::IntArrayRef kernel_size,
                                                              at::IntArrayRef output_size,
                                                              const at::Tensor& indices) {
  XLA_COUNT("fractional_max_pool3d_backward");
  return ScatterAddBackward("fractional_max_pool3d_backward", grad_output, self, 3, indices);
}

}  // namespace torch_xla
