// Normalization kernels: layer norm (forward and backward) and group norm's backward
// (its forward is PyTorch's composite over batch norm). Low-precision floats (bf16, f16)
// compute in f32 internally and round once at the end, as PyTorch's CPU kernels do.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;

// ---- layer norm ------------------------------------------------------------

struct LayerNormShape {
  int64_t axis = 0;                  // first normalized dimension
  std::vector<int64_t> norm_dims;    // the normalized dimensions of the input
  std::vector<int64_t> stat_dims;    // mean/rstd shape: leading dims, then ones
  std::vector<int64_t> batch_dims;   // the leading (non-normalized) dimensions
  int64_t n = 1;                     // elements per normalized group
};

LayerNormShape CheckLayerNorm(const char* op, const at::Tensor& input, at::IntArrayRef normalized_shape,
                              const at::Tensor* weight, const at::Tensor* bias) {
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  TORCH_CHECK(nd >= 1, op, ": Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
              "element, but got normalized_shape = ", SizesString(normalized_shape));
  const int64_t rank = input.dim();
  bool ok = rank >= nd;
  for (int64_t i = 0; ok && i < nd; ++i) ok = input.size(rank - nd + i) == normalized_shape[i];
  TORCH_CHECK(ok, op, ": Given normalized_shape=", SizesString(normalized_shape), ", expected input with shape [*, ",
              SizesString(normalized_shape).substr(1), ", but got input of size ", SizesString(input.sizes()));
  for (const at::Tensor* p : {weight, bias}) {
    if (p == nullptr) continue;
    TORCH_CHECK(p->sizes() == normalized_shape, op, ": Expected ", p == weight ? "weight" : "bias",
                " to be of same shape as normalized_shape, but got ", p == weight ? "weight" : "bias",
                " of shape ", SizesString(p->sizes()), " and normalized_shape = ", SizesString(normalized_shape));
    TORCH_CHECK(at::isFloatingType(p->scalar_type()), op, ": expected a floating point ",
                p == weight ? "weight" : "bias", ", got ", DescribeTensor(*p));
  }
  CheckFloatingArg(input, op, "input");
  LayerNormShape s;
  s.axis = rank - nd;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < s.axis) {
      s.stat_dims.push_back(input.size(i));
      s.batch_dims.push_back(i);
    } else {
      s.stat_dims.push_back(1);
      s.norm_dims.push_back(i);
      s.n *= input.size(i);
    }
  }
  return s;
}

// A weight or bias of the normalized shape, in `type`, broadcast over the leading dims.
Value Affine(const at::Tensor& p, const std::vector<int64_t>& dims, ElementType type, const char* op) {
  return ir::Broadcast(ir::Convert(GetXlaTensor(p, op)->GetIrValue(), type), dims);
}

// The dtype PyTorch gives mean/rstd: f32 when a low-precision input meets an f32 weight
// ("mixed type"), else the input's type.
ElementType StatType(const at::Tensor& input, const at::Tensor* weight, const at::Tensor* bias) {
  ElementType in = ElementTypeOf(input.scalar_type());
  bool low = in == ElementType::kBF16 || in == ElementType::kF16;
  bool mixed = low && ((weight && weight->scalar_type() == at::kFloat) || (bias && bias->scalar_type() == at::kFloat));
  return mixed ? ElementType::kF32 : in;
}

}  // namespace

// ---- layer norm ------------------------------------------------------------

std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::native_layer_norm(
    const at::Tensor& input, at::IntArrayRef normalized_shape, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, double eps) {
  XLA_COUNT("native_layer_norm");
  const char* op = "native_layer_norm";
  const at::Tensor* w = DefinedOrNull(weight);
  const at::Tensor* b = DefinedOrNull(bias);
  LayerNormShape s = CheckLayerNorm(op, input, normalized_shape, w, b);
  int device = CommonDevice({&input, w ? w : &input, b ? b : &input}, op);
  XlaTensorPtr x = GetXlaTensor(input, op);
  ElementType in_type = x->shape().type;
  ElementType ct = AccumulationType(in_type);
  return Checked(op, [&] {
    Value xv = ir::Convert(x->GetIrValue(), ct);
    const auto& dims = xv.shape().dims;
    // Statistics per group, in the [leading..., 1...] shape, and broadcast back.
    auto group_mean = [&](const Value& v) {
      Value sum = ir::Reshape(ir::Reduce(ReduceKind::kSum, v, s.norm_dims), s.stat_dims);
      return Div(sum, ir::Constant(static_cast<double>(s.n), sum.shape()));
    };
    Value mean = group_mean(xv);
    Value centered = Sub(xv, ir::Broadcast(mean, dims));
    Value var = group_mean(Mul(centered, centered));
    Value rstd = ir::Unary(ir::op::kRsqrt, Add(var, ScalarLike(eps, var)));
    Value y = Mul(centered, ir::Broadcast(rstd, dims));
    if (w) y = Mul(y, Affine(*w, dims, ct, op));
    if (b) y = Add(y, Affine(*b, dims, ct, op));
    ElementType stat = StatType(input, w, b);
    return std::make_tuple(AtenFromIr(ir::Convert(y, in_type), device), AtenFromIr(ir::Convert(mean, stat), device),
                           AtenFromIr(ir::Convert(rstd, stat), device));
  });
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::native_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    std::array<bool, 3> output_mask) {
  XLA_COUNT("native_layer_norm_backward");
  const char* op = "native_layer_norm_backward";
  const at::Tensor* w = DefinedOrNull(weight);
  const at::Tensor* b = DefinedOrNull(bias);
  LayerNormShape s = CheckLayerNorm(op, input, normalized_shape, w, b);
  TORCH_CHECK(grad_out.sizes() == input.sizes(), op, ": grad_out ", DescribeTensor(grad_out),
              " does not match input ", DescribeTensor(input));
  TORCH_CHECK(mean.numel() == rstd.numel() && mean.numel() * s.n == input.numel(), op, ": mean ",
              DescribeTensor(mean), " and rstd ", DescribeTensor(rstd), " do not match input ", DescribeTensor(input),
              " with normalized_shape ", SizesString(normalized_shape));
  int device = CommonDevice({&grad_out, &input, &mean, &rstd}, op);
  ElementType in_type = ElementTypeOf(input.scalar_type());
  ElementType ct = AccumulationType(in_type);
  return Checked(op, [&] {
    Value x = ir::Convert(GetXlaTensor(input, op)->GetIrValue(), ct);
    const auto& dims = x.shape().dims;
    Value dy = ir::Convert(GetXlaTensor(grad_out, op)->GetIrValue(), ct);
    auto stat = [&](const at::Tensor& t) {
      Value v = ir::Convert(GetXlaTensor(t, op)->GetIrValue(), ct);
      return ir::Broadcast(ir::Reshape(v, s.stat_dims), dims);
    };
    Value mu = stat(mean);
    Value r = stat(rstd);
    Value xhat = Mul(Sub(x, mu), r);
    at::Tensor grad_input, grad_weight, grad_bias;
    if (output_mask[0]) {
      Value g = w ? Mul(dy, Affine(*w, dims, ct, op)) : dy;
      Value n = ScalarLike(static_cast<double>(s.n), x);
      Value mean_g = Div(ReduceBroadcast(ReduceKind::kSum, g, s.norm_dims), n);
      Value mean_gx = Div(ReduceBroadcast(ReduceKind::kSum, Mul(g, xhat), s.norm_dims), n);
      Value dx = Mul(r, Sub(Sub(g, mean_g), Mul(xhat, mean_gx)));
      grad_input = AtenFromIr(ir::Convert(dx, in_type), device);
    }
    if (output_mask[1] && w) {
      Value gw = ir::Reduce(ReduceKind::kSum, Mul(dy, xhat), s.batch_dims);
      grad_weight = AtenFromIr(ir::Convert(gw, ElementTypeOf(w->scalar_type())), device);
    }
    if (output_mask[2] && b) {
      Value gb = ir::Reduce(ReduceKind::kSum, dy, s.batch_dims);
      grad_bias = AtenFromIr(ir::Convert(gb, ElementTypeOf(b->scalar_type())), device);
    }
    return std::make_tuple(grad_input, grad_weight, grad_bias);
  });
}


// ---- group norm -------------------------------------------------------------
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
