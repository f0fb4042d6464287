// max_unpool2d and max_unpool3d: a scatter of each value to its flat index in its plane.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ir/builder_indexing.h"
#include "ops/indexing_util.h"
#include "ops/kernel_util.h"
#include "ops/pooling_util.h"

namespace torch_xla {
namespace {

using ir::ScatterKind;
using ir::Shape;
using ir::Value;
using runtime::ElementType;
using namespace pooling_util;
using namespace indexing_util;

}  // namespace

// ---- max_unpool2d ----------------------------------------------------------------------------
// Each value goes to its flat index (h * W + w) in a zero [.., oH, oW] plane: a scatter
// along the flattened plane. Indices outside the plane are dropped (PyTorch raises; that
// would need the device data). Its gradient is a gather at the same indices, which
// autograd builds from lowered ops.
at::Tensor XLANativeFunctions::max_unpool2d(const at::Tensor& self, const at::Tensor& indices,
                                            at::IntArrayRef output_size) {
  XLA_COUNT("max_unpool2d");
  const char* op = "max_unpool2d";
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), "\"max_unpool2d\" not implemented for '",
                              self.scalar_type(), "'");
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": elements in indices should be type int64 but got: ",
              indices.scalar_type());
  TORCH_CHECK(output_size.size() == 2, op, ": There should be exactly two elements (height, width) in output_size, "
              "but got ", output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, op, ": Input to max_unpooling2d should be a 3d or 4d Tensor, but "
              "got a tensor with ", self.dim(), " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(), op, ": Expected shape of indices to be same as that of the input "
              "tensor (", self.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, op, ": Expected input to have non-zero size for non-batch dimensions, but got ",
                DescribeTensor(self));
  TORCH_CHECK(output_size[0] >= 0 && output_size[1] >= 0, op, ": output_size must be non-negative, got ",
              output_size);
  CheckIndexType(indices, op, false);
  int device = CommonDevice({&self, &indices}, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  return AtenFromIr(Checked(op, [&] {
                      int64_t planes = self.numel() / (self.size(-1) * self.size(-2));
                      int64_t in_plane = self.size(-1) * self.size(-2);
                      int64_t out_plane = output_size[0] * output_size[1];
                      Value values = ir::Reshape(x->GetIrValue(), {planes, in_plane});
                      Value idx = ir::Reshape(GetXlaTensor(indices, op)->GetIrValue(), {planes, in_plane});
                      Value zeros = ir::Constant(0, Shape(type, {planes, out_plane}));
                      Value out = ir::Scatter(ScatterKind::kReplace, zeros, Coordinates(idx, 1), values, {}, Range(0, 2),
                                              Range(0, 2), 2);
                      std::vector<int64_t> dims(self.sizes().begin(), self.sizes().end() - 2);
                      dims.insert(dims.end(), {output_size[0], output_size[1]});
                      return ir::Reshape(out, dims);
                    }),
                    device);
}

// ---- max_unpool3d ----------------------------------------------------------------------------

// Each value goes to its flat index (d*H + h)*W + w in a zero [.., oD, oH, oW] volume.
// Its gradient is a gather at the same indices, which autograd builds from lowered ops.
at::Tensor XLANativeFunctions::max_unpool3d(const at::Tensor& self, const at::Tensor& indices,
                                            at::IntArrayRef output_size, at::IntArrayRef stride,
                                            at::IntArrayRef padding) {
  XLA_COUNT("max_unpool3d");
  const char* op = "max_unpool3d";
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), "\"max_unpool3d\" not implemented for '",
                              self.scalar_type(), "'");
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": elements in indices should be type int64 but got: ",
              indices.scalar_type());
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, op, ": Input to max_unpooling3d should be a 4d or 5d Tensor, but "
              "got a tensor with ", self.dim(), " dimensions.");
  TORCH_CHECK(output_size.size() == 3, op, ": There should be exactly three elements (depth, height, width) in "
              "output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(stride.size() == 3 && padding.size() == 3, op, ": There should be exactly three elements in stride "
              "and padding, but got stride=", SizesString(stride), " and padding=", SizesString(padding));
  for (int64_t s : stride)
    TORCH_CHECK(s > 0, op, ": strides should be greater than zero, but got stride: ", SizesString(stride));
  TORCH_CHECK(self.sizes() == indices.sizes(), op, ": Expected shape of indices to be same as that of the input "
              "tensor (", self.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, op, ": Expected input to have non-zero size for non-batch dimensions, but got ",
                DescribeTensor(self));
  for (int64_t s : output_size)
    TORCH_CHECK(s >= 0, op, ": output_size must be non-negative, got ", SizesString(output_size));
  int device = CommonDevice({&self, &indices}, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  std::vector<int64_t> out = WithLastN(self.sizes().vec(), output_size.vec());
  return AtenFromIr(Checked(op, [&] {
                      return ScatterToPlanes(ir::ScatterKind::kReplace, x->GetIrValue(),
                                             GetXlaTensor(indices, op)->GetIrValue(), out, 3);
                    }),
                    device);
}

}  // namespace torch_xla
