#pragma once
// SPMD: a value's layout over the devices, set inside a graph, and the passage between
// the global view of a value and each device's own piece of it (manual sharding).
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

OpKind ShardingConstraintOp();
OpKind SpmdFullToShardOp();
OpKind SpmdShardToFullOp();

}  // namespace torch_xla::ir
