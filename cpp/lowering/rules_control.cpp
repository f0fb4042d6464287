// Lowering rules of control flow: stablehlo.while over IR regions (ir/region.h).
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

}  // namespace
}  // namespace torch_xla::lowering
