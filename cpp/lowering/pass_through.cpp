#include "lowering/pass_through.h"

#include <string>

#include "host/pass_through_kernel.h"

namespace torch_xla::lowering {

Ssa EmitPassThrough(LoweringContext& ctx, Ssa v) {
  const Shape shape = ctx.TypeOf(v);  // a copy: Emit may move the table
  std::string attrs = std::string("call_target_name = \"") + host::kPassThroughTarget +
                      "\", api_version = 4 : i32, output_operand_aliases = [#stablehlo.output_operand_alias<"
                      "output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]";
  return ctx.Emit("stablehlo.custom_call", {v}, shape, attrs);
}

namespace {

// xla::pass_through: ir::Materialize on the CPU device.
std::vector<Ssa> LowerPassThrough(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return {EmitPassThrough(ctx, operands[0])};
}
LoweringRule pass_through_rule("xla::pass_through", LowerPassThrough);

}  // namespace
}  // namespace torch_xla::lowering
