#pragma once
// A pool of the CPU plugin's mid-sized buffers (64 KB up to the host block cache's
// blocks), shared by all threads.
//
// XLA's CPU runtime allocates an execution's results, and the buffers of host-to-device
// transfers, on whichever thread runs or enqueues the work: glibc serves each thread from
// an arena of its own, and with the thresholds host convolutions set
// (host/convolution.cpp: 64 MB of free memory kept per arena) each arena keeps what its
// thread freed. When an execution's results land in the arena of a thread that had not
// run the graph before, the process holds a second copy of them: ResNet-18's peak in
// benchmarks/bench_models.py read 604-631 MB in such runs against 560-568 MB in the
// others. Buffers from this pool come back to it whichever thread frees them, and the
// next request of the same size, on any thread, takes one: a training step's results
// have the same sizes every step.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace torch_xla::runtime::internal {

class HostBufferPool {
 public:
  // Requests from this size on, and below kEndBytes, are pooled.
  static constexpr size_t kMinBytes = size_t{64} << 10;
  static constexpr size_t kEndBytes = size_t{16} << 20;

  // Keeps at most `capacity_bytes` of free buffers mapped (oldest freed go first).
  explicit HostBufferPool(size_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}
  HostBufferPool(const HostBufferPool&) = delete;
  HostBufferPool& operator=(const HostBufferPool&) = delete;
  ~HostBufferPool();

  // A page-aligned buffer of at least `bytes`: a free one of the same size in pages, or
  // a new mapping. nullptr for a size outside [kMinBytes, kEndBytes), an alignment above
  // the page size, or a failed mapping; the caller then uses malloc.
  void* Allocate(size_t bytes, size_t alignment);

  // Takes back a buffer from Allocate and returns true; false for any other pointer.
  bool Release(void* pointer);

  // A device buffer of `bytes` that launch `launch` defines was dropped before that
  // launch finished: the plugin frees it on its worker thread once the launch completes.
  // A release of that size counts against the oldest launch that expects one.
  void ExpectRelease(size_t bytes, uint64_t launch);

  // Waits, at most `timeout`, until the releases `launch` expects have come. A launch
  // that waited for the one before calls it before it is enqueued: the buffers the step
  // before dropped while it ran (the gradients zero_grad drops) are then back when the
  // new step asks for its own, whichever thread runs it. Without the wait, ResNet-18 in
  // benchmarks/bench_models.py mapped a second set of gradient buffers in about a
  // quarter of its runs (the new step ran on another thread and asked first), 41 MB
  // kept. Returns whether they came; sizes still missing then are not expected again.
  bool AwaitExpectedReleases(uint64_t launch, std::chrono::milliseconds timeout);
  // The bound launches give that wait: the releases come within microseconds after the
  // launch completes; the bound keeps releases that never come from stalling launches.
  static constexpr std::chrono::milliseconds kReleaseWait{20};

  size_t free_bytes() const;
  size_t live_buffers() const;

 private:
  struct FreeBuffer {
    void* base;
    size_t bytes;  // a whole number of pages
  };
  using FreeList = std::list<FreeBuffer>;  // oldest freed first

  // Launches expected at once at most: a launch nobody awaits and whose buffers never
  // come back (freed elsewhere) is forgotten after this many newer ones.
  static constexpr size_t kMaxExpectingLaunches = 64;

  const size_t capacity_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable released_;
  std::map<uint64_t, std::unordered_map<size_t, size_t>> expected_;  // launch -> page-rounded size -> count
  std::unordered_set<size_t> unexpected_sizes_;  // sizes whose expected releases once did not come
  FreeList free_;
  std::unordered_map<size_t, std::vector<FreeList::iterator>> free_by_size_;
  std::unordered_map<void*, size_t> live_;  // base -> bytes
  size_t free_bytes_ = 0;
};

}  // namespace torch_xla::runtime::internal
