#pragma once
// A cache of large host memory blocks for the CPU plugin.
//
// An XLA CPU executable allocates its temporary buffer (every intermediate value of the
// graph: 160 MB for the transformer training step of benchmarks/) at each run and frees
// it when the run ends. glibc maps every allocation above 32 MB anew and unmaps it on
// free, so each run page-faults and zero-fills the whole buffer again, about 15% of that
// step. The cache keeps freed large blocks mapped and hands them to the next request of
// a similar size, as a GPU runtime's caching allocator does for device memory. The PJRT
// C API has no allocator hook, so the plugin's own aligned-allocation and free imports
// are rebound to the cache (elf_import_rebind.h).
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

namespace torch_xla::runtime::internal {

class HostBlockCache {
 public:
  // Requests below this size are left to malloc: glibc reuses their memory itself.
  static constexpr size_t kMinBlockBytes = size_t{16} << 20;
  // Except an executable's temporaries (NoteTemporariesSize) from this size on. glibc
  // serves each thread from an arena of its own and keeps up to twice the largest
  // allocation it recently unmapped free in each: an executable whose runs alternate
  // between two worker threads kept two copies of its temporaries' memory (MNIST's 10 MB
  // in benchmarks/bench_models.py). From the cache, the runs share one block.
  static constexpr size_t kMinTemporariesBytes = size_t{1} << 20;
  // Cached blocks below kMinBlockBytes are kept up to this many bytes in all (the
  // temporaries of the latest graphs), so that a process running many small graphs keeps
  // few of them mapped.
  static constexpr size_t kSmallBlocksCapacity = size_t{64} << 20;

  // Keeps at most `capacity_bytes` of freed blocks mapped.
  explicit HostBlockCache(size_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}
  HostBlockCache(const HostBlockCache&) = delete;
  HostBlockCache& operator=(const HostBlockCache&) = delete;
  ~HostBlockCache();

  // A block of at least `bytes`, aligned to `alignment`: a cached one whose touched
  // pages are at most a quarter more than the request, or a new mapping. nullptr for a
  // request below kMinBlockBytes (other than temporaries), an alignment above the page
  // size, or a failed mapping;
  // the caller then uses malloc.
  //
  // A new mapping reserves a quarter more address space than it is asked for, untouched
  // and so not resident: a graph whose temporaries are a little larger than those of the
  // graph before (a training step's first graph and its steady one: 85.7 and 86.4 MB
  // for the TransformerEncoder of benchmarks/bench_models.py) grows into the same block
  // instead of keeping a second one mapped for the rest of the process.
  //
  // A request of a size noted by NoteTemporariesSize that finds no cached block while a
  // block asked for with that very size is live, and was asked for by another thread,
  // waits up to kReleaseWait for a block to come back. An XLA CPU execution allocates its
  // temporaries (and its results) on a worker thread when it starts and frees the
  // temporaries there just after it completes; the next step's execution, started by
  // that completion on another thread, would otherwise map a second block beside the one
  // about to come back, and the process would keep both mapped. Blocks the requesting
  // thread asked for are never about to come back: that thread frees an execution's
  // temporaries before it starts another, and the live ones are its own execution's
  // results (a 16 MB result beside 16 MB of temporaries). The wait is mostly tens of
  // microseconds; a few milliseconds where the freeing thread waits for a core (2 cores,
  // the tracing thread and the new execution's worker busy). A size whose wait timed out
  // once (another thread's result of that size kept alive) is not waited for again.
  void* Allocate(size_t bytes, size_t alignment);
  static constexpr std::chrono::milliseconds kReleaseWait{20};

  // Notes that an executable allocates its temporaries as one request of `bytes`. Sizes
  // below kMinTemporariesBytes are not noted.
  void NoteTemporariesSize(size_t bytes);

  // Takes back a block from Allocate and returns true; false for any other pointer
  // (which the caller then frees itself). Cheap for pointers that are not blocks.
  bool Release(void* pointer);

  // The touched (resident) bytes of the cached blocks.
  size_t cached_bytes() const;
  size_t live_blocks() const;

 private:
  struct Block {
    void* base;
    size_t mapped;   // the mapping's size
    size_t touched;    // the largest request it served: its resident part
    size_t requested;  // the request it serves now (live blocks)
    std::thread::id requester;  // the thread that asked for it (live blocks)
  };
  void* TakeCachedLocked(size_t bytes, size_t wanted);
  bool ReleaseExpectedLocked(size_t bytes) const;
  void EvictToCapacityLocked(std::vector<Block>* unmap);

  const size_t capacity_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable released_;
  std::unordered_set<size_t> temporaries_sizes_;
  std::unordered_set<size_t> not_awaited_sizes_;  // whose wait once timed out
  size_t cached_small_bytes_ = 0;  // of the cached blocks below kMinBlockBytes
  std::vector<Block> live_;
  std::vector<Block> cached_;  // oldest first: evicted first
  size_t cached_bytes_ = 0;
};

// Routes the large aligned allocations of the plugin loaded as `plugin_handle` (its
// posix_memalign, aligned_alloc and free imports) through one process-wide cache, and
// its mid-sized ones through one process-wide HostBufferPool (host_buffer_pool.h) that
// keeps at most kBufferPoolCapacity free. $XLA_CPU_BLOCK_CACHE_MB sets the cache's
// capacity (default: 2048, at most a quarter of physical memory; the pool keeps no more
// than that either); 0 turns both off; a value that is not a non-negative integer throws
// RuntimeError. Returns whether the plugin's imports now go through them. Call it before
// the plugin runs code on other threads.
constexpr size_t kBufferPoolCapacity = size_t{128} << 20;
bool InstallHostBlockCache(void* plugin_handle);

// The cache and the pool InstallHostBlockCache made, or nullptr where it made none.
HostBlockCache* InstalledHostBlockCache();
class HostBufferPool;
HostBufferPool* InstalledHostBufferPool();

}  // namespace torch_xla::runtime::internal
