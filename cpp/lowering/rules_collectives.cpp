// Lowering rules of the collective ops (ir/builder_collectives.h). Each emits the StableHLO
// collective with explicit replica groups and no channel handle: the module is compiled
// once for all replicas (num_replicas in its attributes), so every replica runs the same
// collective op ids; a channel handle would make all_to_all and collective_permute fail
// to compile while num_partitions is 1. Also manual sharding's collectives, between the
// partitions of an SPMD program (below).
#include "ir/builder_collectives.h"
#include "host/kernel_targets.h"
#include "lowering/lowering_context.h"

namespace torch_xla::lowering {
namespace {

using ir::CollectiveAttrs;
using ir::ReduceKind;

// `dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`
std::string GroupsAttribute(const ir::ReplicaGroups& groups) {
  std::string s = "dense<[";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    s += g ? ", [" : "[";
    for (std::size_t i = 0; i < groups[g].size(); ++i) s += (i ? ", " : "") + std::to_string(groups[g][i]);
    s += "]";
  }
  std::size_t size = groups.empty() ? 0 : groups[0].size();
  return s + "]> : tensor<" + std::to_string(groups.size()) + "x" + std::to_string(size) + "xi64>";
}

// The region's combining op. Bool tensors take max as or and min as and.
const char* CombineOp(ReduceKind reduce, ElementType type) {
  bool pred = type == ElementType::kPred;
  switch (reduce) {
    case ReduceKind::kSum: return "stablehlo.add";
    case ReduceKind::kProd: return "stablehlo.multiply";
    case ReduceKind::kMax: return pred ? "stablehlo.or" : "stablehlo.maximum";
    case ReduceKind::kMin: return pred ? "stablehlo.and" : "stablehlo.minimum";
    case ReduceKind::kAnd: return "stablehlo.and";
    case ReduceKind::kOr: return "stablehlo.or";
  }
  return "stablehlo.add";
}

// xla::all_reduce: one variadic stablehlo.all_reduce (every operand of one element type).
std::vector<Ssa> LowerAllReduce(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  CollectiveAttrs a = CollectiveAttrs::FromAttrs(node.attrs());
  ElementType type = node.shape(0).type;
  std::string region = ctx.BinaryRegion(CombineOp(a.reduce, type), type);
  return ctx.EmitWithRegion("stablehlo.all_reduce", operands, node.shapes(), region,
                            "replica_groups = " + GroupsAttribute(a.groups));
}
LoweringRule all_reduce_rule("xla::all_reduce", LowerAllReduce);

std::vector<Ssa> LowerAllGather(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  CollectiveAttrs a = CollectiveAttrs::FromAttrs(node.attrs());
  return {ctx.Emit("stablehlo.all_gather", operands, node.shape(),
                   "all_gather_dim = " + std::to_string(a.dim) + " : i64, replica_groups = " +
                       GroupsAttribute(a.groups))};
}
LoweringRule all_gather_rule("xla::all_gather", LowerAllGather);

std::vector<Ssa> LowerReduceScatter(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  CollectiveAttrs a = CollectiveAttrs::FromAttrs(node.attrs());
  ElementType type = node.shape().type;
  std::string region = ctx.BinaryRegion(CombineOp(a.reduce, type), type);
  return ctx.EmitWithRegion("stablehlo.reduce_scatter", operands, {node.shape()}, region,
                            "scatter_dimension = " + std::to_string(a.dim) + " : i64, replica_groups = " +
                                GroupsAttribute(a.groups));
}
LoweringRule reduce_scatter_rule("xla::reduce_scatter", LowerReduceScatter);

std::vector<Ssa> LowerAllToAll(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  CollectiveAttrs a = CollectiveAttrs::FromAttrs(node.attrs());
  return {ctx.Emit("stablehlo.all_to_all", operands, node.shape(),
                   "split_dimension = " + std::to_string(a.dim) + " : i64, concat_dimension = " +
                       std::to_string(a.concat_dim) + " : i64, split_count = " +
                       std::to_string(a.groups[0].size()) + " : i64, replica_groups = " + GroupsAttribute(a.groups))};
}
LoweringRule all_to_all_rule("xla::all_to_all", LowerAllToAll);

// The (source, target) pairs are kept as two-member groups.
std::vector<Ssa> LowerCollectivePermute(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  CollectiveAttrs a = CollectiveAttrs::FromAttrs(node.attrs());
  return {ctx.Emit("stablehlo.collective_permute", operands, node.shape(),
                   "source_target_pairs = " + GroupsAttribute(a.groups))};
}
LoweringRule collective_permute_rule("xla::collective_permute", LowerCollectivePermute);

// xla::cross_process: a call of the cross-process host kernel with the replica's index in
// its process; it has effects beyond its result (the other processes wait for it), so XLA
// must neither drop nor duplicate it. The node's attrs are the kernel's config. The calls
// of one graph are chained (LoweringContext::LastOrderedCall): the processes' exchanges
// on a replica's process group meet in the order they are issued, and two that XLA ran
// concurrently could be issued in different orders by different processes.
std::vector<Ssa> LowerCrossProcess(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  Ssa replica = ctx.Emit("stablehlo.replica_id", {}, Shape(ElementType::kU32, {}));
  std::vector<Ssa> call_operands{operands[0], replica};
  if (std::optional<Ssa> previous = ctx.LastOrderedCall()) call_operands.push_back(*previous);
  std::string attrs = std::string("call_target_name = \"") + host::kCrossProcessTarget +
                      "\", api_version = 4 : i32, has_side_effect = true, backend_config = {config = " +
                      I64Array(node.attrs().ints) + "}";
  Ssa result = ctx.Emit("stablehlo.custom_call", call_operands, node.shape(), attrs);
  ctx.SetLastOrderedCall(result);
  return {result};
}
LoweringRule cross_process_rule("xla::cross_process", LowerCrossProcess);

// The collectives between the per-device pieces of manual sharding (ir/builder_sharding.h):
// over the partitions of one SPMD program, so each carries a channel id of its own and
// names devices by their global ids; their results are manual pieces too.
std::string PartitionCollectiveAttributes(LoweringContext& ctx, const CollectiveAttrs& a) {
  return "channel_handle = #stablehlo.channel_handle<handle = " + std::to_string(ctx.NextChannelId()) +
         ", type = 1>, replica_groups = " + GroupsAttribute(a.groups) + ", use_global_device_ids";
}

std::vector<Ssa> LowerSpmdAllReduce(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  CollectiveAttrs a = CollectiveAttrs::FromAttrs(node.attrs());
  ElementType type = node.shape().type;
  std::vector<Ssa> out = ctx.EmitWithRegion("stablehlo.all_reduce", operands, {node.shape()},
                                            ctx.BinaryRegion(CombineOp(a.reduce, type), type),
                                            PartitionCollectiveAttributes(ctx, a));
  ctx.SetManual(out[0]);
  return out;
}
LoweringRule spmd_all_reduce_rule("xla::spmd_all_reduce", LowerSpmdAllReduce);

std::vector<Ssa> LowerSpmdReduceScatter(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  CollectiveAttrs a = CollectiveAttrs::FromAttrs(node.attrs());
  ElementType type = node.shape().type;
  std::vector<Ssa> out = ctx.EmitWithRegion(
      "stablehlo.reduce_scatter", operands, {node.shape()}, ctx.BinaryRegion(CombineOp(a.reduce, type), type),
      "scatter_dimension = " + std::to_string(a.dim) + " : i64, " + PartitionCollectiveAttributes(ctx, a));
  ctx.SetManual(out[0]);
  return out;
}
LoweringRule spmd_reduce_scatter_rule("xla::spmd_reduce_scatter", LowerSpmdReduceScatter);

}  // namespace
}  // namespace torch_xla::lowering
