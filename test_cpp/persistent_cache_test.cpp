// The persistent cache's files (runtime/persistent_cache.h): entries that survive, entries
// that fail their checks (truncated, corrupt, another key's) read as misses and go, a
// read-only cache writes nothing, and the least recently used entries go past the limit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/persistent_cache.h"

namespace torch_xla::runtime {
namespace {

namespace fs = std::filesystem;

class PersistentCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("persistent_cache_test_" + std::to_string(::getpid()) + "_" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  fs::path EntryOf(const CacheKey& key) { return folder_ / (key.Hex() + ".xlaexe"); }
  std::vector<fs::path> Entries() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(folder_)) out.push_back(e.path());
    return out;
  }

  fs::path folder_;
};

TEST_F(PersistentCacheTest, StoredEntriesLoadInAnotherCacheOfTheFolder) {
  CacheKey key = CacheKey::Of("module text");
  EXPECT_FALSE(CacheKey::Of("module text ") == key);
  PersistentCache(folder_.string(), false, 1 << 20).Store(key, std::string("exe\0bytes", 9));
  PersistentCache other(folder_.string(), false, 1 << 20);
  EXPECT_EQ(other.Load(key), std::string("exe\0bytes", 9));
  EXPECT_EQ(other.Load(CacheKey::Of("another module")), std::nullopt);
  EXPECT_EQ(Entries().size(), 1u);  // no temporary file left
}

TEST_F(PersistentCacheTest, TruncatedCorruptOrForeignEntriesAreMissesAndGo) {
  PersistentCache cache(folder_.string(), false, 1 << 20);
  CacheKey key = CacheKey::Of("graph");
  std::string payload(1000, 'x');
  auto rewrite = [&](auto edit) {
    cache.Store(key, payload);
    std::ifstream in(EntryOf(key), std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    edit(data);
    std::ofstream(EntryOf(key), std::ios::binary | std::ios::trunc) << data;
  };
  rewrite([](std::string& d) { d.resize(d.size() / 2); });  // truncated
  EXPECT_EQ(cache.Load(key), std::nullopt);
  EXPECT_FALSE(fs::exists(EntryOf(key)));
  rewrite([](std::string& d) { d[d.size() - 10] ^= 1; });  // a flipped bit
  EXPECT_EQ(cache.Load(key), std::nullopt);
  rewrite([](std::string& d) { d[10] ^= 1; });  // another key's header
  EXPECT_EQ(cache.Load(key), std::nullopt);
  rewrite([](std::string& d) { d = "not an entry"; });
  EXPECT_EQ(cache.Load(key), std::nullopt);
  cache.Store(key, payload);  // and a good entry again
  EXPECT_EQ(cache.Load(key), payload);
}

TEST_F(PersistentCacheTest, AReadOnlyCacheLoadsButNeverWrites) {
  CacheKey key = CacheKey::Of("graph");
  PersistentCache(folder_.string(), false, 1 << 20).Store(key, "bytes");
  PersistentCache read_only(folder_.string(), true, 1 << 20);
  EXPECT_EQ(read_only.Load(key), "bytes");
  read_only.Store(CacheKey::Of("new"), "more");
  read_only.Remove(key);
  EXPECT_EQ(Entries().size(), 1u);
}

TEST_F(PersistentCacheTest, TheLeastRecentlyUsedEntriesGoPastTheLimit) {
  PersistentCache cache(folder_.string(), false, 10 * 1024);
  std::string payload(3000, 'p');
  CacheKey a = CacheKey::Of("a"), b = CacheKey::Of("b"), c = CacheKey::Of("c"), d = CacheKey::Of("d");
  cache.Store(a, payload);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  cache.Store(b, payload);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  cache.Store(c, payload);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(cache.Load(a).has_value());  // a is used again: b is now the oldest
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  cache.Store(d, payload);  // 4 x 3 KB > 10 KB
  EXPECT_TRUE(fs::exists(EntryOf(a)));
  EXPECT_FALSE(fs::exists(EntryOf(b)));
  EXPECT_TRUE(fs::exists(EntryOf(c)));
  EXPECT_TRUE(fs::exists(EntryOf(d)));
}

TEST_F(PersistentCacheTest, ConcurrentWritersOfOneKeyLeaveAWholeEntry) {
  CacheKey key = CacheKey::Of("shared graph");
  std::vector<std::thread> writers;
  for (int i = 0; i < 4; ++i) {
    writers.emplace_back([&, i] {
      PersistentCache cache(folder_.string(), false, 1 << 24);
      for (int k = 0; k < 20; ++k) cache.Store(key, std::string(50000, static_cast<char>('a' + i)));
    });
  }
  for (auto& t : writers) t.join();
  std::optional<std::string> loaded = PersistentCache(folder_.string(), false, 1 << 24).Load(key);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->size(), 50000u);
  EXPECT_EQ(Entries().size(), 1u);
}

}  // namespace
}  // namespace torch_xla::runtime
