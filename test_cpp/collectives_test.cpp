// Collectives of the C++ API (distributed/collectives.h) across the 3 CPU devices of this
// binary: one thread syncing every replica, or one thread per replica; results against
// the same collectives computed on the CPU; errors that name the collective.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "distributed/collectives.h"
#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

constexpr int kReplicas = 3;

class CollectivesTest : public XlaTest {
 protected:
  void SetUp() override {
    XlaTest::SetUp();
    if (DeviceCount() < kReplicas) GTEST_SKIP() << "needs 3 XLA devices, have " << DeviceCount();
  }
  void TearDown() override { EndReplication(); }

  // Replica r's input: integers, so that every reduction is exact.
  static at::Tensor Input(int r, at::ScalarType type = at::kFloat) {
    return (at::arange(12, at::kFloat).reshape({3, 4}) * (r + 1) - 5 * r).to(type);
  }
};

TEST_F(CollectivesTest, OneThreadSyncsEveryReplica) {
  BeginReplication({0, 1, 2});
  std::vector<at::Tensor> sums, maxes, gathered, scattered, exchanged, permuted;
  for (int r = 0; r < kReplicas; ++r) {
    at::Tensor x = ToXla(Input(r), r);
    std::vector<at::Tensor> reduced = AllReduce("sum", {x, x * 2}, 0.5);
    sums.push_back(reduced[1]);
    maxes.push_back(AllReduce("max", {x}, 1.0)[0]);
    gathered.push_back(AllGather(x, 1));
    scattered.push_back(ReduceScatter("sum", x, 1.0, 0, 3));
    exchanged.push_back(AllToAll(x, 0, 1, 3));
    permuted.push_back(CollectivePermute(x, {{0, 2}, {2, 1}}));
  }
  Sync(/*wait=*/true);
  at::Tensor total = Input(0) + Input(1) + Input(2);
  at::Tensor biggest = at::maximum(at::maximum(Input(0), Input(1)), Input(2));
  for (int r = 0; r < kReplicas; ++r) {
    SCOPED_TRACE("replica " + std::to_string(r));
    EXPECT_EQ(sums[r].device(), XlaDevice(r));
    ExpectClose(sums[r], total * 2 * 0.5);
    ExpectClose(maxes[r], biggest);
    ExpectClose(gathered[r], at::cat({Input(0), Input(1), Input(2)}, 1));
    ExpectClose(scattered[r], total.narrow(0, r, 1));
    ExpectClose(exchanged[r], at::cat({Input(0).narrow(0, r, 1), Input(1).narrow(0, r, 1), Input(2).narrow(0, r, 1)}, 1));
  }
  ExpectClose(permuted[0], at::zeros({3, 4}));
  ExpectClose(permuted[1], Input(2));
  ExpectClose(permuted[2], Input(0));
  EXPECT_EQ(Counter("xla::all_reduce"), 2 * kReplicas);
  ExpectNoFallback();
}

TEST_F(CollectivesTest, ThreadPerReplicaWithGroups) {
  BeginReplication({0, 1, 2});
  std::vector<at::Tensor> products(kReplicas), alone(kReplicas);
  std::vector<std::string> errors(kReplicas);
  std::vector<std::thread> threads;
  for (int r = 0; r < kReplicas; ++r) {
    threads.emplace_back([&, r] {
      try {
        SetCurrentDevice(r);
        // 'xla' without an index: the thread's current device.
        at::Tensor x = at::ones({2}, at::TensorOptions().dtype(at::kInt).device(c10::DeviceType::XLA)) * (r + 1);
        products[r] = AllReduce("mul", {x}, 1.0, {{2, 0, 1}})[0];
        alone[r] = AllReduce("sum", {x}, 1.0, {{0}, {1}, {2}})[0];
        SyncDevices({r});
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < kReplicas; ++r) {
    ASSERT_EQ(errors[r], "");
    EXPECT_EQ(products[r].device(), XlaDevice(r));
    ExpectClose(products[r], at::full({2}, 6, at::kInt));
    ExpectClose(alone[r], at::full({2}, r + 1, at::kInt));
  }
}

TEST_F(CollectivesTest, ReplicasOnSomeDevicesInAnyOrder) {
  BeginReplication({2, 0});
  EXPECT_EQ(ReplicationDevices(), (std::vector<int>{2, 0}));
  at::Tensor on2 = AllGather(ToXla(Input(0), 2), 0);
  at::Tensor on0 = AllGather(ToXla(Input(1), 0), 0);
  Sync(/*wait=*/true);
  ExpectClose(on2, at::cat({Input(0), Input(1)}));
  ExpectClose(on0, at::cat({Input(0), Input(1)}));
}

TEST_F(CollectivesTest, BadArgumentsNameTheCollective) {
  BeginReplication({0, 1, 2});
  at::Tensor x = ToXla(Input(0), 0);
  auto message = [](const std::function<void()>& call) {
    try {
      call();
    } catch (const c10::Error& e) {
      return std::string(e.what_without_backtrace());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { AllReduce("avg", {x}, 1.0); }).find("all_reduce: unknown reduce type 'avg'"), std::string::npos);
  EXPECT_NE(message([&] { AllReduce("and", {x}, 1.0); }).find("take integer or bool tensors, got f32[3, 4]"),
            std::string::npos);
  EXPECT_NE(message([&] { AllReduce("sum", {x}, 1.0, {{0, 1}, {2}}); }).find("must all have the same"), std::string::npos);
  EXPECT_NE(message([&] { AllReduce("sum", {x}, 1.0, {{0, 1, 1}}); }).find("name replica 1 twice"), std::string::npos);
  EXPECT_NE(message([&] { AllReduce("sum", {x, ToXla(Input(0), 1)}, 1.0); }).find("expected every tensor on one device"),
            std::string::npos);
  EXPECT_NE(message([&] { AllReduce("sum", {Input(0)}, 1.0); }).find("expected a tensor on an XLA device"),
            std::string::npos);
  EXPECT_NE(message([&] { ReduceScatter("sum", x, 1.0, 1, 2); }).find("shard_count 2 must equal"), std::string::npos);
  EXPECT_NE(message([&] { ReduceScatter("sum", x, 1.0, 1, 3); }).find("must be divisible by the 3 replicas"),
            std::string::npos);
  EXPECT_NE(message([&] { AllToAll(x, 1, 0, 3); }).find("must be divisible by split_count 3"), std::string::npos);
  EXPECT_NE(message([&] { CollectivePermute(x, {{0, 3}}); }).find("names replica 3, but there are 3"), std::string::npos);
  EXPECT_NE(message([] { BeginReplication({0}); }).find("is running already"), std::string::npos);
  EndReplication();
  EXPECT_NE(message([] { BeginReplication({0, 7}); }).find("cannot replicate over xla:7"), std::string::npos);
  EXPECT_NE(message([] { BeginReplication({1, 1}); }).find("xla:1 is listed twice"), std::string::npos);
}

TEST_F(CollectivesTest, GraphWithCollectivesOutsideItsReplicationIsAnError) {
  BeginReplication({0, 1, 2});
  at::Tensor pending = AllReduce("sum", {ToXla(Input(0), 1)}, 1.0)[0];
  EndReplication();
  EXPECT_THROW(pending.cpu(), std::exception);
  // The device works on.
  ExpectClose(ToXla(Input(1), 1) * 2, Input(1) * 2);
}

TEST_F(CollectivesTest, OutsideReplicationACollectiveActsOnOneReplica) {
  at::Tensor x = ToXla(Input(1), 0);
  ExpectClose(AllReduce("max", {x}, 2.0)[0], Input(1) * 2);
  ExpectClose(AllGather(x, 0), Input(1));
  ExpectClose(CollectivePermute(x, {}), at::zeros({3, 4}));
  EXPECT_TRUE(GetStableHlo({AllReduce("sum", {x}, 1.0)[0]}).find("all_reduce") == std::string::npos);
}

}  // namespace
}  // namespace torch_xla::test
