// torch.autocast('xla'): PyTorch routes every op on an XLA tensor through the AutocastXLA
// key while autocast is enabled, and ships no kernels for it. Ops not named below fall
// through to the XLA kernels unchanged; the named ones take PyTorch's own op lists and
// cast policies (the lists CUDA uses), so a script mixes precision on the device exactly
// as it would on a GPU: matmuls and convolutions in the autocast dtype (bfloat16 by
// default on XLA), reductions, norms and losses in float32, mixed-input ops promoted;
// torch_xla's three additions to them, and the recurrent layers (below).
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace torch_xla {
namespace {

// PyTorch's op lists spell signatures with unqualified ATen names.
using at::Scalar;
using at::ScalarType;
using at::Tensor;
#if __has_include(<ATen/core/Dimname.h>)
using at::DimnameList;  // releases with named tensors list norm.names_ScalarOpt_dim
#endif
using c10::IntArrayRef;

TORCH_LIBRARY_IMPL(_, AutocastXLA, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastXLA, m) {
#define XLA_AUTOCAST_LOWER_PRECISION(...) KERNEL(c10::DeviceType::XLA, __VA_ARGS__, lower_precision_fp)
#define XLA_AUTOCAST_FP32(...) KERNEL(c10::DeviceType::XLA, __VA_ARGS__, fp32)
#define XLA_AUTOCAST_FP32_SET_OPT_DTYPE(...) KERNEL(c10::DeviceType::XLA, __VA_ARGS__, fp32_set_opt_dtype)
#define XLA_AUTOCAST_PROMOTE(...) KERNEL(c10::DeviceType::XLA, __VA_ARGS__, promote)
#define XLA_AUTOCAST_DIFFERENT_SIGNATURE(REDISPATCH_FUNC, REGISTER_NAME, REGISTER_SIGNATURE,        \
                                         REDISPATCH_SIGNATURE, POLICY)                              \
  KERNEL_DIFFERENT_REDISPATCH_SIGNATURE(c10::DeviceType::XLA, REDISPATCH_FUNC, REGISTER_NAME,       \
                                        REGISTER_SIGNATURE, REDISPATCH_SIGNATURE, POLICY)

  AT_FORALL_LOWER_PRECISION_FP(XLA_AUTOCAST_LOWER_PRECISION)
  AT_FORALL_FP32(XLA_AUTOCAST_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(XLA_AUTOCAST_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(XLA_AUTOCAST_DIFFERENT_SIGNATURE)
  AT_FORALL_PROMOTE(XLA_AUTOCAST_PROMOTE)

  // torch_xla's additions for XLA devices, so that a region computes what it computes
  // under torch_xla: relu and max_pool2d in the lower precision (they keep the bfloat16
  // of the convolutions and matmuls before them), batch_norm in float32 (its statistics).
  KERNEL(c10::DeviceType::XLA, relu, lower_precision_fp)
  KERNEL(c10::DeviceType::XLA, max_pool2d, lower_precision_fp)
  KERNEL(c10::DeviceType::XLA, batch_norm, fp32)
  // Recurrent layers in the lower precision, as eager CUDA's autocast runs cuDNN's RNN
  // layers (its wrapper of _cudnn_rnn): the loop over the time steps (ops/rnn_loop.cpp)
  // then takes lower-precision products and computes its gates in float32.
  KERNEL(c10::DeviceType::XLA, lstm, input, lower_precision_fp)
  KERNEL(c10::DeviceType::XLA, gru, input, lower_precision_fp)
  KERNEL(c10::DeviceType::XLA, rnn_tanh, input, lower_precision_fp)
  KERNEL(c10::DeviceType::XLA, rnn_relu, input, lower_precision_fp)

#undef XLA_AUTOCAST_LOWER_PRECISION
#undef XLA_AUTOCAST_FP32
#undef XLA_AUTOCAST_FP32_SET_OPT_DTYPE
#undef XLA_AUTOCAST_PROMOTE
#undef XLA_AUTOCAST_DIFFERENT_SIGNATURE
}

}  // namespace
}  // namespace torch_xla
