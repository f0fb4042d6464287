// The Functionalize-key kernel of `aten::_pack_padded_sequence` (pack_padded_sequence,
// pack_sequence) for XLA data: its batch sizes are a CPU tensor, and the kernels that
// read them (pad_packed_sequence, the packed RNNs, pack_padded_sequence's backward) and
// users (`packed.batch_sizes.tolist()`) read them from memory. Functionalization wraps
// every output of an op on functional tensors, the CPU one too, and its wrapper has no
// memory to read ("data is not allocated yet"). This kernel runs PyTorch's own
// functionalization of the op, then hands back the CPU tensor inside the wrapper, as
// torch_xla returns it.
//
// The key is shared by every backend: other inputs keep PyTorch's kernel unchanged.
#include <ATen/ATen.h>
#include <ATen/FunctionalTensorWrapper.h>
#include <torch/library.h>

#include <tuple>

#include "aten/functionalize_override.h"

namespace torch_xla {
namespace {

std::tuple<at::Tensor, at::Tensor> FunctionalizePack(c10::DispatchKeySet keys, const at::Tensor& input,
                                                     const at::Tensor& lengths, bool batch_first);

const FunctionalizeOverride pack_override(
    "_pack_padded_sequence", torch::dispatch(c10::DispatchKey::Functionalize, TORCH_FN(FunctionalizePack)), __FILE__,
    __LINE__);

std::tuple<at::Tensor, at::Tensor> FunctionalizePack(c10::DispatchKeySet keys, const at::Tensor& input,
                                                     const at::Tensor& lengths, bool batch_first) {
  torch::jit::Stack stack;
  stack.reserve(3);
  stack.emplace_back(input);
  stack.emplace_back(lengths);
  stack.emplace_back(batch_first);
  pack_override.CallOriginal(keys, &stack);
  at::Tensor data = std::move(stack[0]).toTensor();
  at::Tensor batch_sizes = std::move(stack[1]).toTensor();
  namespace impl = at::functionalization::impl;
  if (input.key_set().has_backend(c10::BackendComponent::XLABit) && impl::isFunctionalTensor(batch_sizes) &&
      batch_sizes.device().is_cpu()) {
    impl::sync(batch_sizes);
    batch_sizes = impl::from_functional_tensor(batch_sizes);
  }
  return {data, batch_sizes};
}

}  // namespace
}  // namespace torch_xla
