#include "exec/replication.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "exec/graph_executor.h"
#include "runtime/sharding.h"

namespace torch_xla::exec {
namespace {

// A replica may wait this long for the others: their tracing, their first compile of a
// large graph, their data loading. A lost replica costs this long before the error.
constexpr double kDefaultTimeoutSeconds = 300;

struct Active {
  std::mutex mu;
  std::shared_ptr<Replication> replication;
  std::atomic<bool> running{false};
};

Active& GetActive() {
  static Active* active = new Active;
  return *active;
}

std::string DescribeDevices(const std::vector<int>& devices) {
  std::string out;
  for (std::size_t i = 0; i < devices.size(); ++i) out += (i ? ", xla:" : "xla:") + std::to_string(devices[i]);
  return out;
}

}  // namespace

Replication::Replication(std::vector<int> devices, std::chrono::milliseconds timeout)
    : devices_(std::move(devices)), rendezvous_(static_cast<int>(devices_.size()), timeout) {}

int Replication::ReplicaOf(int device) const {
  auto it = std::find(devices_.begin(), devices_.end(), device);
  return it == devices_.end() ? -1 : static_cast<int>(it - devices_.begin());
}

std::chrono::milliseconds ReplicaTimeout() {
  const char* text = std::getenv("XLA_REPLICA_TIMEOUT");
  if (text == nullptr || *text == '\0') {
    return std::chrono::milliseconds(static_cast<int64_t>(kDefaultTimeoutSeconds * 1000));
  }
  char* end = nullptr;
  double seconds = std::strtod(text, &end);
  if (*end != '\0' || !std::isfinite(seconds) || seconds <= 0 || seconds > 1e7) {
    throw std::invalid_argument(std::string("XLA_REPLICA_TIMEOUT must be a positive number of seconds, got '") +
                                text + "'");
  }
  return std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000)));
}

std::shared_ptr<Replication> BeginReplication(const std::vector<int>& devices) {
  if (devices.empty()) throw std::invalid_argument("a replication needs at least one device");
  if (runtime::spmd::Enabled() && devices.size() > 1)
    throw std::invalid_argument(
        "cannot replicate over " + std::to_string(devices.size()) +
        " devices in SPMD mode: after torch_xla.runtime.use_spmd() one program runs on every device and "
        "xla:0 stands for all of them; shard with torch_xla.distributed.spmd instead of xmp.spawn");
  int count = runtime::Client::Get().device_count();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] < 0 || devices[i] >= count) {
      throw std::invalid_argument("cannot replicate over xla:" + std::to_string(devices[i]) + ": there are " +
                                  std::to_string(count) + " devices (xla:0 to xla:" + std::to_string(count - 1) +
                                  ")");
    }
    if (std::find(devices.begin(), devices.begin() + i, devices[i]) != devices.begin() + i) {
      throw std::invalid_argument("cannot replicate over " + DescribeDevices(devices) + ": xla:" +
                                  std::to_string(devices[i]) + " is listed twice");
    }
  }
  auto replication = std::make_shared<Replication>(devices, ReplicaTimeout());
  // Work left pending on the devices from before is run now, alone: the replicas' first
  // graphs must hold only what the replicas traced.
  SyncDevices(devices, /*wait=*/false);
  Active& active = GetActive();
  std::lock_guard<std::mutex> lock(active.mu);
  if (active.replication) {
    throw std::invalid_argument("a replication over " + DescribeDevices(active.replication->devices()) +
                                " is running already; replications do not nest (one xmp.spawn or DataParallel "
                                "at a time)");
  }
  active.replication = replication;
  active.running.store(true, std::memory_order_relaxed);
  return replication;
}

void EndReplication(const std::string& why) {
  std::shared_ptr<Replication> ended;
  {
    Active& active = GetActive();
    std::lock_guard<std::mutex> lock(active.mu);
    ended.swap(active.replication);
    active.running.store(false, std::memory_order_relaxed);
  }
  if (!ended) return;
  ended->rendezvous().Abort(why.empty() ? "the replication has ended" : why);
  // What the replicas left pending (a replica that failed, or returned without a last
  // mark_step) stays computable when used, but must not join the next run's graphs.
  for (int device : ended->devices()) ForgetPendingTensors(device);
}

std::shared_ptr<Replication> ActiveReplication() {
  Active& active = GetActive();
  std::lock_guard<std::mutex> lock(active.mu);
  return active.replication;
}

bool ReplicationRunning() { return GetActive().running.load(std::memory_order_relaxed); }

std::shared_ptr<Replication> ReplicationOf(int device) {
  std::shared_ptr<Replication> replication = ActiveReplication();
  return replication && replication->ReplicaOf(device) >= 0 ? replication : nullptr;
}

}  // namespace torch_xla::exec
