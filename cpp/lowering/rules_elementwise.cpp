// Lowering rules of element-wise operations. The IR ops carry StableHLO names and
// already-matching operand shapes and types (the ATen layer inserts broadcasts and
// conversions), so most rules are one operation.
#include "ir/builder.h"
#include "lowering/lowering_context.h"

namespace torch_xla::lowering {
namespace {

std::vector<Ssa> LowerSameName(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return {ctx.Emit(node.op().name(), operands, node.shape())};
}

const char* kOneToOne[] = {
    "stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide",
    "stablehlo.maximum", "stablehlo.minimum", "stablehlo.power", "stablehlo.remainder",
    "stablehlo.and", "stablehlo.or", "stablehlo.xor", "stablehlo.not", "stablehlo.negate",
    "stablehlo.abs", "stablehlo.exponential", "stablehlo.exponential_minus_one", "stablehlo.log",
    "stablehlo.log_plus_one", "stablehlo.sqrt", "stablehlo.rsqrt", "stablehlo.cbrt", "stablehlo.tanh",
    "stablehlo.logistic", "stablehlo.sine", "stablehlo.cosine", "stablehlo.tan", "stablehlo.floor",
    "stablehlo.ceil", "stablehlo.sign", "stablehlo.round_nearest_even", "stablehlo.round_nearest_afz",
    "stablehlo.atan2", "stablehlo.select", "stablehlo.clamp", "stablehlo.is_finite",
    "stablehlo.shift_left", "stablehlo.shift_right_arithmetic", "stablehlo.shift_right_logical",
    "stablehlo.popcnt", "stablehlo.convert", "stablehlo.bitcast_convert", "stablehlo.reshape", "stablehlo.complex",
    "stablehlo.erf", "chlo.erf", "chlo.erfc", "chlo.erf_inv", "chlo.lgamma", "chlo.digamma", "chlo.zeta", "chlo.asin", "chlo.acos",
    "chlo.atan", "chlo.sinh", "chlo.cosh", "chlo.asinh", "chlo.acosh", "chlo.atanh",
};

struct RegisterOneToOne {
  RegisterOneToOne() {
    for (const char* name : kOneToOne) RegisterLowering(ir::OpKind::Get(name), LowerSameName);
  }
} register_one_to_one;

// By ir::CompareDirection.
const char* kDirections[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};

std::vector<Ssa> LowerCompare(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::CompareAttrs a = ir::CompareAttrs::FromAttrs(node.attrs());
  return {ctx.Emit("stablehlo.compare", operands, node.shape(),
                   CompareAttributes(kDirections[static_cast<int64_t>(a.direction)], node.operand(0).shape().type))};
}
LoweringRule compare_rule("stablehlo.compare", LowerCompare);

// xla::nan_maximum / xla::nan_minimum: select(a != a, a, select(b != b, b, max(a, b))).
// XLA's CPU backend fuses this form into faster loops than one that relies on its
// maximum's own NaN handling (measured on the MNIST step).
std::vector<Ssa> LowerNanPropagating(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands,
                                     const char* op) {
  const Shape& shape = node.shape();
  Shape pred(ElementType::kPred, shape.dims);
  const std::string ne = CompareAttributes("NE", shape.type);
  Ssa r = ctx.Emit(op, operands, shape);
  Ssa a_nan = ctx.Emit("stablehlo.compare", {operands[0], operands[0]}, pred, ne);
  Ssa b_nan = ctx.Emit("stablehlo.compare", {operands[1], operands[1]}, pred, ne);
  Ssa b_or_r = ctx.Emit("stablehlo.select", {b_nan, operands[1], r}, shape);
  return {ctx.Emit("stablehlo.select", {a_nan, operands[0], b_or_r}, shape)};
}
LoweringRule nan_maximum_rule("xla::nan_maximum", [](LoweringContext& ctx, const Node& node,
                                                     const std::vector<Ssa>& operands) {
  return LowerNanPropagating(ctx, node, operands, "stablehlo.maximum");
});
LoweringRule nan_minimum_rule("xla::nan_minimum", [](LoweringContext& ctx, const Node& node,
                                                     const std::vector<Ssa>& operands) {
  return LowerNanPropagating(ctx, node, operands, "stablehlo.minimum");
});

// xla::constant: a splat of attrs.floats[0] in the node's shape.
std::vector<Ssa> LowerConstant(LoweringContext& ctx, const Node& node, const std::vector<Ssa>&) {
  return {ctx.Constant(node.shape(), node.attrs().floats[0])};
}
LoweringRule constant_rule("xla::constant", LowerConstant);

}  // namespace
}  // namespace torch_xla::lowering
