// pixel_shuffle and pixel_unshuffle: a reshape, a transpose and a reshape, any dtype.
//   shuffle   [*, C r^2, H, W] -> [*, C, r, r, H, W] -> [*, C, H, r, W, r] -> [*, C, H r, W r]
//   unshuffle [*, C, H r, W r] -> [*, C, H, r, W, r] -> [*, C, r, r, H, W] -> [*, C r^2, H, W]
//   channel_shuffle [N, C, *] -> [N, g, C/g, *] -> [N, C/g, g, *] -> [N, C, *]
// Each shuffle is the other's gradient (channel_shuffle's is a channel_shuffle with C/g
// groups), so autograd needs no backward kernel.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::Value;

// The leading (batch) dims followed by `tail`.
std::vector<int64_t> WithTail(at::IntArrayRef sizes, std::initializer_list<int64_t> tail) {
  std::vector<int64_t> dims(sizes.begin(), sizes.end() - 3);
  dims.insert(dims.end(), tail);
  return dims;
}

// `v` (leading dims, then five) with its last five dims reordered by `last5`.
Value PermuteLastFive(const Value& v, std::initializer_list<int64_t> last5) {
  int64_t rank = v.shape().rank();
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank - 5; ++i) perm.push_back(i);
  for (int64_t d : last5) perm.push_back(rank - 5 + d);
  return ir::Transpose(v, perm);
}

}  // namespace

at::Tensor XLANativeFunctions::pixel_shuffle(const at::Tensor& self, int64_t upscale_factor) {
  XLA_COUNT("pixel_shuffle");
  TORCH_CHECK(self.dim() >= 3, "pixel_shuffle expects input to have at least 3 dimensions, but got input with ",
              self.dim(), " dimension(s) (input ", DescribeTensor(self), ")");
  TORCH_CHECK(upscale_factor > 0, "pixel_shuffle expects a positive upscale_factor, but got ", upscale_factor);
  const int64_t r = upscale_factor;
  const int64_t c = self.size(-3), h = self.size(-2), w = self.size(-1);
  TORCH_CHECK(c % (r * r) == 0, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
              "of upscale_factor, but input.size(-3)=", c, " is not divisible by ", r * r, " (input ",
              DescribeTensor(self), ")");
  IrInput in = GetIrInput(self, "pixel_shuffle");
  return AtenFromIr(Checked("pixel_shuffle", [&] {
                      Value split = ir::Reshape(in.v, WithTail(self.sizes(), {c / (r * r), r, r, h, w}));
                      Value v = PermuteLastFive(split, {0, 3, 1, 4, 2});
                      return ir::Reshape(v, WithTail(self.sizes(), {c / (r * r), h * r, w * r}));
                    }),
                    in.device);
}

at::Tensor XLANativeFunctions::pixel_unshuffle(const at::Tensor& self, int64_t downscale_factor) {
  XLA_COUNT("pixel_unshuffle");
  TORCH_CHECK(self.dim() >= 3, "pixel_unshuffle expects input to have at least 3 dimensions, but got input with ",
              self.dim(), " dimension(s) (input ", DescribeTensor(self), ")");
  TORCH_CHECK(downscale_factor > 0, "pixel_unshuffle expects a positive downscale_factor, but got ", downscale_factor);
  const int64_t r = downscale_factor;
  const int64_t c = self.size(-3), h = self.size(-2), w = self.size(-1);
  TORCH_CHECK(h % r == 0, "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=", h,
              " is not divisible by ", r, " (input ", DescribeTensor(self), ")");
  TORCH_CHECK(w % r == 0, "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=", w,
              " is not divisible by ", r, " (input ", DescribeTensor(self), ")");
  IrInput in = GetIrInput(self, "pixel_unshuffle");
  return AtenFromIr(Checked("pixel_unshuffle", [&] {
                      Value split = ir::Reshape(in.v, WithTail(self.sizes(), {c, h / r, r, w / r, r}));
                      Value v = PermuteLastFive(split, {0, 2, 4, 1, 3});
                      return ir::Reshape(v, WithTail(self.sizes(), {c * r * r, h / r, w / r}));
                    }),
                    in.device);
}

at::Tensor XLANativeFunctions::channel_shuffle(const at::Tensor& self, int64_t groups) {
  XLA_COUNT("channel_shuffle");
  const char* op = "channel_shuffle";
  TORCH_CHECK(self.dim() > 2, "channel_shuffle expects input with > 2 dims, but got input with sizes ", self.sizes());
  TORCH_CHECK(groups > 0, "Number of groups to divide channels in must be positive. Value of groups:", groups);
  const int64_t c = self.size(1);
  TORCH_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c, " channels and ", groups,
              " groups.");
  IrInput in = GetIrInput(self, op);
  return AtenFromIr(Checked(op, [&] {
                      std::vector<int64_t> split = {self.size(0), groups, c / groups};
                      split.insert(split.end(), self.sizes().begin() + 2, self.sizes().end());
                      std::vector<int64_t> perm = {0, 2, 1};
                      for (int64_t i = 3; i < static_cast<int64_t>(split.size()); ++i) perm.push_back(i);
                      return ir::Reshape(ir::Transpose(ir::Reshape(in.v, split), perm), self.sizes().vec());
                    }),
                    in.device);
}

}  // namespace torch_xla
