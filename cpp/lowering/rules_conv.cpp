// Lowering rules of convolution (ir::Convolution and ir::HostConvolution in
// ir/builder_conv.cpp).
#include <string>

#include "lowering/host_kernel_targets.h"
#include "lowering/lowering_context.h"

namespace torch_xla::lowering {
namespace {

// attrs.ints: n (spatial rank), window_strides (n), padding_low (n), padding_high (n),
// lhs_dilation (n), rhs_dilation (n), feature_group_count, batch_group_count.
std::vector<Ssa> LowerConvolution(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const auto& a = node.attrs().ints;
  const std::size_t n = static_cast<std::size_t>(a[0]);
  auto list = [&](std::size_t which) {
    return std::vector<int64_t>(a.begin() + 1 + which * n, a.begin() + 1 + (which + 1) * n);
  };
  std::string padding = "dense<[";
  for (std::size_t i = 0; i < n; ++i) {
    if (i) padding += ", ";
    padding += "[" + std::to_string(a[1 + n + i]) + ", " + std::to_string(a[1 + 2 * n + i]) + "]";
  }
  padding += "]> : tensor<" + std::to_string(n) + "x2xi64>";
  std::string spatial;
  for (std::size_t i = 0; i < n; ++i) spatial += ", " + std::to_string(i);
  std::string attrs = "window_strides = " + I64Array(list(0)) + ", padding = " + padding +
                      ", lhs_dilation = " + I64Array(list(3)) + ", rhs_dilation = " + I64Array(list(4)) +
                      ", dimension_numbers = #stablehlo.conv<[b, f" + spatial + "]x[o, i" + spatial + "]->[b, f" +
                      spatial + "]>, feature_group_count = " + std::to_string(a[1 + 5 * n]) +
                      " : i64, batch_group_count = " + std::to_string(a[2 + 5 * n]) + " : i64";
  return {ctx.Emit("stablehlo.convolution", operands, node.shape(), attrs)};
}
LoweringRule convolution_rule("stablehlo.convolution", LowerConvolution);

// A typed-FFI custom call; the node's attrs are the kernel's config.
std::vector<Ssa> LowerHostConvolution(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  std::string attrs = std::string("call_target_name = \"") + kHostConvolutionTarget +
                      "\", api_version = 4 : i32, backend_config = {config = " + I64Array(node.attrs().ints) + "}";
  return {ctx.Emit("stablehlo.custom_call", operands, node.shape(), attrs)};
}
LoweringRule host_convolution_rule("xla::host_convolution", LowerHostConvolution);

}  // namespace
}  // namespace torch_xla::lowering
