// SPMD sharding constraints: XLA's form is a custom call named "Sharding" carrying the
// layout in its mhlo.sharding attribute, which the partitioner reads and removes.
// Manual sharding is XLA's pair of custom calls SPMDFullToShardShape and
// SPMDShardToFullShape: the partitioner needs the global side annotated by a "Sharding"
// call of its layout right next to each, and the call itself annotated {manual} (into
// the per-device view) or with the global layout (out of it).
#include "ir/builder_sharding.h"
#include "lowering/lowering_context.h"

#include <stdexcept>

namespace torch_xla::lowering {
namespace {

std::string ShardingAttr(const std::string& target, const std::string& sharding) {
  return "call_target_name = \"" + target + "\", mhlo.sharding = \"" + sharding + "\"";
}

// XLA's partitioner aborts the process on a layout given to a per-device piece: refused
// here with the shapes (the kernels refuse it first where they can see it).
void RefuseManual(const LoweringContext& ctx, Ssa operand, const Node& node, const std::string& what) {
  if (ctx.IsManual(operand))
    throw std::runtime_error(what + " of a value of shape " + node.operand(0).shape().ToString() +
                             " computed from a manually sharded value ({manual}: each device's own piece); "
                             "turn the pieces back into a global tensor first "
                             "(torch_xla.distributed.spmd.disable_manual_sharding)");
}

std::vector<Ssa> LowerShardingConstraint(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const runtime::Sharding sharding = runtime::Sharding::Decode(node.attrs().ints);
  const std::string text = sharding.ToString();
  const bool manual = sharding.kind() == runtime::Sharding::Kind::kManual;
  if (!manual) RefuseManual(ctx, operands[0], node, "mark_sharding " + text);
  Ssa out = ctx.Emit("stablehlo.custom_call", operands, node.shape(), ShardingAttr("Sharding", text));
  if (manual) ctx.SetManual(out);
  if (sharding.kind() == runtime::Sharding::Kind::kTiled) ctx.SetTiled(out);
  return {out};
}
LoweringRule sharding_rule("xla::sharding_constraint", LowerShardingConstraint);

std::vector<Ssa> LowerFullToShard(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const std::string full = runtime::Sharding::Decode(node.attrs().ints).ToString();
  RefuseManual(ctx, operands[0], node, "_spmd_full_to_shard_shape");
  Ssa annotated = ctx.Emit("stablehlo.custom_call", operands, node.operand(0).shape(), ShardingAttr("Sharding", full));
  Ssa out = ctx.Emit("stablehlo.custom_call", {annotated}, node.shape(), ShardingAttr("SPMDFullToShardShape", "{manual}"));
  ctx.SetManual(out);
  return {out};
}
LoweringRule full_to_shard_rule("xla::spmd_full_to_shard_shape", LowerFullToShard);

std::vector<Ssa> LowerShardToFull(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const std::string full = runtime::Sharding::Decode(node.attrs().ints).ToString();
  Ssa annotated =
      ctx.Emit("stablehlo.custom_call", operands, node.operand(0).shape(), ShardingAttr("Sharding", "{manual}"));
  Ssa whole = ctx.Emit("stablehlo.custom_call", {annotated}, node.shape(), ShardingAttr("SPMDShardToFullShape", full));
  // Pinned by a constraint of the same layout: left to propagation (a result without a
  // layout of its own), XLA's partitioner aborts the process on the custom call.
  return {ctx.Emit("stablehlo.custom_call", {whole}, node.shape(), ShardingAttr("Sharding", full))};
}
LoweringRule shard_to_full_rule("xla::spmd_shard_to_full_shape", LowerShardToFull);


}  // namespace
}  // namespace torch_xla::lowering
