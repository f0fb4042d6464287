// Lowering rule of matrix products (stablehlo.dot_general), with the precision config of
// the mat mul precision setting (lowering/matmul_precision.h).
#include <string>

#include "ir/builder.h"
#include "lowering/lowering_context.h"
#include "lowering/matmul_precision.h"

namespace torch_xla::lowering {
namespace {

// "[0, 1]"
std::string DimList(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

std::vector<Ssa> LowerDotGeneral(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::DotGeneralAttrs a = ir::DotGeneralAttrs::FromAttrs(node.attrs());
  return {ctx.Emit("stablehlo.dot_general", operands, node.shape(),
                   DotDimensions(DimList(a.lhs_batch), DimList(a.rhs_batch), DimList(a.lhs_contract),
                                 DimList(a.rhs_contract)) +
                       PrecisionConfigAttribute())};
}
LoweringRule dot_rule("stablehlo.dot_general", LowerDotGeneral);

}  // namespace
}  // namespace torch_xla::lowering
