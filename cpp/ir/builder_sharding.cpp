#include "ir/builder_sharding.h"

#include "ir/builder_collectives.h"

#include <memory>
#include <stdexcept>
#include <string>

namespace torch_xla::ir {

OpKind ShardingConstraintOp() {
  static const OpKind kind = OpKind::Get("xla::sharding_constraint");
  return kind;
}

OpKind SpmdFullToShardOp() {
  static const OpKind kind = OpKind::Get("xla::spmd_full_to_shard_shape");
  return kind;
}

OpKind SpmdShardToFullOp() {
  static const OpKind kind = OpKind::Get("xla::spmd_shard_to_full_shape");
  return kind;
}

Value ShardingConstraint(const Value& value, const runtime::Sharding& sharding) {
  Attrs attrs;
  attrs.ints = sharding.Encode();
  return Value(std::make_shared<Node>(ShardingConstraintOp(), std::vector<Value>{value}, value.shape(),
                                      std::move(attrs)));
}

Value SpmdFullToShard(const Value& value, const runtime::Sharding& full, const Shape& shard_shape) {
  Attrs attrs;
  attrs.ints = full.Encode();
  return Value(std::make_shared<Node>(SpmdFullToShardOp(), std::vector<Value>{value}, shard_shape, std::move(attrs)));
}

Value SpmdShardToFull(const Value& value, const runtime::Sharding& full, const Shape& full_shape) {
  Attrs attrs;
  attrs.ints = full.Encode();
  return Value(std::make_shared<Node>(SpmdShardToFullOp(), std::vector<Value>{value}, full_shape, std::move(attrs)));
}

namespace {

// The replicas' collective attributes (ir/builder_collectives.h), over the partitions of
// one program: num_replicas 1, groups of device ids.
Attrs CollectiveAttrsOf(ReduceKind reduce, int64_t dim, const std::vector<std::vector<int64_t>>& groups) {
  CollectiveAttrs a;
  a.reduce = reduce;
  a.dim = dim;
  a.num_replicas = 1;
  a.groups = groups;
  return a.ToAttrs();
}

}  // namespace

Value SpmdAllReduce(ReduceKind reduce, const Value& value, const std::vector<std::vector<int64_t>>& groups) {
  static const OpKind kind = OpKind::Get("xla::spmd_all_reduce");
  return Value(std::make_shared<Node>(kind, std::vector<Value>{value}, value.shape(), CollectiveAttrsOf(reduce, 0, groups)));
}

Value SpmdReduceScatter(ReduceKind reduce, const Value& value, int64_t dim,
                        const std::vector<std::vector<int64_t>>& groups) {
  static const OpKind kind = OpKind::Get("xla::spmd_reduce_scatter");
  const int64_t members = groups.empty() ? 1 : static_cast<int64_t>(groups[0].size());
  if (dim < 0 || dim >= value.shape().rank() || value.shape().dims[dim] % members != 0)
    throw std::invalid_argument("_xla_spmd_reduce_scatter: dimension " + std::to_string(dim) + " of a value of shape " +
                                value.shape().ToString() + " does not split into " + std::to_string(members) +
                                " blocks (one per group member)");
  Shape out = value.shape();
  out.dims[dim] /= members;
  return Value(std::make_shared<Node>(kind, std::vector<Value>{value}, out, CollectiveAttrsOf(reduce, dim, groups)));
}

}  // namespace torch_xla::ir
