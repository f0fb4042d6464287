// Lowering rules of data-movement operations: broadcast, transpose, slice, concatenate,
// pad, reverse, iota (their attributes: ir/builder.h).
#include "ir/builder.h"
#include "lowering/lowering_context.h"

namespace torch_xla::lowering {
namespace {

std::vector<Ssa> LowerBroadcastInDim(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::BroadcastInDimAttrs a = ir::BroadcastInDimAttrs::FromAttrs(node.attrs());
  return {ctx.Emit("stablehlo.broadcast_in_dim", operands, node.shape(),
                   "broadcast_dimensions = " + I64Array(a.broadcast_dims))};
}
LoweringRule broadcast_rule("stablehlo.broadcast_in_dim", LowerBroadcastInDim);

std::vector<Ssa> LowerTranspose(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::TransposeAttrs a = ir::TransposeAttrs::FromAttrs(node.attrs());
  return {ctx.Emit("stablehlo.transpose", operands, node.shape(), "permutation = " + I64Array(a.permutation))};
}
LoweringRule transpose_rule("stablehlo.transpose", LowerTranspose);

std::vector<Ssa> LowerSlice(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::SliceAttrs a = ir::SliceAttrs::FromAttrs(node.attrs());
  std::string attrs = "start_indices = " + I64Array(a.start) + ", limit_indices = " + I64Array(a.limit) +
                      ", strides = " + I64Array(a.strides);
  return {ctx.Emit("stablehlo.slice", operands, node.shape(), attrs)};
}
LoweringRule slice_rule("stablehlo.slice", LowerSlice);

std::vector<Ssa> LowerConcatenate(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::ConcatenateAttrs a = ir::ConcatenateAttrs::FromAttrs(node.attrs());
  return {ctx.Emit("stablehlo.concatenate", operands, node.shape(), "dimension = " + std::to_string(a.dim) + " : i64")};
}
LoweringRule concatenate_rule("stablehlo.concatenate", LowerConcatenate);

// operands: input, padding value (scalar).
std::vector<Ssa> LowerPad(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::PadAttrs a = ir::PadAttrs::FromAttrs(node.attrs());
  std::string attrs = "edge_padding_low = " + I64Array(a.low) + ", edge_padding_high = " + I64Array(a.high) +
                      ", interior_padding = " + I64Array(a.interior);
  return {ctx.Emit("stablehlo.pad", operands, node.shape(), attrs)};
}
LoweringRule pad_rule("stablehlo.pad", LowerPad);

std::vector<Ssa> LowerReverse(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::ReverseAttrs a = ir::ReverseAttrs::FromAttrs(node.attrs());
  return {ctx.Emit("stablehlo.reverse", operands, node.shape(), "dimensions = " + I64Array(a.dims))};
}
LoweringRule reverse_rule("stablehlo.reverse", LowerReverse);

std::vector<Ssa> LowerIota(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::IotaAttrs a = ir::IotaAttrs::FromAttrs(node.attrs());
  return {ctx.Emit("stablehlo.iota", operands, node.shape(), "iota_dimension = " + std::to_string(a.dim) + " : i64")};
}
LoweringRule iota_rule("stablehlo.iota", LowerIota);

}  // namespace
}  // namespace torch_xla::lowering
