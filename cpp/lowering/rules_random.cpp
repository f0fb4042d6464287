// Lowering of the random bit generator (state in, next state and bits out).
#include "lowering/lowering_context.h"

namespace torch_xla::lowering {
namespace {

std::vector<Ssa> LowerRngBitGenerator(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return ctx.EmitMulti("stablehlo.rng_bit_generator", operands, node.shapes(),
                       "rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>");
}
LoweringRule rng_rule("stablehlo.rng_bit_generator", LowerRngBitGenerator);

}  // namespace
}  // namespace torch_xla::lowering
