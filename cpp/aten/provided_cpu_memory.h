#pragma once
// Handing a PyTorch CPU kernel the memory its result is to end up in.
//
// A host ATen call (host_aten_ops.cpp) runs PyTorch's kernel, which allocates its own
// results, and copies each into the graph's buffer. Where the kernel has no out= form,
// as for the workspace of mkldnn_rnn_layer (4 MB for each half of a 16-sample batch of
// a 256-wide LSTM layer, 32 steps), that copy cost 1.2 ms of a 19 ms LSTM training step.
// While a ProvidedCpuMemory scope lives on a thread, the first allocation of PyTorch's
// CPU allocator on that thread of exactly a provided block's size gets that block
// (freed as a no-op) instead of new memory. The caller then checks whether the result
// landed there and copies it where it did not: a kernel that allocated another tensor of
// that size first used the block as scratch, and its result is copied over it as before.
//
// The blocks must outlive every tensor the kernel allocates in the scope, so a scope
// covers one call of a kernel that keeps nothing it allocated (no caches of tensors).
#include <cstddef>
#include <span>

namespace torch_xla {

struct ProvidedBlock {
  void* memory = nullptr;
  std::size_t bytes = 0;
  bool taken = false;  // set when an allocation got it
};

class ProvidedCpuMemory {
 public:
  // Puts the allocator hook in front of PyTorch's CPU allocator (once; later calls only
  // report): call it on the thread that traces, before host calls run. Returns whether
  // the hook is in place.
  static bool Install();

  // Offers `blocks` (which must outlive the scope) to this thread's allocations. Scopes
  // do not nest: an inner one replaces the outer's offer until it ends. Without the
  // allocator hook (another CPU allocator of higher priority was set first) nothing is
  // offered and every result is copied.
  explicit ProvidedCpuMemory(std::span<ProvidedBlock> blocks);
  ~ProvidedCpuMemory();
  ProvidedCpuMemory(const ProvidedCpuMemory&) = delete;
  ProvidedCpuMemory& operator=(const ProvidedCpuMemory&) = delete;

 private:
  std::span<ProvidedBlock> previous_;
};

}  // namespace torch_xla
