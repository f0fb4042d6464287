// Lowering rules of convolution (ir::Convolution, ir::HostConvolution and
// ir::SingleChannelTaps in ir/builder_convolution.h).
#include <string>

#include "host/kernel_targets.h"
#include "ir/builder_convolution.h"
#include "lowering/lowering_context.h"
#include "lowering/matmul_precision.h"
#include "runtime/client.h"

namespace torch_xla::lowering {
namespace {

std::vector<Ssa> LowerConvolution(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::ConvolutionAttrs a = ir::ConvolutionAttrs::FromAttrs(node.attrs());
  const std::size_t n = a.window_strides.size();
  std::string padding = "dense<[";
  for (std::size_t i = 0; i < n; ++i) {
    if (i) padding += ", ";
    padding += "[" + std::to_string(a.padding_low[i]) + ", " + std::to_string(a.padding_high[i]) + "]";
  }
  padding += "]> : tensor<" + std::to_string(n) + "x2xi64>";
  std::string spatial;
  for (std::size_t i = 0; i < n; ++i) spatial += ", " + std::to_string(i);
  std::string attrs = "window_strides = " + I64Array(a.window_strides) + ", padding = " + padding +
                      ", lhs_dilation = " + I64Array(a.lhs_dilation) + ", rhs_dilation = " + I64Array(a.rhs_dilation) +
                      ", dimension_numbers = #stablehlo.conv<[b, f" + spatial + "]x[o, i" + spatial + "]->[b, f" +
                      spatial + "]>, feature_group_count = " + std::to_string(a.feature_group_count) +
                      " : i64, batch_group_count = " + std::to_string(a.batch_group_count) + " : i64" +
                      PrecisionConfigAttribute();
  const ElementType type = node.shape().type;
  if (IsFloating(type) || IsComplex(type) || runtime::Client::Get().LowersForCpu())
    return {ctx.Emit("stablehlo.convolution", operands, node.shape(), attrs)};
  // GPU convolutions (cuDNN's) have no integer kernels: XLA's GPU compiler refuses them
  // or fails at run time ("Unimplemented convolution"). Integers are computed in float64,
  // exact while every partial sum stays below 2^53 in magnitude.
  std::vector<Ssa> wide;
  for (Ssa v : operands) wide.push_back(ctx.Convert(v, ElementType::kF64));
  Ssa result = ctx.Emit("stablehlo.convolution", wide, Shape(ElementType::kF64, node.shape().dims), attrs);
  return {ctx.Convert(result, type)};
}
LoweringRule convolution_rule("stablehlo.convolution", LowerConvolution);

// A call of the host kernel; the node's attrs are the kernel's config
// (host::ConvolutionConfig).
std::vector<Ssa> LowerHostConvolution(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return EmitHostKernelCall(ctx, host::kHostConvolutionTarget, operands, node.shapes(), node.attrs().ints);
}
LoweringRule host_convolution_rule("xla::host_convolution", LowerHostConvolution);

// operands: x [N, 1, s...], w [F, 1, k...]. The sum over taps of x's window at the tap
// (sliced from the padded input, broadcast over F) times the tap's weights (broadcast
// over N and space).
std::vector<Ssa> LowerSingleChannelTaps(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::SingleChannelTapsAttrs a = ir::SingleChannelTapsAttrs::FromAttrs(node.attrs());
  const std::vector<int64_t>& stride = a.stride, &padding = a.padding, &dilation = a.dilation;
  const std::size_t n = stride.size(), rank = n + 2;
  const Shape& out = node.shape();
  const ElementType type = out.type;
  const ElementType acc = type == ElementType::kBF16 || type == ElementType::kF16 ? ElementType::kF32 : type;
  // Copies: TypeOf's references do not survive the Emit calls below.
  const std::vector<int64_t> xd = ctx.TypeOf(operands[0]).dims;
  const std::vector<int64_t> wd = ctx.TypeOf(operands[1]).dims;
  const ElementType w_type = ctx.TypeOf(operands[1]).type;
  const int64_t batch = xd[0], features = wd[0];
  auto convert = [&](Ssa v) { return ctx.Convert(v, acc); };

  Ssa xp = convert(operands[0]);
  bool padded = false;
  for (int64_t p : padding) padded |= p != 0;
  if (padded) {
    std::vector<int64_t> lo(rank, 0), interior(rank, 0), dims = xd;
    for (std::size_t i = 0; i < n; ++i) {
      lo[i + 2] = padding[i];
      dims[i + 2] += 2 * padding[i];
    }
    Ssa zero = ctx.Constant(Shape(acc, {}), 0);
    xp = ctx.Emit("stablehlo.pad", {xp, zero}, Shape(acc, dims),
                  "edge_padding_low = " + I64Array(lo) + ", edge_padding_high = " + I64Array(lo) +
                      ", interior_padding = " + I64Array(interior));
  }
  int64_t taps = 1;
  for (std::size_t i = 0; i < n; ++i) taps *= wd[i + 2];
  // Weights as [F, taps], in the kernel's row-major tap order.
  Ssa wf = convert(ctx.Emit("stablehlo.reshape", {operands[1]}, Shape(w_type, {features, taps})));

  const Shape acc_out(acc, out.dims);
  std::vector<int64_t> window_dims = {batch}, window_to_out = {0};
  for (std::size_t i = 0; i < n; ++i) {
    window_dims.push_back(out.dims[i + 2]);
    window_to_out.push_back(static_cast<int64_t>(i + 2));
  }
  Ssa sum;
  std::vector<int64_t> tap(n, 0);  // the kernel position, last dimension fastest
  for (int64_t t = 0; t < taps; ++t) {
    std::vector<int64_t> start(rank, 0), limit = {batch, 1}, strides(rank, 1), sliced = {batch, 1};
    for (std::size_t i = 0; i < n; ++i) {
      start[i + 2] = tap[i] * dilation[i];
      limit.push_back(start[i + 2] + (out.dims[i + 2] - 1) * stride[i] + 1);
      strides[i + 2] = stride[i];
      sliced.push_back(out.dims[i + 2]);
    }
    Ssa window = ctx.Emit("stablehlo.slice", {xp}, Shape(acc, sliced),
                          "start_indices = " + I64Array(start) + ", limit_indices = " + I64Array(limit) +
                              ", strides = " + I64Array(strides));
    window = ctx.Emit("stablehlo.reshape", {window}, Shape(acc, window_dims));
    Ssa weights = ctx.Emit("stablehlo.slice", {wf}, Shape(acc, {features, 1}),
                           "start_indices = " + I64Array({0, t}) + ", limit_indices = " + I64Array({features, t + 1}) +
                               ", strides = " + I64Array({1, 1}));
    weights = ctx.Emit("stablehlo.reshape", {weights}, Shape(acc, {features}));
    Ssa term = ctx.Emit(
        "stablehlo.multiply",
        {ctx.Emit("stablehlo.broadcast_in_dim", {window}, acc_out, "broadcast_dimensions = " + I64Array(window_to_out)),
         ctx.Emit("stablehlo.broadcast_in_dim", {weights}, acc_out, "broadcast_dimensions = " + I64Array({1}))},
        acc_out);
    sum = sum.id >= 0 ? ctx.Emit("stablehlo.add", {sum, term}, acc_out) : term;
    for (int64_t i = static_cast<int64_t>(n) - 1; i >= 0 && ++tap[i] == wd[i + 2]; --i) tap[i] = 0;
  }
  sum = ctx.Convert(sum, type);
  return {sum};
}
LoweringRule single_channel_taps_rule("xla::single_channel_taps", LowerSingleChannelTaps);

}  // namespace
}  // namespace torch_xla::lowering
