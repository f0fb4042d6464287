#include "ir/builder_sharding.h"

#include <memory>

namespace torch_xla::ir {

OpKind ShardingConstraintOp() {
  static const OpKind kind = OpKind::Get("xla::sharding_constraint");
  return kind;
}

Value ShardingConstraint(const Value& value, const runtime::Sharding& sharding) {
  Attrs attrs;
  attrs.ints = sharding.Encode();
  return Value(std::make_shared<Node>(ShardingConstraintOp(), std::vector<Value>{value}, value.shape(),
                                      std::move(attrs)));
}

}  // namespace torch_xla::ir
