#pragma once
// Handing a PyTorch CPU kernel the memory its result is to end up in.
//
// A host ATen call (host/aten_ops.cpp) runs PyTorch's kernel, which allocates its own
// results, and copies each into the graph's buffer. Where the kernel has no out= form,
// as for the workspace of mkldnn_rnn_layer (4 MB for each half of a 16-sample batch of
// a 256-wide LSTM layer, 32 steps), that copy cost 1.2 ms of a 19 ms LSTM training step.
// While a ProvidedCpuMemory scope lives on a thread, the first allocation of PyTorch's
// CPU allocator on that thread of exactly a provided block's size gets that block
// (freed as a no-op) instead of new memory. The caller then checks whether the result
// landed there and copies it where it did not: a kernel that allocated another tensor of
// that size first used the block as scratch, and its result is copied over it as before.
//
// A kernel may allocate tensors of its result's size before the result itself: oneDNN's
// convolutions on NCHW tensors compute into a blocked-layout tensor and reorder it into
// the result they allocate after it. A block can therefore let a number of allocations
// of its size pass first (`skip`), and records where those went, so that the caller can
// learn from one call which of them was the result (ResultOrdinal) and offer the block
// to that one in the calls that follow.
//
// The blocks must outlive every tensor the kernel allocates in the scope, so a scope
// covers one call of a kernel that keeps nothing it allocated (no caches of tensors).
#include <array>
#include <cstddef>
#include <span>

namespace torch_xla {

struct ProvidedBlock {
  static constexpr int kRecorded = 8;

  void* memory = nullptr;
  std::size_t bytes = 0;
  bool taken = false;  // set when an allocation got it
  int skip = 0;        // allocations of exactly `bytes` that go elsewhere first
  int passed = 0;      // how many did
  std::array<void*, kRecorded> passed_memory{};  // where the first kRecorded of them went

  // Which of the allocations let pass (0 for the first) is the one at `result`: the
  // last recorded there, since an allocation at the same address before it must have
  // been freed. -1 where none was.
  int ResultOrdinal(const void* result) const;
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
