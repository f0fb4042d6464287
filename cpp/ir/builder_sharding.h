#pragma once
// SPMD: a value's layout over the devices, set inside a graph, and the passage between
// the global view of a value and each device's own piece of it (manual sharding).
#include "ir/builder.h"
#include "ir/node.h"
#include "runtime/sharding.h"

namespace torch_xla::ir {

// `value` unchanged, constrained to be laid out by `sharding` at this point of the
// program (XLA's partitioner propagates shardings from such constraints, the arguments
// and the results). The sharding is part of the node's hash.
Value ShardingConstraint(const Value& value, const runtime::Sharding& sharding);

// The global value `value`, laid out by `full` (tiled or replicated), seen from here on as
// each device's own tile of `shard_shape` ({manual}): XLA's partitioner leaves the
// operations on it unpartitioned.
Value SpmdFullToShard(const Value& value, const runtime::Sharding& full, const Shape& shard_shape);
// The inverse: per-device pieces (`value`, {manual}) assembled into the global value of
// `full_shape`, laid out by `full`.
Value SpmdShardToFull(const Value& value, const runtime::Sharding& full, const Shape& full_shape);

// Collectives between the devices' pieces inside manual sharding (XLA's all-reduce and
// reduce-scatter over partitions: channel ids and global device ids). `groups` list
// device ordinals, each device once, all of one size. `value` is a manual piece.
Value SpmdAllReduce(ReduceKind reduce, const Value& value, const std::vector<std::vector<int64_t>>& groups);
// The reduction split along `dim` into one block per group member; member i keeps block
// i (`dim`'s size must divide by the group size).
Value SpmdReduceScatter(ReduceKind reduce, const Value& value, int64_t dim,
                        const std::vector<std::vector<int64_t>>& groups);

OpKind ShardingConstraintOp();
OpKind SpmdFullToShardOp();
OpKind SpmdShardToFullOp();

}  // namespace torch_xla::ir
