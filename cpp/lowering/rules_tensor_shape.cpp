// Lowering rules of data-movement operations: broadcast, transpose, slice, concatenate,
// pad, reverse, iota.
#include "lowering/lowering_context.h"

namespace torch_xla::lowering {
namespace {

std::vector<int64_t> Range(const std::vector<int64_t>& v, std::size_t begin, std::size_t count) {
  return std::vector<int64_t>(v.begin() + begin, v.begin() + begin + count);
}

// attrs.ints: the broadcast_dimensions (output dim of each operand dim).
std::vector<Ssa> LowerBroadcastInDim(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return {ctx.Emit("stablehlo.broadcast_in_dim", operands, node.shape(),
                   "broadcast_dimensions = " + I64Array(node.attrs().ints))};
}
LoweringRule broadcast_rule("stablehlo.broadcast_in_dim", LowerBroadcastInDim);

// attrs.ints: the permutation.
std::vector<Ssa> LowerTranspose(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return {ctx.Emit("stablehlo.transpose", operands, node.shape(), "permutation = " + I64Array(node.attrs().ints))};
}
LoweringRule transpose_rule("stablehlo.transpose", LowerTranspose);

// attrs.ints: start indices, limit indices, strides (rank each).
std::vector<Ssa> LowerSlice(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const auto& a = node.attrs().ints;
  std::size_t rank = a.size() / 3;
  std::string attrs = "start_indices = " + I64Array(Range(a, 0, rank)) +
                      ", limit_indices = " + I64Array(Range(a, rank, rank)) +
                      ", strides = " + I64Array(Range(a, 2 * rank, rank));
  return {ctx.Emit("stablehlo.slice", operands, node.shape(), attrs)};
}
LoweringRule slice_rule("stablehlo.slice", LowerSlice);

// attrs.ints[0]: the dimension.
std::vector<Ssa> LowerConcatenate(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return {ctx.Emit("stablehlo.concatenate", operands, node.shape(),
                   "dimension = " + std::to_string(node.attrs().ints[0]) + " : i64")};
}
LoweringRule concatenate_rule("stablehlo.concatenate", LowerConcatenate);

// operands: input, padding value (scalar); attrs.ints: low, high, interior (rank each).
std::vector<Ssa> LowerPad(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const auto& a = node.attrs().ints;
  std::size_t rank = a.size() / 3;
  std::string attrs = "edge_padding_low = " + I64Array(Range(a, 0, rank)) +
                      ", edge_padding_high = " + I64Array(Range(a, rank, rank)) +
                      ", interior_padding = " + I64Array(Range(a, 2 * rank, rank));
  return {ctx.Emit("stablehlo.pad", operands, node.shape(), attrs)};
}
LoweringRule pad_rule("stablehlo.pad", LowerPad);

// attrs.ints: the dimensions to reverse.
std::vector<Ssa> LowerReverse(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return {ctx.Emit("stablehlo.reverse", operands, node.shape(), "dimensions = " + I64Array(node.attrs().ints))};
}
LoweringRule reverse_rule("stablehlo.reverse", LowerReverse);

// attrs.ints[0]: the iota dimension.
std::vector<Ssa> LowerIota(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return {ctx.Emit("stablehlo.iota", operands, node.shape(),
                   "iota_dimension = " + std::to_string(node.attrs().ints[0]) + " : i64")};
}
LoweringRule iota_rule("stablehlo.iota", LowerIota);

}  // namespace
}  // namespace torch_xla::lowering
