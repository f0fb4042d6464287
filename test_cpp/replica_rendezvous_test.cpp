// The runtime's rendezvous of replicas (runtime/replica_rendezvous.h), with integers for
// parts and results: one launch per round from the last arrival, every replica's own
// result, and every way out of step (different keys, a timeout, a replica that left, an
// abort) failing every replica within its deadline.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/replica_rendezvous.h"

namespace torch_xla::runtime {
namespace {

using namespace std::chrono_literals;
using Rendezvous = ReplicaRendezvous<int, int>;

// A launch that returns each replica's part times 10 plus the round, counting its calls.
Rendezvous::Launch Counting(std::atomic<int>& launches) {
  return [&launches](std::vector<int>& parts) {
    int round = launches.fetch_add(1);
    std::vector<int> results;
    for (int part : parts) results.push_back(part * 10 + round);
    return results;
  };
}

// Runs body(replica) on one thread per replica; returns what each threw, or "".
std::vector<std::string> OnThreads(int n, const std::function<void(int)>& body) {
  std::vector<std::string> errors(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return errors;
}

TEST(ReplicaRendezvousTest, LastArrivalLaunchesOnceAndEveryReplicaGetsItsResult) {
  Rendezvous rendezvous(4, 10s);
  std::atomic<int> launches{0};
  std::vector<int> results(4);
  for (int round = 0; round < 3; ++round) {
    OnThreads(4, [&](int r) { results[r] = rendezvous.ArriveAndWait(r, 42, "graph", r + 1, Counting(launches)); });
    for (int r = 0; r < 4; ++r) EXPECT_EQ(results[r], (r + 1) * 10 + round);
  }
  EXPECT_EQ(launches.load(), 3);
  EXPECT_EQ(rendezvous.broken(), "");
}

TEST(ReplicaRendezvousTest, OneThreadMayArriveForEveryReplicaThenWait) {
  Rendezvous rendezvous(3, 10s);
  std::atomic<int> launches{0};
  std::vector<Rendezvous::Ticket> tickets;
  for (int r = 2; r >= 0; --r) tickets.push_back(rendezvous.Arrive(r, 7, "graph", r, Counting(launches)));
  EXPECT_EQ(launches.load(), 1);  // the third arrival launched
  EXPECT_EQ(rendezvous.Wait(tickets[0]), 20);
  EXPECT_EQ(rendezvous.Wait(tickets[2]), 0);
}

TEST(ReplicaRendezvousTest, DifferentKeysFailEveryReplicaAndNameThem) {
  Rendezvous rendezvous(4, 10s);
  std::atomic<int> launches{0};
  std::vector<std::string> errors = OnThreads(4, [&](int r) {
    rendezvous.ArriveAndWait(r, r == 2 ? 2 : 1, r == 2 ? "graph B" : "graph A", r, Counting(launches));
  });
  EXPECT_EQ(launches.load(), 0);
  for (const std::string& error : errors) {
    EXPECT_NE(error.find("the replicas ran different graphs"), std::string::npos) << error;
    EXPECT_NE(error.find("replicas 0, 1, 3: graph A"), std::string::npos) << error;
    EXPECT_NE(error.find("replica 2: graph B"), std::string::npos) << error;
  }
  // Broken for good: the replicas are out of step.
  EXPECT_THROW(rendezvous.ArriveAndWait(0, 1, "graph A", 0, Counting(launches)), RendezvousError);
}

TEST(ReplicaRendezvousTest, AMissingReplicaTimesOutEveryWaitingOne) {
  Rendezvous rendezvous(3, 200ms);
  std::atomic<int> launches{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> errors = OnThreads(2, [&](int r) { rendezvous.ArriveAndWait(r, 1, "graph", r, Counting(launches)); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  for (const std::string& error : errors) {
    EXPECT_NE(error.find("replica 2 did not arrive within 0.2 s"), std::string::npos) << error;
    EXPECT_NE(error.find("with replicas 0, 1"), std::string::npos) << error;
  }
  // The late replica fails at once.
  start = std::chrono::steady_clock::now();
  EXPECT_THROW(rendezvous.ArriveAndWait(2, 1, "graph", 2, Counting(launches)), RendezvousError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 100ms);
  EXPECT_EQ(launches.load(), 0);
}

TEST(ReplicaRendezvousTest, ALaunchLongerThanTheTimeoutIsWaitedFor) {
  Rendezvous rendezvous(3, 100ms);
  auto slow = [](std::vector<int>& parts) {
    std::this_thread::sleep_for(400ms);  // a long first compile
    return std::vector<int>(parts.begin(), parts.end());
  };
  std::vector<int> results(3, -1);
  std::vector<std::string> errors = OnThreads(3, [&](int r) { results[r] = rendezvous.ArriveAndWait(r, 1, "graph", r, slow); });
  EXPECT_EQ(errors, std::vector<std::string>(3));
  EXPECT_EQ(results, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(rendezvous.broken(), "");
}

TEST(ReplicaRendezvousTest, AReplicaThatLeftReleasesTheWaitingOnes) {
  Rendezvous rendezvous(3, 30s);
  std::atomic<int> launches{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> errors = OnThreads(3, [&](int r) {
    if (r == 1) {
      std::this_thread::sleep_for(50ms);
      rendezvous.Leave(1, "has returned from its function");
      return;
    }
    rendezvous.ArriveAndWait(r, 1, "graph", r, Counting(launches));
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  for (int r : {0, 2}) {
    EXPECT_NE(errors[r].find("replica 1 has returned from its function"), std::string::npos) << errors[r];
  }
  EXPECT_EQ(launches.load(), 0);
}

TEST(ReplicaRendezvousTest, ArrivingAfterAnotherReplicaLeftFailsAtOnce) {
  Rendezvous rendezvous(2, 30s);
  std::atomic<int> launches{0};
  rendezvous.Leave(0, "failed");
  EXPECT_THROW(rendezvous.ArriveAndWait(1, 1, "graph", 1, Counting(launches)), RendezvousError);
}

TEST(ReplicaRendezvousTest, AbortReleasesWaitsNowAndLater) {
  Rendezvous rendezvous(3, 30s);
  std::atomic<int> launches{0};
  std::thread aborter([&] {
    std::this_thread::sleep_for(50ms);
    rendezvous.Abort("replica 2 failed: ValueError");
  });
  std::vector<std::string> errors = OnThreads(2, [&](int r) { rendezvous.ArriveAndWait(r, 1, "graph", r, Counting(launches)); });
  aborter.join();
  for (const std::string& error : errors) EXPECT_EQ(error, "replica 2 failed: ValueError");
  EXPECT_THROW(rendezvous.ArriveAndWait(2, 1, "graph", 2, Counting(launches)), RendezvousError);
}

TEST(ReplicaRendezvousTest, ALaunchErrorReachesEveryReplicaAndKeepsTheRendezvous) {
  Rendezvous rendezvous(2, 10s);
  std::atomic<int> launches{0};
  auto failing = [](std::vector<int>&) -> std::vector<int> { throw std::runtime_error("compile failed"); };
  std::vector<std::string> errors = OnThreads(2, [&](int r) { rendezvous.ArriveAndWait(r, 1, "graph", r, failing); });
  EXPECT_EQ(errors[0], "compile failed");
  EXPECT_EQ(errors[1], "compile failed");
  std::vector<int> results(2);
  OnThreads(2, [&](int r) { results[r] = rendezvous.ArriveAndWait(r, 1, "graph", r, Counting(launches)); });
  EXPECT_EQ(results, (std::vector<int>{0, 10}));
}

TEST(ReplicaRendezvousTest, ArgumentsAreChecked) {
  EXPECT_THROW(Rendezvous(0, 1s), RuntimeError);
  Rendezvous rendezvous(2, 1s);
  std::atomic<int> launches{0};
  EXPECT_THROW(rendezvous.Arrive(2, 1, "graph", 0, Counting(launches)), RuntimeError);
  EXPECT_THROW(rendezvous.Leave(-1, "gone"), RuntimeError);
  // Arriving twice for one launch breaks the rendezvous instead of waiting forever.
  rendezvous.Arrive(0, 1, "graph", 0, Counting(launches));
  EXPECT_THROW(rendezvous.Arrive(0, 1, "graph", 0, Counting(launches)), RendezvousError);
}

}  // namespace
}  // namespace torch_xla::runtime
