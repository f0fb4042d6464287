// Attention kernels: the fused self-attention of nn.MultiheadAttention's fast path.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"

namespace torch_xla {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;

// ---- _native_multi_head_attention ---------------------------------------------
// The fused self-attention of nn.MultiheadAttention's inference fast path (PyTorch takes
// that path for CPU/CUDA tensors only; this kernel serves direct calls). As on the CPU:
// q/k/v = input @ W^T + b with q scaled by 1/sqrt(head dim); a mask (any dtype, nonzero =
// masked out) is [T, T] for mask_type 0, [B, T] for 1, [B, H, T, T] for 2; masked scores
// are -inf before the softmax (a fully masked row gives NaN, as on the CPU); the result
// is the output projection and, with need_weights, the attention weights (averaged over
// the heads with average_attn_weights).

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::_native_multi_head_attention(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, int64_t embed_dim, int64_t num_head,
    const at::Tensor& qkv_weight, const at::Tensor& qkv_bias, const at::Tensor& proj_weight,
    const at::Tensor& proj_bias, const std::optional<at::Tensor>& mask, bool need_weights,
    bool average_attn_weights, std::optional<int64_t> mask_type) {
  XLA_COUNT("_native_multi_head_attention");
  const char* op = "_native_multi_head_attention";
  const int64_t D = embed_dim;
  TORCH_CHECK(query.dim() == 3, op, ": expected 3-D `query`, got ", DescribeTensor(query));
  TORCH_CHECK(query.size(2) == D, op, ": passed-in embed_dim ", D, " didn't match last dim of query ",
              DescribeTensor(query));
  TORCH_CHECK(key.dim() == 3 && value.dim() == 3 && query.sizes() == key.sizes() && key.sizes() == value.sizes(), op,
              ": expected `query`/`key`/`value` shapes to match, got ", DescribeTensor(query), ", ",
              DescribeTensor(key), " and ", DescribeTensor(value));
  TORCH_CHECK(qkv_weight.dim() == 2 && qkv_weight.size(0) == 3 * D && qkv_weight.size(1) == D, op,
              ": expected `qkv_weight` of shape [3 * embed_dim, embed_dim] = [", 3 * D, ", ", D, "], got ",
              DescribeTensor(qkv_weight));
  TORCH_CHECK(qkv_bias.dim() == 1 && qkv_bias.size(0) == 3 * D, op, ": expected `qkv_bias` of shape [", 3 * D,
              "], got ", DescribeTensor(qkv_bias));
  TORCH_CHECK(proj_weight.dim() == 2 && proj_weight.size(1) == D, op, ": expected `proj_weight` of shape [*, ", D,
              "], got ", DescribeTensor(proj_weight));
  TORCH_CHECK(proj_bias.dim() == 1 && proj_bias.size(0) == proj_weight.size(0), op, ": expected `proj_bias` of shape [",
              proj_weight.size(0), "], got ", DescribeTensor(proj_bias));
  TORCH_CHECK(num_head > 0 && D % num_head == 0, op, ": `embed_dim` ", D, " must divide evenly by `num_heads` ",
              num_head);
  CheckFloatingArg(query, op, "query");
  for (const at::Tensor* t : {&key, &value, &qkv_weight, &qkv_bias, &proj_weight, &proj_bias})
    TORCH_CHECK(t->scalar_type() == query.scalar_type(), op, ": expected all tensors of dtype ", query.scalar_type(),
                ", got ", DescribeTensor(*t));
  const at::Tensor* m = DefinedOrNull(mask);
  const int64_t B = query.size(0), T = query.size(1), H = num_head, dh = D / num_head;
  const std::vector<int64_t> scores_dims = {B, H, T, T};
  if (m) {
    TORCH_CHECK(mask_type.has_value(), op, ": Mask Type should be defined");
    int64_t mt = *mask_type;
    TORCH_CHECK(mt == 0 || mt == 1 || mt == 2, op,
                ": Mask Type should be 0 (src_mask) or 1 (src_key_padding_mask), or 2 (default_mask), got ", mt);
    std::vector<int64_t> expected = mt == 0 ? std::vector<int64_t>{T, T}
                                    : mt == 1 ? std::vector<int64_t>{B, T}
                                              : scores_dims;
    TORCH_CHECK(m->sizes() == at::IntArrayRef(expected), op, ": for mask_type == ", mt, " the mask shape should be ",
                SizesString(expected), ", got ", DescribeTensor(*m));
  }
  int device = CommonDevice({&query, &key, &value, &qkv_weight, &qkv_bias, &proj_weight, &proj_bias}, op);
  ElementType type = ElementTypeOf(query.scalar_type());
  if (query.numel() == 0) return std::make_tuple(AtenFromIr(ir::Constant(0, ir::Shape(type, {B, T, D})), device), at::Tensor());
  return Checked(op, [&] {
    auto ir_of = [&](const at::Tensor& t) { return GetXlaTensor(t, op)->GetIrValue(); };
    Value w = ir_of(qkv_weight);
    Value bias = ir_of(qkv_bias);
    // [B, T, D] @ W[i*D:(i+1)*D]^T + b[i*D:(i+1)*D], as [B, H, T, dh].
    auto project = [&](const at::Tensor& input, int64_t i) {
      Value wi = ir::Slice(w, {i * D, 0}, {(i + 1) * D, D}, {1, 1});
      Value bi = ir::Slice(bias, {i * D}, {(i + 1) * D}, {1});
      Value y = ir::DotGeneral(ir_of(input), wi, {}, {}, {2}, {1}, type);
      y = Add(y, ir::Broadcast(bi, y.shape().dims));
      if (i == 0) y = Mul(y, ScalarLike(1.0 / std::sqrt(static_cast<double>(dh)), y));
      return ir::Transpose(ir::Reshape(y, {B, T, H, dh}), {0, 2, 1, 3});
    };
    Value q = project(query, 0), k = project(key, 1), v = project(value, 2);
    ElementType ct = AccumulationType(type);
    Value scores = ir::Convert(ir::DotGeneral(q, k, {0, 1}, {0, 1}, {3}, {3}, type), ct);
    if (m) {
      Value mv = ir_of(*m);
      if (mv.shape().type != ElementType::kPred)
        mv = ir::Compare(CompareDirection::kNe, mv, ir::Constant(0, mv.shape()));
      int64_t mt = *mask_type;
      mv = mt == 0 ? ir::BroadcastInDim(mv, scores_dims, {2, 3})
           : mt == 1 ? ir::BroadcastInDim(mv, scores_dims, {0, 3})
                     : mv;
      scores = ir::Select(mv, ScalarLike(-std::numeric_limits<double>::infinity(), scores), scores);
    }
    Value attn = ir::Convert(SoftmaxOf(scores, 3), type);
    Value ctx = ir::DotGeneral(attn, v, {0, 1}, {0, 1}, {3}, {2}, type);  // [B, H, T, dh]
    ctx = ir::Reshape(ir::Transpose(ctx, {0, 2, 1, 3}), {B, T, D});
    Value out = ir::DotGeneral(ctx, ir_of(proj_weight), {}, {}, {2}, {1}, type);
    out = Add(out, ir::Broadcast(ir_of(proj_bias), out.shape().dims));
    at::Tensor weights;
    if (need_weights) {
      Value wts = attn;
      if (average_attn_weights) {
        Value sum = ir::Reduce(ReduceKind::kSum, ir::Convert(attn, ct), {1});
        wts = ir::Convert(Div(sum, ScalarLike(static_cast<double>(H), sum)), type);
      }
      weights = AtenFromIr(wts, device);
    }
    return std::make_tuple(AtenFromIr(out, device), weights);
  });
}

}  // namespace torch_xla
