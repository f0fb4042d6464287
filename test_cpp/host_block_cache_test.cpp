// The cache of large host blocks that serves the CPU plugin's big allocations
// (runtime/host_block_cache.h). Its use by the plugin is tested from Python
// (test_py/runtime/test_host_block_cache.py), where a graph's buffers pass through it.
#include "runtime/host_block_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace torch_xla::runtime::internal {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

bool PageAligned(void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % sysconf(_SC_PAGESIZE) == 0; }

TEST(HostBlockCacheTest, SmallRequestsAndLargeAlignmentsAreLeftToMalloc) {
  HostBlockCache cache(256 * kMiB);
  EXPECT_EQ(cache.Allocate(HostBlockCache::kMinBlockBytes - 1, 64), nullptr);
  EXPECT_EQ(cache.Allocate(64 * kMiB, 1 << 16), nullptr);
  cache.NoteTemporariesSize(HostBlockCache::kMinTemporariesBytes - 1);  // too small to note
  EXPECT_EQ(cache.Allocate(HostBlockCache::kMinTemporariesBytes - 1, 64), nullptr);
  EXPECT_EQ(cache.live_blocks(), 0u);
}

// Temporaries below kMinBlockBytes are blocks too, so that threads share them; the
// cache keeps at most kSmallBlocksCapacity of such blocks.
TEST(HostBlockCacheTest, SmallTemporariesAreBlocksWithinTheirOwnCapacity) {
  HostBlockCache cache(1024 * kMiB);
  const size_t temporaries = 13 * kMiB + 40;
  cache.NoteTemporariesSize(temporaries);
  EXPECT_EQ(cache.Allocate(temporaries + 64, 64), nullptr);  // another size: malloc's
  void* block = cache.Allocate(temporaries, 64);
  ASSERT_NE(block, nullptr);
  ASSERT_TRUE(cache.Release(block));
  EXPECT_EQ(cache.Allocate(temporaries, 64), block);
  ASSERT_TRUE(cache.Release(block));

  // (The second request waits kReleaseWait for the live one; the size is not waited for
  // again.)
  std::vector<void*> blocks;
  for (size_t i = 0; i < 8; ++i) {
    blocks.push_back(cache.Allocate(temporaries, 64));
    ASSERT_NE(blocks.back(), nullptr);
  }
  for (void* b : blocks) ASSERT_TRUE(cache.Release(b));
  EXPECT_LE(cache.cached_bytes(), HostBlockCache::kSmallBlocksCapacity);
  EXPECT_GT(cache.cached_bytes(), HostBlockCache::kSmallBlocksCapacity / 2);
}

TEST(HostBlockCacheTest, LargeBlockIsPageAlignedAndWritable) {
  HostBlockCache cache(256 * kMiB);
  void* block = cache.Allocate(40 * kMiB + 3, 64);
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(PageAligned(block));
  std::memset(block, 0x5a, 40 * kMiB + 3);
  EXPECT_EQ(static_cast<unsigned char*>(block)[40 * kMiB + 2], 0x5a);
  EXPECT_EQ(cache.live_blocks(), 1u);
  EXPECT_TRUE(cache.Release(block));
  EXPECT_EQ(cache.live_blocks(), 0u);
  EXPECT_GE(cache.cached_bytes(), 40 * kMiB);
}

TEST(HostBlockCacheTest, ReleasedBlockServesTheNextRequestOfSimilarSize) {
  HostBlockCache cache(256 * kMiB);
  void* first = cache.Allocate(32 * kMiB, 64);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(cache.Release(first));
  // A little smaller: the cached block fits without wasting more than a quarter.
  void* again = cache.Allocate(30 * kMiB, 64);
  EXPECT_EQ(again, first);
  EXPECT_EQ(cache.cached_bytes(), 0u);
  ASSERT_TRUE(cache.Release(again));
  // Half the size would waste too much: a new block, the cached one stays.
  void* smaller = cache.Allocate(16 * kMiB, 64);
  ASSERT_NE(smaller, nullptr);
  EXPECT_NE(smaller, first);
  EXPECT_GE(cache.cached_bytes(), 32 * kMiB);
  // A little larger: the block grows into the address space it reserved.
  void* grown = cache.Allocate(36 * kMiB, 64);
  ASSERT_EQ(grown, first);
  static_cast<unsigned char*>(grown)[36 * kMiB - 1] = 0x5a;
  EXPECT_EQ(static_cast<unsigned char*>(grown)[36 * kMiB - 1], 0x5a);
  ASSERT_TRUE(cache.Release(grown));
  EXPECT_EQ(cache.cached_bytes(), 36 * kMiB);  // its touched pages
  // Beyond the reserved quarter: a new block too.
  void* larger = cache.Allocate(48 * kMiB, 64);
  ASSERT_NE(larger, nullptr);
  EXPECT_NE(larger, first);
  EXPECT_TRUE(cache.Release(smaller));
  EXPECT_TRUE(cache.Release(larger));
}

TEST(HostBlockCacheTest, ForeignPointersAreNotTakenBack) {
  HostBlockCache cache(256 * kMiB);
  void* from_malloc = std::malloc(100);
  EXPECT_FALSE(cache.Release(from_malloc));
  std::free(from_malloc);
  void* page_aligned = nullptr;
  ASSERT_EQ(posix_memalign(&page_aligned, sysconf(_SC_PAGESIZE), 20 * kMiB), 0);
  EXPECT_FALSE(cache.Release(page_aligned));
  std::free(page_aligned);
  EXPECT_FALSE(cache.Release(nullptr));
  void* block = cache.Allocate(20 * kMiB, 64);
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(cache.Release(block));
  EXPECT_FALSE(cache.Release(block));  // already back in the cache
}

TEST(HostBlockCacheTest, CachedBytesStayWithinCapacity) {
  HostBlockCache cache(40 * kMiB);
  void* a = cache.Allocate(20 * kMiB, 64);
  void* b = cache.Allocate(24 * kMiB, 64);
  void* c = cache.Allocate(64 * kMiB, 64);
  ASSERT_TRUE(a && b && c);
  ASSERT_TRUE(cache.Release(a));
  ASSERT_TRUE(cache.Release(b));  // a + b exceed 40 MiB: the older (a) is unmapped
  EXPECT_LE(cache.cached_bytes(), 40 * kMiB);
  EXPECT_EQ(cache.Allocate(24 * kMiB, 64), b);
  ASSERT_TRUE(cache.Release(c));  // larger than the capacity: unmapped at once
  EXPECT_EQ(cache.cached_bytes(), 0u);
  ASSERT_TRUE(cache.Release(b));
}

// Allocates on a thread of its own, as the execution before (on another worker) did.
void* AllocateOnAnotherThread(HostBlockCache& cache, size_t bytes) {
  void* block = nullptr;
  std::thread([&] { block = cache.Allocate(bytes, 64); }).join();
  return block;
}

// One execution's temporaries come back on another thread just after the next one asks
// for its own: the request waits for them instead of mapping a second block.
TEST(HostBlockCacheTest, TemporariesRequestWaitsForTheBlockAboutToComeBack) {
  HostBlockCache cache(256 * kMiB);
  const size_t temporaries = 22 * kMiB + 504;
  cache.NoteTemporariesSize(temporaries);
  void* running = AllocateOnAnotherThread(cache, temporaries);
  ASSERT_NE(running, nullptr);
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    cache.Release(running);
  });
  void* next = cache.Allocate(temporaries, 64);
  finisher.join();
  EXPECT_EQ(next, running);
  EXPECT_EQ(cache.live_blocks(), 1u);
  ASSERT_TRUE(cache.Release(next));
}

// An execution's own result of its temporaries' size, asked for just before them on
// the same thread, is not waited for; nor does it stop later requests from waiting.
TEST(HostBlockCacheTest, BlocksOfTheRequestingThreadAreNotWaitedFor) {
  HostBlockCache cache(256 * kMiB);
  const size_t bytes = 16 * kMiB;
  cache.NoteTemporariesSize(bytes);
  void* result = cache.Allocate(bytes, 64);
  auto start = std::chrono::steady_clock::now();
  void* temporaries = cache.Allocate(bytes, 64);
  EXPECT_LT(std::chrono::steady_clock::now() - start, HostBlockCache::kReleaseWait);
  ASSERT_NE(temporaries, nullptr);
  EXPECT_NE(temporaries, result);
  // The next execution, on another thread, waits for these temporaries.
  void* next = nullptr;
  std::thread next_execution([&] { next = cache.Allocate(bytes, 64); });
  std::this_thread::sleep_for(std::chrono::microseconds(300));
  ASSERT_TRUE(cache.Release(temporaries));
  next_execution.join();
  EXPECT_EQ(next, temporaries);
  for (void* block : {result, next}) EXPECT_TRUE(cache.Release(block));
}

// Sizes not noted as temporaries (outputs), and a block that does not come back, do
// not hold a request up beyond kReleaseWait.
TEST(HostBlockCacheTest, OtherRequestsMapANewBlockWithoutWaitingLong) {
  HostBlockCache cache(256 * kMiB);
  const size_t output = 20 * kMiB;
  void* held = AllocateOnAnotherThread(cache, output);
  auto start = std::chrono::steady_clock::now();
  void* other = cache.Allocate(output, 64);
  EXPECT_LT(std::chrono::steady_clock::now() - start, HostBlockCache::kReleaseWait);
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other, held);

  cache.NoteTemporariesSize(output);  // now a live block of that size may come back
  start = std::chrono::steady_clock::now();
  void* third = cache.Allocate(output, 64);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, HostBlockCache::kReleaseWait);
  EXPECT_LT(waited, std::chrono::seconds(1));
  ASSERT_NE(third, nullptr);
  EXPECT_NE(third, held);
  EXPECT_NE(third, other);
  // That wait timed out: the size is not waited for again.
  start = std::chrono::steady_clock::now();
  void* fourth = cache.Allocate(output, 64);
  EXPECT_LT(std::chrono::steady_clock::now() - start, HostBlockCache::kReleaseWait);
  ASSERT_NE(fourth, nullptr);
  for (void* block : {held, other, third, fourth}) EXPECT_TRUE(cache.Release(block));
}

}  // namespace
}  // namespace torch_xla::runtime::internal
