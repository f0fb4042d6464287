#pragma once
// One of our kernels in place of PyTorch's at the Functionalize key for one aten op
// (aten/functionalize_view.cpp, aten/functionalize_host_outputs.cpp). The key is shared
// by every backend, so our kernel hands what it does not handle back to PyTorch's
// kernel, taken before ours replaced it.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <memory>

namespace torch_xla {

class FunctionalizeOverride {
 public:
  // Registers `kernel` (a function taking the DispatchKeySet first) for aten::`name`
  // (no overload name), without the dispatcher's warning of an override; `file` and
  // `line` (the caller's) are where the dispatcher says it was registered.
  FunctionalizeOverride(const char* name, torch::CppFunction kernel, const char* file, uint32_t line);

  // PyTorch's kernel on `stack` (the op's arguments; its results when it returns).
  void CallOriginal(c10::DispatchKeySet keys, torch::jit::Stack* stack) const {
    original_.callBoxed(op_, keys, stack);
  }

 private:
  c10::OperatorHandle op_;
  c10::SafeKernelFunction original_;
  std::unique_ptr<torch::Library> library_;
};

}  // namespace torch_xla
