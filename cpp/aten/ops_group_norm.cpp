// Group normalization's backward. The forward needs no kernel of ours: PyTorch's
// composite native_group_norm reshapes the input to [1, N*G, D*HW] and runs batch norm
// (lowered), so mean and rstd arrive as [N, G]. The backward is the layer-norm backward
// within each group of D = C/G channels, with the per-channel weight folded into the
// incoming gradient:
//   xhat    = (x - mean) * rstd
//   g       = dy * weight[c]
//   dx      = rstd * (g - mean_group(g) - xhat * mean_group(g * xhat))
//   dweight = sum over (n, hw) of dy * xhat,   dbias = sum over (n, hw) of dy
// computed on the input viewed as [N, G, D, HW]. Low-precision inputs are computed in
// f32 and rounded at the end, as PyTorch's CPU kernel does.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"

namespace torch_xla {

using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;

std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::native_group_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean, const at::Tensor& rstd,
    const std::optional<at::Tensor>& weight, int64_t N, int64_t C, int64_t HxW, int64_t group,
    std::array<bool, 3> output_mask) {
  XLA_COUNT("native_group_norm_backward");
  const char* op = "native_group_norm_backward";
  const at::Tensor* w = DefinedOrNull(weight);
  TORCH_CHECK(input.dim() >= 2 && input.size(0) == N && input.size(1) == C && N * C * HxW == input.numel(), op,
              ": expected an input of N=", N, ", C=", C, " and HxW=", HxW, " elements per channel, got input ",
              DescribeTensor(input));
  TORCH_CHECK(at::isFloatingType(input.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(input));
  TORCH_CHECK(group > 0 && C % group == 0, op, ": Expected number of channels in input to be divisible by "
              "num_groups, but got input of shape ", input.sizes(), " and num_groups=", group);
  TORCH_CHECK(grad_out.sizes() == input.sizes() && grad_out.scalar_type() == input.scalar_type(), op,
              ": grad_out ", DescribeTensor(grad_out), " does not match input ", DescribeTensor(input));
  TORCH_CHECK(mean.numel() == N * group && rstd.numel() == N * group, op, ": expected mean and rstd of N * num_groups = ",
              N * group, " elements, got mean ", DescribeTensor(mean), " and rstd ", DescribeTensor(rstd));
  TORCH_CHECK(w == nullptr || (w->dim() == 1 && w->numel() == C), op, ": Expected weight to be a vector of size equal "
              "to the number of channels in input, but got weight of shape ", w ? w->sizes() : at::IntArrayRef{},
              " and input of shape ", input.sizes());
  int device = CommonDevice({&grad_out, &input, &mean, &rstd}, op);
  ElementType in_type = ElementTypeOf(input.scalar_type());
  ElementType acc = AccumulationType(in_type);
  ElementType param_type = w ? ElementTypeOf(w->scalar_type()) : in_type;
  const int64_t D = C / group;
  const std::vector<int64_t> grouped = {N, group, D, HxW};
  return Checked(op, [&] {
    auto read = [&](const at::Tensor& t, const std::vector<int64_t>& dims) {
      return ir::Reshape(ir::Convert(GetXlaTensor(t, op)->GetIrValue(), acc), dims);
    };
    // per (n, g) statistics and per-channel parameters, broadcast to [N, G, D, HW]
    auto per_group = [&](const Value& v) { return ir::BroadcastInDim(v, grouped, {0, 1}); };
    auto per_channel = [&](const Value& v) { return ir::BroadcastInDim(v, grouped, {1, 2}); };
    auto as_channels = [&](const Value& v) { return ir::Convert(ir::Reshape(v, {C}), param_type); };
    Value x = read(input, grouped);
    Value dy = read(grad_out, grouped);
    Value r = per_group(read(rstd, {N, group}));
    Value xhat = Mul(Sub(x, per_group(read(mean, {N, group}))), r);
    at::Tensor grad_input, grad_weight, grad_bias;
    if (output_mask[0]) {
      Value g = w ? Mul(dy, per_channel(read(*w, {group, D}))) : dy;
      Value count = ir::Constant(static_cast<double>(D * HxW), ir::Shape(acc, {N, group}));
      Value mean_g = per_group(Div(ir::Reduce(ReduceKind::kSum, g, {2, 3}), count));
      Value mean_gx = per_group(Div(ir::Reduce(ReduceKind::kSum, Mul(g, xhat), {2, 3}), count));
      Value dx = Mul(r, Sub(Sub(g, mean_g), Mul(xhat, mean_gx)));
      grad_input = AtenFromIr(ir::Convert(ir::Reshape(dx, input.sizes().vec()), in_type), device);
    }
    if (output_mask[1]) grad_weight = AtenFromIr(as_channels(ir::Reduce(ReduceKind::kSum, Mul(dy, xhat), {0, 3})), device);
    if (output_mask[2]) grad_bias = AtenFromIr(as_channels(ir::Reduce(ReduceKind::kSum, dy, {0, 3})), device);
    return std::make_tuple(grad_input, grad_weight, grad_bias);
  });
}

}  // namespace torch_xla
