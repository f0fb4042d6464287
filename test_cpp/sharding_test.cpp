// SPMD layouts (runtime/sharding.h): the sharding text, shard shapes and offsets, and
// host data split into shards and assembled again, for even, uneven and partially
// replicated layouts. Sharded programs themselves are tested from Python
// (test_py/distributed/test_spmd.py), where SPMD mode has a process of its own.
#include "runtime/sharding.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/client.h"

namespace torch_xla::runtime {
namespace {

std::vector<int32_t> Iota(int64_t n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<int32_t> AsInts(const std::string& bytes) {
  std::vector<int32_t> v(bytes.size() / sizeof(int32_t));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

TEST(ShardingTest, TextRoundTripsAndOneTileIsReplication) {
  for (const char* text : {"{replicated}", "{manual}", "{devices=[2,2]0,1,2,3}", "{devices=[4,1]3,2,1,0}",
                           "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"}) {
    EXPECT_EQ(Sharding::Parse(text).ToString(), text);
    EXPECT_EQ(Sharding::Decode(Sharding::Parse(text).Encode()), Sharding::Parse(text));
  }
  EXPECT_TRUE(Sharding::Parse("{devices=[1,1,4]0,1,2,3 last_tile_dim_replicate}").is_replicated());
  EXPECT_TRUE(Sharding::Parse("{devices=[1,1]0}").is_replicated());
}

TEST(ShardingTest, BadTextAndMismatchesThrowWithTheText) {
  for (const char* text : {"devices=[2]0,1", "{devices=[2,2]0,1,2}", "{devices=[2]0,0}", "{devices=[0]}",
                           "{devices=[2]0,1 sideways}", "{tiles}"}) {
    try {
      Sharding::Parse(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  }
  Sharding s = Sharding::Parse("{devices=[2,2]0,1,2,3}");
  EXPECT_THROW(s.Check(3, 4, "x"), RuntimeError);  // rank
  EXPECT_THROW(s.Check(2, 8, "x"), RuntimeError);  // device count
  EXPECT_NO_THROW(s.Check(2, 4, "x"));
  EXPECT_THROW(Sharding::Parse("{devices=[2]0,5}").Check(1, 2, "x"), RuntimeError);  // device out of range
}

TEST(ShardingTest, ShardsOfUnevenDimensionsArePaddedAtTheEnd) {
  Sharding s = Sharding::Parse("{devices=[4,1]0,1,2,3}");
  const std::vector<int64_t> dims = {5, 3};
  EXPECT_EQ(s.ShardDims(dims), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(s.ShardOffsets(2, dims), (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(s.ShardOffsets(3, dims), (std::vector<int64_t>{6, 0}));  // all padding
  std::vector<int32_t> value = Iota(15);
  std::vector<std::string> shards = SplitIntoShards(value.data(), 4, dims, s, 4);
  ASSERT_EQ(shards.size(), 4u);
  EXPECT_EQ(AsInts(shards[0]), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(AsInts(shards[2]), (std::vector<int32_t>{12, 13, 14, 0, 0, 0}));
  EXPECT_EQ(AsInts(shards[3]), (std::vector<int32_t>(6, 0)));
  std::vector<const void*> pointers;
  for (const std::string& shard : shards) pointers.push_back(shard.data());
  std::vector<int32_t> back(15, -1);
  AssembleFromShards(pointers, 4, dims, s, back.data());
  EXPECT_EQ(back, value);
}

TEST(ShardingTest, TwoDimensionalAndPartiallyReplicatedLayoutsRoundTrip) {
  const std::vector<int64_t> dims = {3, 5};
  std::vector<int32_t> value = Iota(15);
  for (const char* text : {"{devices=[2,2]0,1,2,3}", "{devices=[2,2]3,1,0,2}",
                           "{devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}", "{replicated}"}) {
    Sharding s = Sharding::Parse(text);
    std::vector<std::string> shards = SplitIntoShards(value.data(), 4, dims, s, 4);
    std::vector<const void*> pointers;
    for (const std::string& shard : shards) pointers.push_back(shard.data());
    std::vector<int32_t> back(15, -1);
    AssembleFromShards(pointers, 4, dims, s, back.data());
    EXPECT_EQ(back, value) << text;
  }
  // Device 3 holds the top-left tile of "{devices=[2,2]3,1,0,2}": rows 0-1, columns 0-2.
  Sharding s = Sharding::Parse("{devices=[2,2]3,1,0,2}");
  EXPECT_EQ(AsInts(SplitIntoShards(value.data(), 4, dims, s, 4)[3]), (std::vector<int32_t>{0, 1, 2, 5, 6, 7}));
  // Columns split in two, each half on a pair of devices.
  Sharding half = Sharding::Parse("{devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}");
  EXPECT_EQ(half.ReplicaIndex(1), 1);
  EXPECT_EQ(half.ShardOffsets(2, dims), (std::vector<int64_t>{0, 3}));
}

}  // namespace
}  // namespace torch_xla::runtime
