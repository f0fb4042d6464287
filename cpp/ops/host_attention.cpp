// scaled_dot_product_attention on the CPU device by PyTorch's CPU flash-attention
// kernels, inside the compiled graph (host ATen calls, host/aten_ops.cpp).
//
// PyTorch picks an attention kernel per device type through a dispatch stub that knows
// no XLA device, so on XLA the composite always took the math path: the scores as a
// batched matrix product, a softmax and a second product, each differentiated by
// autograd. On the CPU device XLA runs those batched products through Eigen and the
// softmax through its own loops; in a stock nn.TransformerEncoder step (batch 16 x 128
// tokens, 4 heads) that cost 18 ms of Eigen products plus the softmax fusions, where
// eager's flash kernel takes about 2 ms. Here the op is taken at its autograd key on
// XLA tensors: where PyTorch's CPU rules would choose flash attention (no dropout, a
// floating or absent mask, equal head sizes; torch.backends' switches respected), the
// graph calls _scaled_dot_product_flash_attention_for_cpu, whose autograd formula calls
// its backward, also a host call. Everything else, and every other device, keeps the
// composite (math) path that XLA compiles.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/_fused_sdp_choice.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu.h>
#include <ATen/ops/scaled_dot_product_attention_native.h>
#include <torch/library.h>

#include <optional>

#include "host/aten_ops.h"

namespace torch_xla {
namespace {

// sdp::SDPBackend's value for flash attention (ATen/native/transformers/sdp_utils_cpp.h).
constexpr int64_t kFlashAttention = 1;

bool FlashOnHost(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                 const std::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                 std::optional<double> scale, bool enable_gqa) {
  if (dropout_p > 0.0 || enable_gqa) return false;
  if (attn_mask.has_value() && attn_mask->defined() && !at::isFloatingType(attn_mask->scalar_type())) return false;
  if (!host::HostAtenAvailable()) return false;
  // PyTorch's own choice for CPU tensors of these shapes, dtypes and strides.
  int64_t choice = at::_ops::_fused_sdp_choice::redispatch(c10::DispatchKeySet(c10::DispatchKey::CPU), query, key,
                                                           value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
  return choice == kFlashAttention;
}

at::Tensor ScaledDotProductAttention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                     const std::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                                     std::optional<double> scale, bool enable_gqa) {
  if (FlashOnHost(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)) {
    return std::get<0>(
        at::_scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p, is_causal, attn_mask, scale));
  }
  return at::native::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                                  enable_gqa);
}

TORCH_LIBRARY_IMPL(aten, AutogradXLA, m) {
  m.impl("scaled_dot_product_attention", TORCH_FN(ScaledDotProductAttention));
}

}  // namespace
}  // namespace torch_xla
