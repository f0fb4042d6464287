// The pool of the CPU plugin's mid-sized buffers (runtime/host_buffer_pool.h): buffers
// come back to it from any thread and serve the next request of their size.
#include "runtime/host_buffer_pool.h"

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

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

TEST(HostBufferPoolTest, OnlyMidSizedRequestsArePooled) {
  HostBufferPool pool(64 * kMiB);
  EXPECT_EQ(pool.Allocate(HostBufferPool::kMinBytes - 1, 64), nullptr);
  EXPECT_EQ(pool.Allocate(HostBufferPool::kEndBytes, 64), nullptr);
  EXPECT_EQ(pool.Allocate(1 * kMiB, 1 << 16), nullptr);  // alignment above a page
  EXPECT_EQ(pool.live_buffers(), 0u);
}

TEST(HostBufferPoolTest, FreedBufferServesTheNextRequestOfItsSizeOnAnyThread) {
  HostBufferPool pool(64 * kMiB);
  void* first = pool.Allocate(300 * kKiB + 5, 64);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % sysconf(_SC_PAGESIZE), 0u);
  std::memset(first, 0x5a, 300 * kKiB + 5);
  std::thread([&] { EXPECT_TRUE(pool.Release(first)); }).join();
  EXPECT_EQ(pool.free_bytes(), 300 * kKiB + sysconf(_SC_PAGESIZE));  // whole pages
  void* again = nullptr;
  std::thread([&] { again = pool.Allocate(300 * kKiB + 100, 64); }).join();  // the same pages
  EXPECT_EQ(again, first);
  EXPECT_EQ(pool.free_bytes(), 0u);
  void* other = pool.Allocate(200 * kKiB, 64);  // another size: a new buffer
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other, first);
  EXPECT_TRUE(pool.Release(again));
  EXPECT_TRUE(pool.Release(other));
  EXPECT_FALSE(pool.Release(other));  // already free
}

TEST(HostBufferPoolTest, ForeignPointersAreNotTakenBack) {
  HostBufferPool pool(64 * kMiB);
  void* page_aligned = nullptr;
  ASSERT_EQ(posix_memalign(&page_aligned, sysconf(_SC_PAGESIZE), 256 * kKiB), 0);
  EXPECT_FALSE(pool.Release(page_aligned));
  std::free(page_aligned);
  EXPECT_FALSE(pool.Release(nullptr));
}

TEST(HostBufferPoolTest, FreeBuffersStayWithinCapacityOldestGoingFirst) {
  HostBufferPool pool(2 * kMiB);
  std::vector<void*> buffers;
  for (int i = 0; i < 3; ++i) buffers.push_back(pool.Allocate(1 * kMiB, 64));
  for (void* b : buffers) ASSERT_TRUE(pool.Release(b));
  EXPECT_EQ(pool.free_bytes(), 2 * kMiB);
  // The first freed was unmapped: the two later ones serve the next requests.
  void* a = pool.Allocate(1 * kMiB, 64);
  void* b = pool.Allocate(1 * kMiB, 64);
  EXPECT_TRUE((a == buffers[1] && b == buffers[2]) || (a == buffers[2] && b == buffers[1]));
  EXPECT_EQ(pool.free_bytes(), 0u);
  EXPECT_TRUE(pool.Release(a));
  EXPECT_TRUE(pool.Release(b));
}

// A launch's dropped outputs come back on another thread just after it completes; the
// next launch waits for them, and then takes them.
TEST(HostBufferPoolTest, AwaitExpectedReleasesWaitsForTheLaunchsDroppedBuffers) {
  HostBufferPool pool(64 * kMiB);
  void* gradient = pool.Allocate(2 * kMiB, 64);
  ASSERT_NE(gradient, nullptr);
  pool.ExpectRelease(2 * kMiB, /*launch=*/7);
  EXPECT_TRUE(pool.AwaitExpectedReleases(/*launch=*/6, std::chrono::milliseconds(1)));  // expects nothing
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    pool.Release(gradient);
  });
  EXPECT_TRUE(pool.AwaitExpectedReleases(7, std::chrono::seconds(5)));
  finisher.join();
  EXPECT_EQ(pool.Allocate(2 * kMiB, 64), gradient);
  EXPECT_TRUE(pool.Release(gradient));
}

// An expected release that does not come ends the wait at its bound, and its size is
// not expected again.
TEST(HostBufferPoolTest, ReleasesThatDoNotComeAreNotExpectedAgain) {
  HostBufferPool pool(64 * kMiB);
  pool.ExpectRelease(3 * kMiB, 1);
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(pool.AwaitExpectedReleases(1, std::chrono::milliseconds(10)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(10));
  pool.ExpectRelease(3 * kMiB, 2);
  start = std::chrono::steady_clock::now();
  EXPECT_TRUE(pool.AwaitExpectedReleases(2, std::chrono::seconds(5)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(10));
  // Sizes outside the pool's range are never expected.
  pool.ExpectRelease(HostBufferPool::kEndBytes, 3);
  EXPECT_TRUE(pool.AwaitExpectedReleases(3, std::chrono::seconds(5)));
}

// A release counts against the oldest launch expecting its size.
TEST(HostBufferPoolTest, ReleasesCountAgainstTheOldestExpectingLaunch) {
  HostBufferPool pool(64 * kMiB);
  void* a = pool.Allocate(1 * kMiB, 64);
  void* b = pool.Allocate(1 * kMiB, 64);
  pool.ExpectRelease(1 * kMiB, 4);
  pool.ExpectRelease(1 * kMiB, 5);
  ASSERT_TRUE(pool.Release(a));
  EXPECT_TRUE(pool.AwaitExpectedReleases(4, std::chrono::milliseconds(1)));
  ASSERT_TRUE(pool.Release(b));
  EXPECT_TRUE(pool.AwaitExpectedReleases(5, std::chrono::milliseconds(1)));
}

}  // namespace
}  // namespace torch_xla::runtime::internal
