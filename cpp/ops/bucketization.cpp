// searchsorted and bucketize: the insertion position of each value in a sorted sequence,
// counted instead of searched: the number of sequence elements below the value (< for
// the left side, <= for the right side). A [*, B] boundaries tensor is compared with
// each value of the matching [*, V] row; a 1-D one with every value. The comparison is
// O(values x boundaries), which suits the sequences these ops see in models (bucket
// boundaries, a few hundred at most).
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;

// The count for every element of `values` of the `boundaries` elements below it.
Value InsertionPositions(const Value& boundaries, const Value& values, bool right, ElementType out_type) {
  const auto& b = boundaries.shape().dims;
  const auto& v = values.shape().dims;
  // [*, V, B]: each value against each boundary of its row
  std::vector<int64_t> pairs = v;
  pairs.push_back(b.back());
  int64_t r = static_cast<int64_t>(v.size());
  std::vector<int64_t> value_dims, boundary_dims;
  for (int64_t i = 0; i < r; ++i) value_dims.push_back(i);
  if (b.size() == 1) {
    boundary_dims = {r};
  } else {
    for (int64_t i = 0; i + 1 < r; ++i) boundary_dims.push_back(i);
    boundary_dims.push_back(r);
  }
  Value vb = ir::BroadcastInDim(values, pairs, value_dims);
  Value bb = ir::BroadcastInDim(boundaries, pairs, boundary_dims);
  Value below = ir::Compare(right ? CompareDirection::kLe : CompareDirection::kLt, bb, vb);
  Value ones = ir::Convert(below, out_type);
  return ir::Reduce(ir::ReduceKind::kSum, ones, {r});
}

at::Tensor Search(const char* op, const at::Tensor& boundaries, const at::Tensor& values, bool out_int32,
                  bool right) {
  TORCH_CHECK(boundaries.dim() >= 1, op, ": boundaries tensor should have positive dimension, but got 0 dimension");
  bool one_d = boundaries.dim() == 1;
  bool rows_match = boundaries.dim() == values.dim() &&
                    boundaries.sizes().slice(0, boundaries.dim() - 1) == values.sizes().slice(0, values.dim() - 1);
  TORCH_CHECK(one_d || rows_match, op, ": boundaries tensor should be 1 dimension or the first N-1 dimensions of "
              "boundaries tensor and input value tensor must match, but we got boundaries tensor ", boundaries.sizes(),
              " and input value tensor ", values.sizes());
  TORCH_CHECK(boundaries.scalar_type() != at::kBool && values.scalar_type() != at::kBool &&
                  !at::isComplexType(boundaries.scalar_type()) && !at::isComplexType(values.scalar_type()),
              op, ": expected real, non-boolean boundaries and values, got boundaries ", DescribeTensor(boundaries),
              " and values ", DescribeTensor(values));
  ElementType common = ElementTypeOf(at::result_type(boundaries, values));
  ElementType out_type = out_int32 ? ElementType::kS32 : ElementType::kS64;
  int device = CommonDevice({&boundaries, &values}, op);
  return AtenFromIr(Checked(op, [&] {
                      Value b = IrOperand(boundaries, common, op);
                      Value v = IrOperand(values, common, op);
                      if (values.numel() == 0 || boundaries.size(-1) == 0)
                        return ir::Constant(0, ir::Shape(out_type, v.shape().dims));
                      if (v.shape().rank() == 0) {
                        // a 0-dim value searches a 1-D sequence
                        return ir::Reshape(InsertionPositions(b, ir::Reshape(v, {1}), right, out_type), {});
                      }
                      return InsertionPositions(b, v, right, out_type);
                    }),
                    device);
}

}  // namespace

at::Tensor XLANativeFunctions::searchsorted(const at::Tensor& sorted_sequence, const at::Tensor& self, bool out_int32,
                                            bool right, std::optional<c10::string_view> side,
                                            const std::optional<at::Tensor>& sorter) {
  XLA_COUNT("searchsorted");
  const char* op = "torch.searchsorted()";
  if (side) {
    TORCH_CHECK(*side == "left" || *side == "right", op, ": side can only be 'left' or 'right' but got ",
                std::string(*side));
    TORCH_CHECK(!right || *side == "right", op, ": side and right can't be set to opposites, got side of ",
                std::string(*side), " while right was True");
    right = *side == "right";
  }
  if (sorter.has_value() && sorter->defined()) {
    TORCH_CHECK(sorter->scalar_type() == at::kLong, op, ": sorter must be a tensor of long dtype but got dtype ",
                sorter->scalar_type());
    TORCH_CHECK(sorter->sizes() == sorted_sequence.sizes(), op, ": boundary and sorter must have the same size, but "
                "got boundary tensor ", sorted_sequence.sizes(), " and got sorter tensor ", sorter->sizes());
    // the sequence in sorted order, gathered on the device
    return Search(op, gather(sorted_sequence, -1, *sorter, false), self, out_int32, right);
  }
  return Search(op, sorted_sequence, self, out_int32, right);
}

at::Tensor XLANativeFunctions::bucketize(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                                         bool right) {
  XLA_COUNT("bucketize");
  const char* op = "torch.bucketize()";
  TORCH_CHECK(boundaries.dim() == 1, op, ": boundaries tensor must be 1 dimension, but got dim(",
              boundaries.dim(), ")");
  return Search(op, boundaries, self, out_int32, right);
}

}  // namespace torch_xla
