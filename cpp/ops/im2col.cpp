// im2col / col2im (unfold / fold) with the window offsets of pooling (ops/pooling_util.h):
// im2col stacks each offset's strided slice of the padded input as rows
// c*kH*kW + i*kW + j; col2im scatters them back and sums (ScatterWindows). Each is the
// other's gradient.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"
#include "ops/pooling_util.h"

namespace torch_xla {
namespace {

using ir::Value;
using runtime::ElementType;
using namespace pooling_util;

// The sliding-block geometry of unfold/fold over an [H, W] image, with PyTorch's checks.
PoolDims BlockGeometry(const char* op, int64_t height, int64_t width, at::IntArrayRef kernel_size,
                                     at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  for (auto [name, v] : {std::pair<const char*, at::IntArrayRef>{"kernel_size", kernel_size}, {"dilation", dilation},
                         {"padding", padding}, {"stride", stride}})
    TORCH_CHECK(v.size() == 2, op, ": It is expected ", name, " equals to 2, but got size ", v.size());
  TORCH_CHECK(kernel_size[0] > 0 && kernel_size[1] > 0, op,
              ": kernel size should be greater than zero, but got kernel_size=", SizesString(kernel_size));
  TORCH_CHECK(dilation[0] > 0 && dilation[1] > 0, op, ": dilation should be greater than zero, but got dilation=",
              SizesString(dilation));
  TORCH_CHECK(padding[0] >= 0 && padding[1] >= 0, op, ": padding should be non-negative, but got padding=",
              SizesString(padding));
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0, op, ": stride should be greater than zero, but got stride=",
              SizesString(stride));
  PoolDims g(2);
  int64_t size[2] = {height, width};
  for (int64_t a = 0; a < 2; ++a) {
    PoolDim& d = g[a];
    d = PoolDim{size[a], kernel_size[a], stride[a], padding[a], dilation[a], 0};
    int64_t span = d.in + 2 * d.p - (d.d * (d.k - 1) + 1);
    d.out = span >= 0 ? span / d.s + 1 : 0;
  }
  TORCH_CHECK(g[0].out >= 1 && g[1].out >= 1, op, ": Given input with spatial size (", height, ", ", width,
              "), kernel_size=", SizesString(kernel_size), ", dilation=", SizesString(dilation), ", padding=",
              SizesString(padding), ", calculated shape of the array of sliding blocks as (", g[0].out, ", ",
              g[1].out, "), but its components must be at least one.");
  return g;
}

}  // namespace

at::Tensor XLANativeFunctions::im2col(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef dilation,
                                      at::IntArrayRef padding, at::IntArrayRef stride) {
  XLA_COUNT("im2col");
  const char* op = "im2col";
  // as in eager, a 4-D input may have an empty batch
  TORCH_CHECK((self.dim() == 3 || self.dim() == 4) && self.size(-1) > 0 && self.size(-2) > 0 && self.size(-3) > 0,
              op, ": Expected non-empty 3D or 4D input tensor, but got ", DescribeTensor(self));
  // PyTorch's CPU kernel takes floating types and bool only
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kBool,
                              "\"im2col\" not implemented for '", self.scalar_type(), "'");
  auto g = BlockGeometry(op, self.size(-2), self.size(-1), kernel_size, dilation, padding, stride);
  XlaTensorPtr x = GetXlaTensor(self, op);
  return AtenFromIr(Checked(op, [&] {
                      if (self.numel() == 0) {  // the empty result, without slicing an empty array
                        std::vector<int64_t> cols = {self.size(0), self.size(1) * g[0].k * g[1].k,
                                                     g[0].out * g[1].out};
                        return Full(0, x->shape().type, cols);
                      }
                      std::vector<int64_t> dims = x->shape().dims;
                      int64_t r = static_cast<int64_t>(dims.size());
                      Value padded = PadForWindows(x->GetIrValue(), g, 0);
                      // each offset's [.., C, oh, ow] slice becomes [.., C, 1, oh, ow]
                      std::vector<int64_t> one_offset(dims.begin(), dims.end() - 2);
                      one_offset.insert(one_offset.end(), {1, g[0].out, g[1].out});
                      std::vector<Value> offsets;
                      for (int64_t i = 0; i < g[0].k; ++i)
                        for (int64_t j = 0; j < g[1].k; ++j)
                          offsets.push_back(ir::Reshape(WindowSlice(padded, g, {i, j}), one_offset));
                      std::vector<int64_t> cols(dims.begin(), dims.end() - 3);
                      cols.insert(cols.end(), {dims[r - 3] * g[0].k * g[1].k, g[0].out * g[1].out});
                      return ir::Reshape(ir::Concatenate(offsets, r - 2), cols);
                    }),
                    x->device());
}

at::Tensor XLANativeFunctions::col2im(const at::Tensor& self, at::IntArrayRef output_size,
                                      at::IntArrayRef kernel_size, at::IntArrayRef dilation, at::IntArrayRef padding,
                                      at::IntArrayRef stride) {
  XLA_COUNT("col2im");
  const char* op = "col2im";
  TORCH_CHECK(output_size.size() == 2, op, ": It is expected output_size equals to 2, but got size ",
              output_size.size());
  TORCH_CHECK(output_size[0] > 0 && output_size[1] > 0, op,
              ": output_size should be greater than zero, but got output_size=", SizesString(output_size));
  // as in eager, a 3-D input may have an empty batch
  TORCH_CHECK((self.dim() == 2 || self.dim() == 3) && self.size(-1) > 0 && self.size(-2) > 0, op,
              ": Expected non-empty 2D or 3D input tensor, but got ", DescribeTensor(self));
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kBool,
                              "\"col2im\" not implemented for '", self.scalar_type(), "'");
  auto g = BlockGeometry(op, output_size[0], output_size[1], kernel_size, dilation, padding, stride);
  int64_t blocks = g[0].k * g[1].k;
  TORCH_CHECK(self.size(-2) % blocks == 0, op, ": Expected size of input's dimension ", self.dim() - 2,
              " to be divisible by the product of kernel_size, but got input.size(", self.dim() - 2, ")=",
              self.size(-2), " and kernel_size=", SizesString(kernel_size));
  TORCH_CHECK(self.size(-1) == g[0].out * g[1].out, op, ": Given output_size=", SizesString(output_size),
              ", kernel_size=", SizesString(kernel_size), ", dilation=", SizesString(dilation), ", padding=",
              SizesString(padding), ", stride=", SizesString(stride), ", expected size of input's dimension ",
              self.dim() - 1, " to match the calculated number of sliding blocks ", g[0].out, " * ", g[1].out, " = ",
              g[0].out * g[1].out, ", but got input.size(", self.dim() - 1, ")=", self.size(-1));
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  // bool blocks sum as integers: an element is true where any block holding it is
  ElementType acc = type == ElementType::kPred ? ElementType::kS32 : AccumulationType(type);
  return AtenFromIr(Checked(op, [&] {
                      std::vector<int64_t> lead(self.sizes().begin(), self.sizes().end() - 2);
                      int64_t channels = self.size(-2) / blocks;
                      if (self.numel() == 0) {  // the empty result, without slicing an empty array
                        std::vector<int64_t> image = lead;
                        image.insert(image.end(), {channels, output_size[0], output_size[1]});
                        return ir::Constant(0, ir::Shape(type, image));
                      }
                      // [.., C, kH, kW, oh, ow]: offset (i, j) is a [.., C, oh, ow] slice
                      std::vector<int64_t> split = lead;
                      split.insert(split.end(), {channels, g[0].k, g[1].k, g[0].out, g[1].out});
                      Value cols = ir::Reshape(ir::Convert(x->GetIrValue(), acc), split);
                      int64_t r = static_cast<int64_t>(split.size());
                      std::vector<int64_t> offset_dims = lead;
                      offset_dims.insert(offset_dims.end(), {channels, g[0].out, g[1].out});
                      std::vector<Value> contribs;
                      for (int64_t i = 0; i < g[0].k; ++i) {
                        for (int64_t j = 0; j < g[1].k; ++j) {
                          std::vector<int64_t> start(r, 0), limit = split, strides(r, 1);
                          start[r - 4] = i;
                          limit[r - 4] = i + 1;
                          start[r - 3] = j;
                          limit[r - 3] = j + 1;
                          contribs.push_back(ir::Reshape(ir::Slice(cols, start, limit, strides), offset_dims));
                        }
                      }
                      std::vector<int64_t> image = lead;
                      image.insert(image.end(), {channels, output_size[0], output_size[1]});
                      return ir::Convert(ScatterWindows(contribs, g, image), type);
                    }),
                    x->device());
}

}  // namespace torch_xla
