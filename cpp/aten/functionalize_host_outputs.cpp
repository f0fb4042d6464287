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
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <memory>
#include <tuple>

namespace torch_xla {
namespace {

// PyTorch's Functionalize kernel of aten::_pack_padded_sequence, taken before ours.
c10::SafeKernelFunction* original_pack = nullptr;

std::tuple<at::Tensor, at::Tensor> FunctionalizePack(c10::DispatchKeySet keys, const at::Tensor& input,
                                                     const at::Tensor& lengths, bool batch_first) {
  static const c10::OperatorHandle op =
      c10::Dispatcher::singleton().findSchemaOrThrow("aten::_pack_padded_sequence", "");
  torch::jit::Stack stack;
  stack.reserve(3);
  stack.emplace_back(input);
  stack.emplace_back(lengths);
  stack.emplace_back(batch_first);
  original_pack->callBoxed(op, keys, &stack);
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

// Takes PyTorch's kernel, then puts ours in its place, when the library loads.
struct Registration {
  Registration() {
    const c10::OperatorHandle op =
        c10::Dispatcher::singleton().findSchemaOrThrow("aten::_pack_padded_sequence", "");
    original_pack = new c10::SafeKernelFunction(op.getComputedKernelForDispatchKey(c10::DispatchKey::Functionalize));
    // The dispatcher warns of any override; this one is intended.
    c10::WarningUtils::WarningHandlerGuard quiet(&silent);
    library = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::Functionalize, __FILE__,
                                               __LINE__);
    library->impl("_pack_padded_sequence",
                  torch::dispatch(c10::DispatchKey::Functionalize, TORCH_FN(FunctionalizePack)));
  }
  struct Silent : c10::WarningHandler {
    void process(const c10::Warning&) override {}
  } silent;
  std::unique_ptr<torch::Library> library;
};
Registration registration;

}  // namespace
}  // namespace torch_xla
