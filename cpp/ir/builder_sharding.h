#pragma once
// SPMD: a value's layout over the devices, set inside a graph.
#include "ir/node.h"
#include "runtime/sharding.h"

namespace torch_xla::ir {

// `value` unchanged, constrained to be laid out by `sharding` at this point of the
// program (XLA's partitioner propagates shardings from such constraints, the arguments
// and the results). The sharding is part of the node's hash.
Value ShardingConstraint(const Value& value, const runtime::Sharding& sharding);

OpKind ShardingConstraintOp();

}  // namespace torch_xla::ir
