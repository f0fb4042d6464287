#include "runtime/host_block_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/client.h"
#include "runtime/elf_import_rebind.h"
#include "runtime/host_buffer_pool.h"
#include "runtime/metrics.h"
#include "runtime/page_size.h"

namespace torch_xla::runtime::internal {
namespace {

// Mappings are rounded to the huge-page size so that the kernel can back them with huge
// pages (fewer faults and TLB misses on first touch).
constexpr size_t kMappingGranule = size_t{2} << 20;

size_t RoundToGranule(size_t bytes) { return (bytes + kMappingGranule - 1) / kMappingGranule * kMappingGranule; }

}  // namespace

HostBlockCache::~HostBlockCache() {
  for (const Block& block : cached_) munmap(block.base, block.mapped);
}

void* HostBlockCache::TakeCachedLocked(size_t bytes, size_t wanted) {
  // The cached block with the fewest touched pages among those that fit without leaving
  // more than a quarter of their touched pages unused.
  auto best = cached_.end();
  for (auto it = cached_.begin(); it != cached_.end(); ++it) {
    if (it->mapped >= wanted && it->touched <= wanted + wanted / 4 &&
        (best == cached_.end() || it->touched < best->touched)) {
      best = it;
    }
  }
  if (best == cached_.end()) return nullptr;
  Block block = *best;
  cached_.erase(best);
  cached_bytes_ -= block.touched;
  if (block.touched < kMinBlockBytes) cached_small_bytes_ -= block.touched;
  block.touched = std::max(block.touched, wanted);
  block.requested = bytes;
  block.requester = std::this_thread::get_id();
  live_.push_back(block);
  return block.base;
}

bool HostBlockCache::ReleaseExpectedLocked(size_t bytes) const {
  return temporaries_sizes_.count(bytes) != 0 && not_awaited_sizes_.count(bytes) == 0 &&
         std::any_of(live_.begin(), live_.end(), [&, self = std::this_thread::get_id()](const Block& block) {
           return block.requested == bytes && block.requester != self;
         });
}

void HostBlockCache::NoteTemporariesSize(size_t bytes) {
  if (bytes < kMinTemporariesBytes) return;
  std::lock_guard<std::mutex> lock(mutex_);
  temporaries_sizes_.insert(bytes);
}

void* HostBlockCache::Allocate(size_t bytes, size_t alignment) {
  if (bytes < kMinTemporariesBytes || alignment > PageSize()) return nullptr;
  static metrics::Counter* hits = metrics::GetCounter("HostBlockCacheHit");
  static metrics::Counter* misses = metrics::GetCounter("HostBlockCacheMiss");
  static metrics::Counter* awaited = metrics::GetCounter("HostBlockCacheAwaitedRelease");
  static metrics::Counter* not_released = metrics::GetCounter("HostBlockCacheReleaseWaitTimedOut");
  const size_t wanted = RoundToGranule(bytes);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (bytes < kMinBlockBytes && temporaries_sizes_.count(bytes) == 0) return nullptr;
    void* block = TakeCachedLocked(bytes, wanted);
    if (block == nullptr && ReleaseExpectedLocked(bytes)) {
      if (released_.wait_for(lock, kReleaseWait, [&] { return (block = TakeCachedLocked(bytes, wanted)) != nullptr; })) {
        awaited->Add();
      } else {
        // Its live blocks are not one execution's about to end (replicas running at
        // once, or another execution's result of that size kept alive): later requests
        // of the size do not wait.
        not_released->Add();
        not_awaited_sizes_.insert(bytes);
      }
    }
    if (block != nullptr) {
      hits->Add();
      return block;
    }
  }
  const size_t mapped = RoundToGranule(wanted + wanted / 4);
  void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  if (bytes >= kMinBlockBytes) madvise(base, mapped, MADV_HUGEPAGE);  // advisory: ignored where huge pages are off
  misses->Add();
  std::lock_guard<std::mutex> lock(mutex_);
  live_.push_back({base, mapped, wanted, bytes, std::this_thread::get_id()});
  return base;
}

bool HostBlockCache::Release(void* pointer) {
  // Blocks are page-aligned; malloc's pointers almost never are.
  if (pointer == nullptr || reinterpret_cast<uintptr_t>(pointer) % PageSize() != 0) return false;
  std::vector<Block> unmap;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(live_.begin(), live_.end(), [&](const Block& block) { return block.base == pointer; });
    if (it == live_.end()) return false;
    Block block = *it;
    live_.erase(it);
    cached_.push_back(block);
    cached_bytes_ += block.touched;
    if (block.touched < kMinBlockBytes) cached_small_bytes_ += block.touched;
    EvictToCapacityLocked(&unmap);
  }
  released_.notify_all();
  for (const Block& block : unmap) munmap(block.base, block.mapped);
  return true;
}

void HostBlockCache::EvictToCapacityLocked(std::vector<Block>* unmap) {
  auto evict = [&](std::vector<Block>::iterator it) {
    unmap->push_back(*it);
    cached_bytes_ -= it->touched;
    if (it->touched < kMinBlockBytes) cached_small_bytes_ -= it->touched;
    cached_.erase(it);
  };
  while (cached_small_bytes_ > kSmallBlocksCapacity) {
    evict(std::find_if(cached_.begin(), cached_.end(), [](const Block& b) { return b.touched < kMinBlockBytes; }));
  }
  while (cached_bytes_ > capacity_bytes_ && !cached_.empty()) evict(cached_.begin());
}

size_t HostBlockCache::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_;
}

size_t HostBlockCache::live_blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.size();
}

// ---- the plugin's allocation imports ------------------------------------------------------

namespace {

size_t CapacityFromEnvironment() {
  const size_t physical = static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * PageSize();
  size_t megabytes = 2048;
  if (const char* value = std::getenv("XLA_CPU_BLOCK_CACHE_MB"); value != nullptr && *value != '\0') {
    // Like CPU_NUM_DEVICES, a value that is not a number is an error rather than ignored.
    char* end = nullptr;
    const unsigned long long parsed = std::strtoull(value, &end, 10);
    if (end == value || *end != '\0' || value[0] == '-')
      throw RuntimeError(std::string("XLA_CPU_BLOCK_CACHE_MB must be a non-negative integer (megabytes), got '") +
                         value + "'");
    megabytes = static_cast<size_t>(parsed);
  }
  return std::min(megabytes << 20, physical / 4);
}

// Never destroyed: the plugin may free blocks while the process exits, after static
// destructors of this library have run.
HostBlockCache* process_cache = nullptr;
HostBufferPool* process_pool = nullptr;
// The pool takes the requests below the cache's blocks.
static_assert(HostBufferPool::kEndBytes == HostBlockCache::kMinBlockBytes);

// Large blocks and temporaries from the cache, mid-sized buffers from the pool.
void* PooledAllocate(size_t bytes, size_t alignment) {
  if (void* block = process_cache->Allocate(bytes, alignment)) return block;
  return process_pool->Allocate(bytes, alignment);
}

int CachedPosixMemalign(void** out, size_t alignment, size_t bytes) {
  if (void* block = PooledAllocate(bytes, alignment)) {
    *out = block;
    return 0;
  }
  return posix_memalign(out, alignment, bytes);
}

void* CachedAlignedAlloc(size_t alignment, size_t bytes) {
  if (void* block = PooledAllocate(bytes, alignment)) return block;
  return aligned_alloc(alignment, bytes);
}

void CachedFree(void* pointer) {
  if (!process_cache->Release(pointer) && !process_pool->Release(pointer)) free(pointer);
}

}  // namespace

HostBlockCache* InstalledHostBlockCache() { return process_cache; }
HostBufferPool* InstalledHostBufferPool() { return process_pool; }

bool InstallHostBlockCache(void* plugin_handle) {
  const size_t capacity = CapacityFromEnvironment();
  if (capacity == 0) return false;
  if (process_cache == nullptr) process_cache = new HostBlockCache(capacity);
  if (process_pool == nullptr) process_pool = new HostBufferPool(std::min(capacity, kBufferPoolCapacity));
  const std::array<ImportRebinding, 3> rebindings = {{
      {"free", reinterpret_cast<void*>(&CachedFree)},
      {"posix_memalign", reinterpret_cast<void*>(&CachedPosixMemalign)},
      {"aligned_alloc", reinterpret_cast<void*>(&CachedAlignedAlloc)},
  }};
  return RebindImports(plugin_handle, rebindings) > 0;
}

}  // namespace torch_xla::runtime::internal
