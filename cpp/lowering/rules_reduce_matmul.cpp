// Lowering rules of reductions and of dot_general.
#include <cmath>
#include <limits>
#include <string>

#include "ir/builder.h"
#include "lowering/lowering_context.h"

namespace torch_xla::lowering {
namespace {

using ir::ReduceKind;

double InitValue(ReduceKind kind, ElementType type) {
  bool fp = runtime::IsFloating(type);
  switch (kind) {
    case ReduceKind::kSum: return 0;
    case ReduceKind::kProd: return 1;
    case ReduceKind::kAnd: return 1;
    case ReduceKind::kOr: return 0;
    case ReduceKind::kMax:
      if (type == ElementType::kPred) return 0;
      if (fp) return -std::numeric_limits<double>::infinity();
      if (runtime::IsUnsigned(type)) return 0;
      return -std::ldexp(1.0, static_cast<int>(runtime::ElementSize(type) * 8 - 1));
    case ReduceKind::kMin:
      if (type == ElementType::kPred) return 1;
      if (fp) return std::numeric_limits<double>::infinity();
      if (runtime::IsUnsigned(type)) return std::ldexp(1.0, static_cast<int>(runtime::ElementSize(type) * 8)) - 1;
      return std::ldexp(1.0, static_cast<int>(runtime::ElementSize(type) * 8 - 1)) - 1;
  }
  return 0;
}

// The init value as a constant. Integer max/min bounds are written exactly: a double
// cannot hold INT64_MAX, and converting 2^63 back to int64 overflows.
Ssa InitConstant(LoweringContext& ctx, ReduceKind kind, ElementType type) {
  Shape scalar(type, {});
  bool integral = !runtime::IsFloating(type) && !runtime::IsComplex(type) && type != ElementType::kPred;
  if (integral && (kind == ReduceKind::kMax || kind == ReduceKind::kMin)) {
    int bits = static_cast<int>(runtime::ElementSize(type) * 8);
    std::string literal;
    if (runtime::IsUnsigned(type)) {
      literal = kind == ReduceKind::kMax ? "0" : std::to_string(bits == 64 ? ~0ull : (1ull << bits) - 1);
    } else if (kind == ReduceKind::kMax) {
      literal = std::to_string(bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)));
    } else {
      literal = std::to_string(bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1);
    }
    return ctx.Emit("stablehlo.constant", {}, scalar, "value = dense<" + literal + "> : " + scalar.ToMlir());
  }
  return ctx.Constant(scalar, InitValue(kind, type));
}

const char* CombinerOp(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum: return "stablehlo.add";
    case ReduceKind::kProd: return "stablehlo.multiply";
    case ReduceKind::kMax: return "stablehlo.maximum";
    case ReduceKind::kMin: return "stablehlo.minimum";
    case ReduceKind::kAnd: return "stablehlo.and";
    default: return "stablehlo.or";
  }
}

// xla::reduce: operand 0 the input; attrs.ints[0] the ReduceKind, then the reduced dims.
// The node's type is the accumulation type (the input is converted by the ATen layer).
std::vector<Ssa> LowerReduce(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const auto& a = node.attrs().ints;
  ElementType type = node.shape().type;
  std::vector<int64_t> dims(a.begin() + 1, a.end());
  Ssa init = InitConstant(ctx, static_cast<ReduceKind>(a[0]), type);
  std::string region = ctx.BinaryRegion(CombinerOp(static_cast<ReduceKind>(a[0])), type);
  return ctx.EmitWithRegion("stablehlo.reduce", {operands[0], init}, {node.shape()}, region,
                            "dimensions = " + I64Array(dims));
}
LoweringRule reduce_rule("xla::reduce", LowerReduce);

std::string DimList(const std::vector<int64_t>& v, std::size_t begin, std::size_t count) {
  std::string s = "[";
  for (std::size_t i = 0; i < count; ++i) {
    if (i) s += ", ";
    s += std::to_string(v[begin + i]);
  }
  return s + "]";
}

// stablehlo.dot_general; attrs.ints: nb, lhs batch dims (nb), rhs batch dims (nb),
// nc, lhs contracting dims (nc), rhs contracting dims (nc).
std::vector<Ssa> LowerDotGeneral(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const auto& a = node.attrs().ints;
  std::size_t nb = a[0];
  std::size_t nc = a[1 + 2 * nb];
  std::size_t c0 = 2 + 2 * nb;
  std::string attrs = "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = " + DimList(a, 1, nb) +
                      ", rhs_batching_dimensions = " + DimList(a, 1 + nb, nb) +
                      ", lhs_contracting_dimensions = " + DimList(a, c0, nc) +
                      ", rhs_contracting_dimensions = " + DimList(a, c0 + nc, nc) + ">";
  return {ctx.Emit("stablehlo.dot_general", operands, node.shape(), attrs)};
}
LoweringRule dot_rule("stablehlo.dot_general", LowerDotGeneral);

}  // namespace
}  // namespace torch_xla::lowering
