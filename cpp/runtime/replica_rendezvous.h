#pragma once
// Where the replicas of a replicated computation meet before it is launched. Each replica
// arrives with a key (what it is about to run: a graph's hash), a description of it for
// error messages, and its part of the launch (its arguments). The last to arrive checks
// that every key agrees and runs the launch for all of them; each replica then leaves
// with its own part of the result, or all leave with the same error.
//
// Arriving does not block (so one thread may arrive for several replicas and then wait
// for each); waiting does, for the other replicas until a deadline counted from the
// arrival, then for the launch (however long its compile takes). A replica that does not
// arrive in time, differing keys, a replica that said it will not come any more (it
// finished or failed) or an abort end the wait of every replica with a RendezvousError. After such an error the rendezvous stays broken (the
// replicas are no longer in step) and every later arrival fails at once with the same
// message. An error thrown by the launch itself reaches every replica too, but leaves
// the rendezvous usable: the replicas are still in step.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/client.h"

namespace torch_xla::runtime {

class RendezvousError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

namespace internal {
// "0, 1, 3" for messages.
std::string JoinOrdinals(const std::vector<int>& ordinals);
}  // namespace internal

template <typename Part, typename Result>
class ReplicaRendezvous {
 public:
  // The launch receives every replica's part, indexed by replica, and returns one
  // result per replica.
  using Launch = std::function<std::vector<Result>(std::vector<Part>& parts)>;

  // One round: the arrivals for one launch.
  struct Round {
    explicit Round(int n) : arrived(n, false), keys(n, 0), whats(n), parts(n) {}
    std::vector<bool> arrived;
    std::vector<uint64_t> keys;
    std::vector<std::string> whats;
    std::vector<Part> parts;
    int count = 0;
    bool done = false;
    std::string error;  // set with done when the round failed
    bool broke = false;  // the failure broke the rendezvous (not the launch's own error)
    std::vector<Result> results;
  };

  // What a replica holds between arriving and waiting.
  struct Ticket {
    std::shared_ptr<Round> round;
    int replica = -1;
    std::chrono::steady_clock::time_point deadline;
  };

  ReplicaRendezvous(int num_replicas, std::chrono::milliseconds timeout)
      : num_replicas_(num_replicas), timeout_(timeout), departed_(num_replicas),
        current_(std::make_shared<Round>(num_replicas)) {
    if (num_replicas < 1) throw RuntimeError("ReplicaRendezvous: num_replicas must be positive");
  }

  int num_replicas() const { return num_replicas_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Registers replica `replica`'s arrival. The last arrival runs `launch` on the calling
  // thread before returning. Throws RendezvousError when the rendezvous is broken or
  // this arrival breaks it.
  Ticket Arrive(int replica, uint64_t key, std::string what, Part part, const Launch& launch) {
    CheckReplica(replica);
    std::shared_ptr<Round> round;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!broken_.empty()) throw RendezvousError(broken_);
      round = current_;
      if (round->arrived[replica]) {
        BreakLocked(round, "replica " + std::to_string(replica) +
                               " arrived twice for one launch, before the other replicas arrived once");
        throw RendezvousError(broken_);
      }
      round->arrived[replica] = true;
      round->keys[replica] = key;
      round->whats[replica] = std::move(what);
      round->parts[replica] = std::move(part);
      ++round->count;
      if (std::string why = MissingReplicasThatLeft(*round); !why.empty()) {
        BreakLocked(round, why);
        throw RendezvousError(broken_);
      }
      if (round->count < num_replicas_) {
        return Ticket{round, replica, std::chrono::steady_clock::now() + timeout_};
      }
      // The last arrival: the next launch starts a new round.
      current_ = std::make_shared<Round>(num_replicas_);
      if (std::string mismatch = KeyMismatch(*round); !mismatch.empty()) {
        BreakLocked(round, mismatch);
        throw RendezvousError(broken_);
      }
    }
    // Launch without the lock: it may compile for a long time, and replicas of later
    // launches must still be able to arrive (and fail) meanwhile.
    std::vector<Result> results;
    std::string error;
    try {
      results = launch(round->parts);
      if (results.size() != static_cast<std::size_t>(num_replicas_)) {
        error = "the launch returned " + std::to_string(results.size()) + " results for " +
                std::to_string(num_replicas_) + " replicas";
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      round->parts.clear();  // the arguments need not outlive the launch here
      round->results = std::move(results);
      round->error = std::move(error);
      round->done = true;
    }
    cv_.notify_all();
    return Ticket{round, replica, std::chrono::steady_clock::now() + timeout_};
  }

  // Blocks until the ticket's round has been launched (or failed); returns this replica's
  // result. Throws RendezvousError on a broken rendezvous or a timeout, RuntimeError with
  // the launch's message when the launch failed.
  Result Wait(const Ticket& ticket) {
    std::unique_lock<std::mutex> lock(mu_);
    Round& round = *ticket.round;
    while (!round.done) {
      // Once every replica has arrived the launch is under way (a first compile may take
      // longer than any timeout): only a missing replica is waited for with a deadline.
      if (round.count == num_replicas_) {
        cv_.wait(lock);
      } else if (cv_.wait_until(lock, ticket.deadline) == std::cv_status::timeout && !round.done &&
                 round.count < num_replicas_) {
        BreakLocked(ticket.round, TimeoutMessage(round));
      }
    }
    if (round.broke) throw RendezvousError(round.error);
    if (!round.error.empty()) throw RuntimeError(round.error);
    return std::move(round.results[ticket.replica]);
  }

  Result ArriveAndWait(int replica, uint64_t key, std::string what, Part part, const Launch& launch) {
    return Wait(Arrive(replica, key, std::move(what), std::move(part), launch));
  }

  // Replica `replica` will not arrive any more (`why`: it finished, it failed). A round
  // that still waits for it fails now, and so does every later one that would need it.
  void Leave(int replica, const std::string& why) {
    CheckReplica(replica);
    {
      std::lock_guard<std::mutex> lock(mu_);
      departed_[replica] = why.empty() ? "left" : why;
      if (current_->count > 0 && !current_->arrived[replica]) {
        BreakLocked(current_, MissingReplicasThatLeft(*current_));
      }
    }
    cv_.notify_all();
  }

  // Ends every wait, now and later, with `why`.
  void Abort(const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (broken_.empty()) broken_ = why;
      FailLocked(current_, broken_);
    }
    cv_.notify_all();
  }

  // The message every arrival fails with, or empty while the rendezvous works.
  std::string broken() const {
    std::lock_guard<std::mutex> lock(mu_);
    return broken_;
  }

 private:
  void CheckReplica(int replica) const {
    if (replica < 0 || replica >= num_replicas_) {
      throw RuntimeError("replica " + std::to_string(replica) + " out of range: there are " +
                         std::to_string(num_replicas_) + " replicas");
    }
  }

  static void FailLocked(const std::shared_ptr<Round>& round, const std::string& error) {
    if (round->done) return;
    round->error = error;
    round->broke = true;
    round->done = true;
    round->parts.clear();
  }

  // Fails `round` with `why`, breaks the rendezvous and wakes every waiter.
  void BreakLocked(const std::shared_ptr<Round>& round, const std::string& why) {
    if (broken_.empty()) broken_ = why;
    FailLocked(round, broken_);
    FailLocked(current_, broken_);
    cv_.notify_all();
  }

  // Why the replicas that arrived at `round` can never be joined by the others, or "".
  std::string MissingReplicasThatLeft(const Round& round) const {
    std::string why;
    for (int r = 0; r < num_replicas_; ++r) {
      if (round.arrived[r] || departed_[r].empty()) continue;
      why += (why.empty() ? "" : "; ") + ("replica " + std::to_string(r) + " " + departed_[r]);
    }
    if (why.empty()) return why;
    return "replicas " + internal::JoinOrdinals(Arrived(round)) + " wait to run " + FirstWhat(round) +
           " together with the others, which will not come: " + why;
  }

  std::vector<int> Arrived(const Round& round) const {
    std::vector<int> out;
    for (int r = 0; r < num_replicas_; ++r)
      if (round.arrived[r]) out.push_back(r);
    return out;
  }

  std::string FirstWhat(const Round& round) const {
    for (int r = 0; r < num_replicas_; ++r)
      if (round.arrived[r]) return round.whats[r];
    return "nothing";
  }

  std::string KeyMismatch(const Round& round) const {
    std::map<uint64_t, std::vector<int>> by_key;
    for (int r = 0; r < num_replicas_; ++r) by_key[round.keys[r]].push_back(r);
    if (by_key.size() == 1) return "";
    std::string out = "the replicas ran different graphs at the same step (every replica must run the same "
                      "collectives in the same order):";
    for (const auto& [key, replicas] : by_key) {
      out += "\n  replica" + std::string(replicas.size() > 1 ? "s " : " ") + internal::JoinOrdinals(replicas) +
             ": " + round.whats[replicas[0]];
    }
    return out;
  }

  std::string TimeoutMessage(const Round& round) const {
    std::vector<int> missing;
    for (int r = 0; r < num_replicas_; ++r)
      if (!round.arrived[r]) missing.push_back(r);
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3g", timeout_.count() / 1000.0);
    return "replica" + std::string(missing.size() > 1 ? "s " : " ") + internal::JoinOrdinals(missing) +
           " did not arrive within " + seconds + " s (XLA_REPLICA_TIMEOUT) to run " + FirstWhat(round) +
           " with replicas " + internal::JoinOrdinals(Arrived(round));
  }

  const int num_replicas_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> departed_;  // per replica: why it left, or empty
  std::string broken_;
  std::shared_ptr<Round> current_;
};

}  // namespace torch_xla::runtime
