// Lowering rules of the pooling ops (ir/builder_pooling.h): reduce_window max (which
// ir::Materialize also uses) and the host max pooling kernels.
#include <cmath>
#include <limits>

#include "ir/builder_pooling.h"
#include "lowering/lowering_context.h"
#include "host/max_pool_kernel.h"

namespace torch_xla::lowering {
namespace {

double LowestValue(ElementType type) {
  if (runtime::IsFloating(type)) return -std::numeric_limits<double>::infinity();
  if (type == ElementType::kPred || runtime::IsUnsigned(type)) return 0;
  return -std::ldexp(1.0, static_cast<int>(runtime::ElementSize(type) * 8 - 1));
}

std::vector<Ssa> LowerReduceWindowMax(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const auto [window, strides] = ir::ReduceWindowMaxAttrs::FromAttrs(node.attrs());
  ElementType type = node.shape().type;
  Ssa init = ctx.Constant(Shape(type, {}), LowestValue(type));
  std::string region = ctx.BinaryRegion("stablehlo.maximum", type);
  return ctx.EmitWithRegion("stablehlo.reduce_window", {operands[0], init}, {node.shape()}, region,
                            "window_dimensions = " + I64Array(window) + ", window_strides = " + I64Array(strides));
}
LoweringRule reduce_window_max_rule("xla::reduce_window_max", LowerReduceWindowMax);

// xla::host_max_pool and xla::host_max_pool_backward: calls of the host kernels; the
// node's attrs are the kernel's config (host/max_pool_kernel.h).
std::vector<Ssa> LowerHostMaxPool(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return EmitHostKernelCall(ctx, host::kMaxPoolTarget, operands, node.shapes(), node.attrs().ints);
}
LoweringRule host_max_pool_rule("xla::host_max_pool", LowerHostMaxPool);

std::vector<Ssa> LowerHostMaxPoolBackward(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return EmitHostKernelCall(ctx, host::kMaxPoolBackwardTarget, operands, node.shapes(), node.attrs().ints);
}
LoweringRule host_max_pool_backward_rule("xla::host_max_pool_backward", LowerHostMaxPoolBackward);

}  // namespace
}  // namespace torch_xla::lowering
