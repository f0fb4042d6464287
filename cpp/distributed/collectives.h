#pragma once
// Collectives across replicas, and the replication they run in, for LibTorch programs and
// the Python bindings (xm.all_reduce and friends).
//
// A replication (exec/replication.h) is a set of devices whose replicas run in step, one
// thread per device (or one thread syncing them all). Each replica calls a collective
// with its tensor on its own device and gets a pending result; the collective runs when
// the replicas sync their devices, as one replicated computation. A device outside any
// replication is a replication of one: the results are what the collectives give one
// replica. Replica groups name replicas by ordinal (their index in the replication's
// device list); empty groups mean one group of all replicas.
//
// Bad arguments raise c10::Error (Python RuntimeError) naming the collective and the shapes.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace torch_xla {

using ReplicaGroups = std::vector<std::vector<int64_t>>;

// `inputs` (all on one device) reduced over each group with reduce_type ("sum", "mul",
// "and", "or", "min", "max"), then multiplied by `scale`. New tensors; inputs of one
// dtype share one collective.
std::vector<at::Tensor> AllReduce(const std::string& reduce_type, const std::vector<at::Tensor>& inputs, double scale,
                                  const ReplicaGroups& groups = {});
// The group's inputs concatenated along `dim`, in group order.
at::Tensor AllGather(const at::Tensor& input, int64_t dim, const ReplicaGroups& groups = {});
// The reduction over the group times `scale`, split along scatter_dim into shard_count
// blocks (shard_count is the group size); replica i of a group keeps block i.
at::Tensor ReduceScatter(const std::string& reduce_type, const at::Tensor& input, double scale, int64_t scatter_dim,
                         int64_t shard_count, const ReplicaGroups& groups = {});
// `input` split along split_dim into split_count blocks (the group size), block i sent to
// group member i; the received blocks concatenated along concat_dim in member order.
at::Tensor AllToAll(const at::Tensor& input, int64_t split_dim, int64_t concat_dim, int64_t split_count,
                    const ReplicaGroups& groups = {});
// Each (source, target) pair sends the source replica's input to the target replica;
// replicas that are nobody's target get zeros.
at::Tensor CollectivePermute(const at::Tensor& input, const std::vector<std::pair<int64_t, int64_t>>& pairs);

// Starts a replication over devices xla:<ordinals...> (replica r on ordinals[r]); one at
// a time per process. Waits for the other replicas end after $XLA_REPLICA_TIMEOUT
// seconds (default 300) with an error.
void BeginReplication(const std::vector<int>& ordinals);
// Ends the running replication; replicas still waiting at its rendezvous fail with `why`.
void EndReplication(const std::string& why = "");
// Replica `replica` of the running replication will not sync any more (`why`: it finished
// or failed): replicas waiting for it fail at once instead of timing out.
void LeaveReplication(int replica, const std::string& why);
// Every replica of the running replication that waits, or will wait, fails with `why`.
void AbortReplication(const std::string& why);
// The running replication's device ordinals by replica; empty when none is running.
std::vector<int> ReplicationDevices();
// How long a replica waits for the others: $XLA_REPLICA_TIMEOUT seconds, default 300.
// Throws c10::Error for a value that is not a positive number.
double ReplicaTimeoutSeconds();

}  // namespace torch_xla
