// Lowering rule of matrix products (stablehlo.dot_general), with the precision config of
// the mat mul precision setting (lowering/matmul_precision.h).
#include <string>

#include "lowering/lowering_context.h"
#include "lowering/matmul_precision.h"

namespace torch_xla::lowering {
namespace {

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
  return {ctx.Emit("stablehlo.dot_general", operands, node.shape(),
                   DotDimensions(DimList(a, 1, nb), DimList(a, 1 + nb, nb), DimList(a, c0, nc), DimList(a, c0 + nc, nc)) +
                       PrecisionConfigAttribute())};
}
LoweringRule dot_rule("stablehlo.dot_general", LowerDotGeneral);

}  // namespace
}  // namespace torch_xla::lowering
