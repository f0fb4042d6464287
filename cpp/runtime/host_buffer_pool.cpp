#include "runtime/host_buffer_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

#include "runtime/metrics.h"
#include "runtime/page_size.h"

namespace torch_xla::runtime::internal {
namespace {

size_t RoundToPages(size_t bytes) { return (bytes + PageSize() - 1) / PageSize() * PageSize(); }

}  // namespace

HostBufferPool::~HostBufferPool() {
  for (const FreeBuffer& buffer : free_) munmap(buffer.base, buffer.bytes);
}

void* HostBufferPool::Allocate(size_t bytes, size_t alignment) {
  if (bytes < kMinBytes || bytes >= kEndBytes || alignment > PageSize()) return nullptr;
  static metrics::Counter* reused = metrics::GetCounter("HostBufferPoolReuse");
  static metrics::Counter* mapped = metrics::GetCounter("HostBufferPoolMap");
  const size_t rounded = RoundToPages(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto same_size = free_by_size_.find(rounded);
    if (same_size != free_by_size_.end() && !same_size->second.empty()) {
      // The most recently freed: its pages are the likeliest to be in the caches.
      FreeList::iterator it = same_size->second.back();
      same_size->second.pop_back();
      void* base = it->base;
      free_.erase(it);
      free_bytes_ -= rounded;
      live_.emplace(base, rounded);
      reused->Add();
      return base;
    }
  }
  void* base = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  mapped->Add();
  std::lock_guard<std::mutex> lock(mutex_);
  live_.emplace(base, rounded);
  return base;
}

bool HostBufferPool::Release(void* pointer) {
  if (pointer == nullptr || reinterpret_cast<uintptr_t>(pointer) % PageSize() != 0) return false;
  std::vector<FreeBuffer> unmap;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto live = live_.find(pointer);
    if (live == live_.end()) return false;
    const size_t bytes = live->second;
    live_.erase(live);
    free_by_size_[bytes].push_back(free_.insert(free_.end(), {pointer, bytes}));
    free_bytes_ += bytes;
    for (auto launch = expected_.begin(); launch != expected_.end(); ++launch) {
      auto size = launch->second.find(bytes);
      if (size == launch->second.end()) continue;
      if (--size->second == 0) launch->second.erase(size);
      if (launch->second.empty()) expected_.erase(launch);
      break;
    }
    while (free_bytes_ > capacity_bytes_) {
      const FreeBuffer oldest = free_.front();
      std::vector<FreeList::iterator>& list = free_by_size_[oldest.bytes];
      list.erase(std::find(list.begin(), list.end(), free_.begin()));
      free_.pop_front();
      free_bytes_ -= oldest.bytes;
      unmap.push_back(oldest);
    }
  }
  released_.notify_all();
  for (const FreeBuffer& buffer : unmap) munmap(buffer.base, buffer.bytes);
  return true;
}

void HostBufferPool::ExpectRelease(size_t bytes, uint64_t launch) {
  if (bytes < kMinBytes || bytes >= kEndBytes) return;
  const size_t rounded = RoundToPages(bytes);
  static metrics::Counter* expected = metrics::GetCounter("HostBufferPoolExpectedRelease");
  std::lock_guard<std::mutex> lock(mutex_);
  if (unexpected_sizes_.count(rounded) != 0) return;
  ++expected_[launch][rounded];
  expected->Add();
  while (expected_.size() > kMaxExpectingLaunches) expected_.erase(expected_.begin());
}

bool HostBufferPool::AwaitExpectedReleases(uint64_t launch, std::chrono::milliseconds timeout) {
  static metrics::Counter* awaited = metrics::GetCounter("HostBufferPoolAwaitedRelease");
  static metrics::Counter* not_released = metrics::GetCounter("HostBufferPoolReleaseWaitTimedOut");
  std::unique_lock<std::mutex> lock(mutex_);
  if (expected_.count(launch) == 0) return true;
  if (released_.wait_for(lock, timeout, [&] { return expected_.count(launch) == 0; })) {
    awaited->Add();
    return true;
  }
  not_released->Add();
  for (const auto& [size, count] : expected_[launch]) unexpected_sizes_.insert(size);
  expected_.erase(launch);
  return false;
}

size_t HostBufferPool::free_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_bytes_;
}

size_t HostBufferPool::live_buffers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.size();
}

}  // namespace torch_xla::runtime::internal
