// SPMD sharding constraints: XLA's form is a custom call named "Sharding" carrying the
// layout in its mhlo.sharding attribute, which the partitioner reads and removes.
#include "ir/builder_sharding.h"
#include "lowering/lowering_context.h"

namespace torch_xla::lowering {
namespace {

std::vector<Ssa> LowerShardingConstraint(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const std::string text = runtime::Sharding::Decode(node.attrs().ints).ToString();
  return {ctx.Emit("stablehlo.custom_call", operands, node.shape(),
                   "call_target_name = \"Sharding\", mhlo.sharding = \"" + text + "\"")};
}
LoweringRule sharding_rule("xla::sharding_constraint", LowerShardingConstraint);

}  // namespace
}  // namespace torch_xla::lowering
