// embedding_dense_backward: the gradient rows scatter-added at their indices (XLA drops
// out-of-range indices; padding_idx rows get none). embedding_bag's backward with
// sparse=True gives the dense gradient.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "XLANativeFunctions.h"
#include "ir/builder_indexing.h"
#include "ops/indexing_util.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::ScatterKind;
using ir::Shape;
using ir::Value;
using runtime::ElementType;
using namespace indexing_util;

}  // namespace

// ---- embedding backward ---------------------------------------------------------------
at::Tensor XLANativeFunctions::embedding_dense_backward(const at::Tensor& grad_output, const at::Tensor& indices,
                                                        int64_t num_weights, int64_t padding_idx,
                                                        bool scale_grad_by_freq) {
  XLA_COUNT("embedding_dense_backward");
  const char* op = "embedding_dense_backward";
  CheckIndexType(indices, op, true);
  TORCH_CHECK(grad_output.dim() >= 1 && grad_output.dim() == indices.dim() + 1, op, ": grad_output ",
              DescribeTensor(grad_output), " does not match indices ", DescribeTensor(indices));
  for (int64_t i = 0; i < indices.dim(); ++i)
    TORCH_CHECK(grad_output.size(i) == indices.size(i), op, ": grad_output ", DescribeTensor(grad_output),
                " does not match indices ", DescribeTensor(indices));
  TORCH_CHECK(num_weights >= 0, op, ": num_weights must be non-negative, got ", num_weights);
  XlaTensorPtr g = GetXlaTensor(grad_output, op);
  ElementType type = g->shape().type;
  int64_t dim = grad_output.size(-1);
  int64_t n = indices.numel();
  Value zeros = ir::Constant(0, Shape(type, {num_weights, dim}));
  if (n == 0 || num_weights == 0) return AtenFromIr(zeros, g->device());
  return Checked(op, [&] {
    Value idx = ir::Reshape(ir::Convert(GetXlaTensor(indices, op)->GetIrValue(), ElementType::kS64), {n});
    Value grad = ir::Reshape(g->GetIrValue(), {n, dim});
    if (padding_idx >= 0) {
      Value is_pad = ir::Compare(ir::CompareDirection::kEq, idx, ScalarLike(static_cast<double>(padding_idx), idx));
      Value pad_rows = ir::BroadcastInDim(is_pad, {n, dim}, {0});
      grad = ir::Select(pad_rows, ScalarLike(0, grad), grad);
    }
    Value idx2 = ir::Reshape(idx, {n, 1});
    if (scale_grad_by_freq) {
      // Each row divided by how often its index occurs.
      Value ones = ir::Constant(1, Shape(type, {n}));
      Value counts = ir::Scatter(ScatterKind::kAdd, ir::Constant(0, Shape(type, {num_weights})), idx2, ones, {}, {0},
                                 {0}, 1);
      Value freq = ir::Gather(counts, idx2, {}, {0}, {0}, 1, {1});
      grad = ir::Binary(ir::op::kDivide, grad, ir::BroadcastInDim(freq, {n, dim}, {0}));
    }
    return AtenFromIr(ir::Scatter(ScatterKind::kAdd, zeros, idx2, grad, {1}, {0}, {0}, 1), g->device());
  });
}

// embedding_bag's backward. With sparse=True the gradient is the dense one (as torch_xla
// gives it): XLA tensors are dense, and the CPU kernel's sparse COO result cannot move to
// the device. The bag of each index (offset2bag), which the forward leaves empty in sum
// mode, is computed here without in-place updates (this kernel runs below
// functionalization, where an update of a view would be lost); the rest is the dense
// backward (its CPU kernel).
at::Tensor EmbeddingBagBackward(const at::Tensor& grad, const at::Tensor& indices, const at::Tensor& offsets,
                                const at::Tensor& offset2bag, const at::Tensor& bag_size,
                                const at::Tensor& maximum_indices, c10::SymInt num_weights, bool scale_grad_by_freq,
                                int64_t mode, bool /*sparse*/, const std::optional<at::Tensor>& per_sample_weights,
                                int64_t padding_idx) {
  at::Tensor bags = offset2bag;
  if (indices.numel() != 0 && offset2bag.numel() == 0) {
    // The bag of index i: how many bags start at or before i, less one.
    at::Tensor positions = at::arange(indices.numel(), offsets.options());
    bags = at::ge(positions.unsqueeze(1), offsets.unsqueeze(0)).sum(1, false, offsets.scalar_type()) - 1;
  }
  return at::_embedding_bag_dense_backward_symint(grad, indices, bags, bag_size, maximum_indices,
                                                  std::move(num_weights), scale_grad_by_freq, mode,
                                                  per_sample_weights, padding_idx);
}

TORCH_LIBRARY_IMPL(aten, XLA, m) { m.impl("_embedding_bag_backward", TORCH_FN(EmbeddingBagBackward)); }

}  // namespace torch_xla
