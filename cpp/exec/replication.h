#pragma once
// Replication on one host: a set of devices that run as the replicas of one replicated
// computation (replica r on devices[r]). A graph with collectives on one of them is not run
// alone: it meets the same graph of every other replica at the replication's rendezvous,
// and the last to arrive launches all of them as one execution. xmp.spawn and DataParallel
// begin a replication for the devices they drive and end it when their replicas are done.
//
// One replication is active at a time in a process (replicas are threads of it).
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "runtime/replica_rendezvous.h"

namespace torch_xla::exec {

// What a replica brings to a replicated launch: its graph's arguments, and which of them
// only the graph can still read (candidates for donation: see graph_executor.cpp).
struct ReplicaArguments {
  std::vector<runtime::BufferPtr> buffers;
  std::vector<bool> donatable;
};
using ReplicaOutputs = std::vector<runtime::BufferPtr>;
using LaunchRendezvous = runtime::ReplicaRendezvous<ReplicaArguments, ReplicaOutputs>;

class Replication {
 public:
  Replication(std::vector<int> devices, std::chrono::milliseconds timeout);

  // Ordinals of the replicas' devices, by replica.
  const std::vector<int>& devices() const { return devices_; }
  int size() const { return static_cast<int>(devices_.size()); }
  // The replica that runs on `device`, or -1.
  int ReplicaOf(int device) const;
  LaunchRendezvous& rendezvous() { return rendezvous_; }

 private:
  std::vector<int> devices_;
  LaunchRendezvous rendezvous_;
};

// Starts a replication over `devices` (distinct ordinals of existing devices, at least one)
// and makes it the active one. Waits at its rendezvous time out after $XLA_REPLICA_TIMEOUT
// seconds (default 300). Throws std::invalid_argument for bad devices, a bad variable, or
// while another replication is active.
std::shared_ptr<Replication> BeginReplication(const std::vector<int>& devices);
// Ends the active replication (if any): replicas still waiting, or arriving later, fail
// with `why`.
void EndReplication(const std::string& why);
// The active replication, or null.
std::shared_ptr<Replication> ActiveReplication();
// The active replication if `device` is one of its replicas' devices, else null.
std::shared_ptr<Replication> ReplicationOf(int device);
// Whether a replication is active (a lock-free read, for tracing: while replicas run,
// values that may differ between them must not change a graph's structure, or the
// replicas' graphs would differ).
bool ReplicationRunning();

// $XLA_REPLICA_TIMEOUT as a duration (default 300 s); throws std::invalid_argument,
// naming the variable, for anything but a positive number of seconds.
std::chrono::milliseconds ReplicaTimeout();

}  // namespace torch_xla::exec
