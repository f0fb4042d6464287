#include "ir/builder_sharding.h"

#include <memory>

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

}  // namespace torch_xla::ir
