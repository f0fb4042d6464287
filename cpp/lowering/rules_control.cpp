// Lowering rules of control flow: stablehlo.while over IR regions (ir/region.h), calls of
// the functions built in Python (ir/user_function.h), and the optimization barrier
// (ir/builder_control.h).
#include "ir/user_function.h"
#include "lowering/lowering_context.h"

namespace torch_xla::lowering {
namespace {

// Operands: the initial carried values; regions: condition, body; results: the final
// carried values.
std::vector<Ssa> LowerWhile(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const auto& loop = static_cast<const ir::RegionNode&>(node);
  std::vector<std::string> regions;
  for (const ir::Region& r : loop.regions()) regions.push_back(ctx.LowerRegion(r));
  return ctx.EmitWithRegions("stablehlo.while", operands, node.shapes(), regions, {});
}
LoweringRule while_rule("stablehlo.while", LowerWhile);

// The function joins the module beside @main (once per module); the node becomes
// `func.call @symbol(operands)`, which XLA inlines.
std::vector<Ssa> LowerUserCall(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::UserFunction& function = static_cast<const ir::UserCallNode&>(node).function();
  ctx.AddFunction(function.symbol, function.text);
  return ctx.EmitMulti("func.call", operands, node.shapes(), "callee = @" + function.symbol);
}
LoweringRule user_call_rule("xla::user_computation", LowerUserCall);

std::vector<Ssa> LowerOptimizationBarrier(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return ctx.EmitMulti("stablehlo.optimization_barrier", operands, node.shapes());
}
LoweringRule barrier_rule("stablehlo.optimization_barrier", LowerOptimizationBarrier);

}  // namespace
}  // namespace torch_xla::lowering
