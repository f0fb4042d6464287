#include "lowering/flat_elementwise.h"

#include <string_view>
#include <unordered_set>

#include "runtime/device_dims.h"

namespace torch_xla::lowering {
namespace {

// Operations lowered one-to-one whose result has their operands' dimensions, element by
// element (the optimizers' arithmetic, and conversions for mixed precision).
bool IsFlattenable(ir::OpKind op) {
  static const std::unordered_set<uint32_t> kinds = [] {
    std::unordered_set<uint32_t> ids;
    for (const char* name :
         {"stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide", "stablehlo.maximum",
          "stablehlo.minimum", "stablehlo.power", "stablehlo.negate", "stablehlo.abs", "stablehlo.sqrt",
          "stablehlo.rsqrt", "stablehlo.exponential", "stablehlo.log", "stablehlo.sign", "stablehlo.convert",
          "stablehlo.select", "stablehlo.clamp"}) {
      ids.insert(ir::OpKind::Get(name).id());
    }
    return ids;
  }();
  return kinds.count(op.id()) != 0;
}

bool IsBroadcastOfNonScalar(const Value& v) {
  static const ir::OpKind kBroadcast = ir::OpKind::Get("stablehlo.broadcast_in_dim");
  return v.node->op() == kBroadcast && !v.node->operands().empty() && v.node->operand(0).shape().rank() > 0;
}

}  // namespace

std::optional<Ssa> LowerFlatElementwise(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  if (ctx.InRegion() || node.num_outputs() != 1 || !IsFlattenable(node.op())) return std::nullopt;
  const Shape& shape = node.shape();
  const std::vector<int64_t> flat_dims = runtime::DeviceDims(shape.type, shape.dims);
  if (flat_dims == shape.dims) return std::nullopt;
  bool seeded = false;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (ctx.TypeOf(operands[i]).dims != shape.dims || IsBroadcastOfNonScalar(node.operand(i))) return std::nullopt;
    seeded = seeded || ctx.HasFlatForm(operands[i]);
  }
  if (!seeded) return std::nullopt;
  std::vector<Ssa> flat_operands;
  for (Ssa v : operands) flat_operands.push_back(ctx.Flat(v));
  Ssa flat = ctx.Emit(node.op().name(), flat_operands, Shape(shape.type, flat_dims));
  Ssa result = ctx.Emit("stablehlo.reshape", {flat}, shape);
  ctx.SetFlatForm(result, flat);
  return result;
}

}  // namespace torch_xla::lowering
