#pragma once
// Constructors of the collective IR ops (StableHLO's all_reduce, all_gather,
// reduce_scatter, all_to_all, collective_permute) with their shape rules. They exchange
// data between the replicas of a replicated computation (exec/replication.h); replica
// groups name replicas by ordinal. Like ir/builder.h, every function checks its inputs and
// throws std::invalid_argument naming the op and the shapes.
#include <cstdint>
#include <utility>
#include <vector>

#include "ir/builder.h"

namespace torch_xla::ir {

namespace op {
extern const OpKind kAllReduce, kAllGather, kReduceScatter, kAllToAll, kCollectivePermute, kCrossProcess;
}  // namespace op

// Whether `kind` is one of the in-process collective ops above: a graph holding one must
// run as one replicated computation on every replica of the process.
bool IsCollective(OpKind kind);

// Replica groups: each group lists replica ordinals; together the groups hold each of
// the replicas 0..num_replicas-1 exactly once, and all have the same size. A collective
// combines the values of the replicas of one group. Empty means one group of them all.
using ReplicaGroups = std::vector<std::vector<int64_t>>;

// `groups` checked for `num_replicas` replicas and written out in full (the empty list
// becomes one group of every replica). Throws naming `op` when they are not as above.
ReplicaGroups NormalizeReplicaGroups(const ReplicaGroups& groups, int64_t num_replicas, const char* op);

// The attributes of a collective node, by name. Fields an op does not use stay 0.
struct CollectiveAttrs {
  ReduceKind reduce = ReduceKind::kSum;  // all_reduce, reduce_scatter
  int64_t dim = 0;          // all_gather: gather dim; reduce_scatter: scatter dim; all_to_all: split dim
  int64_t concat_dim = 0;   // all_to_all
  int64_t num_replicas = 0;
  ReplicaGroups groups;     // normalized groups; collective_permute: its (source, target) pairs

  Attrs ToAttrs() const;
  // Throws std::invalid_argument when `attrs` are not of this form.
  static CollectiveAttrs FromAttrs(const Attrs& attrs);
};

// stablehlo.all_reduce of every value (one element type for all, the reduction's) over
// the replicas of each group: one node with one result per value. `reduce`: kSum, kProd,
// kMax, kMin for numbers; kAnd, kOr for integers and bool (bool also takes kMax, kMin).
std::vector<Value> AllReduce(ReduceKind reduce, const std::vector<Value>& values, const ReplicaGroups& groups,
                             int64_t num_replicas);
// The group's values concatenated along `dim`, in group order.
Value AllGather(const Value& value, int64_t dim, const ReplicaGroups& groups, int64_t num_replicas);
// The reduction over the group, split along `dim` into one block per group member; member
// i keeps block i. `dim`'s size must be divisible by the group size.
Value ReduceScatter(ReduceKind reduce, const Value& value, int64_t dim, const ReplicaGroups& groups,
                    int64_t num_replicas);
// `value` split along split_dim into one block per group member, block i sent to member i,
// the received blocks concatenated along concat_dim in member order. The group size must
// equal split_count and divide split_dim's size.
Value AllToAll(const Value& value, int64_t split_dim, int64_t concat_dim, int64_t split_count,
               const ReplicaGroups& groups, int64_t num_replicas);
// Each (source, target) pair sends source's value to target; a replica that is nobody's
// target receives zeros. Sources are distinct, and so are targets.
Value CollectivePermute(const Value& value, const std::vector<std::pair<int64_t, int64_t>>& pairs,
                        int64_t num_replicas);

// ---- across processes ------------------------------------------------------------------
// With several processes (torchrun), each process runs `local_replicas` replicas as one
// replicated computation, and replica r of process p has the global ordinal
// p * local_replicas + r. A collective over the global replicas is an in-process
// collective followed by a cross-process node, which the host exchanges with the other
// processes (the kernel registered under host/kernel_targets.h's
// kCrossProcessTarget, given the replica's index in the process).

// What a cross-process node computes.
enum class CrossProcessKind : int64_t {
  // Operand: this process's sum (of the result's shape). Result: the sum over every process.
  kAllReduceSum = 0,
  // Operand: the values of the process's replicas stacked, [local_replicas, ...]. Result:
  // the collective described by the attrs, computed from every replica's value.
  kAllReduce = 1,
  kAllGather = 2,
  kReduceScatter = 3,
  kAllToAll = 4,
  kCollectivePermute = 5,
};

// The attributes of a cross-process node: what it computes, the replicas per process,
// and the collective's own attributes (global groups and replica count).
struct CrossProcessAttrs {
  CrossProcessKind what = CrossProcessKind::kAllReduceSum;
  int64_t local_replicas = 1;
  CollectiveAttrs collective;

  Attrs ToAttrs() const;
  // Throws std::invalid_argument when `attrs` are not of this form.
  static CrossProcessAttrs FromAttrs(const Attrs& attrs);
};

// The cross-process node, of `result` shape and type (checked by the caller: the
// functions above for the in-process part, then this).
Value CrossProcess(const CrossProcessAttrs& attrs, const Value& operand, Shape result);

}  // namespace torch_xla::ir
