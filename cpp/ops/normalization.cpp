// Normalization kernels: batch norm (native_batch_norm, _native_batch_norm_legit and its
// no-training form, _batch_norm_with_update, and the backward), layer norm (forward and
// backward), group norm's backward (its forward is PyTorch's composite over batch norm)
// and renorm. Low-precision floats (bf16, f16) compute in f32 internally and round once
// at the end, as PyTorch's CPU kernels do. Batch norm's running statistics are updated in
// place on their XLA tensors: native_batch_norm's schema does not mark them as written,
// so functionalization hands us the inner tensors and we replace their IR value.
#include <ATen/ATen.h>
#include <ATen/FunctionalTensorWrapper.h>

#include "XLANativeFunctions.h"
#include "aten/xla_tensor_impl.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Shape;
using ir::Value;
using runtime::ElementType;

// ---------------------------------------------------------------------------------
// batch norm

// Replaces the value of an XLA tensor that an op updates in place although its schema
// does not say so (native_batch_norm's running statistics).
void AssignInPlace(const at::Tensor& t, const Value& v, const char* op) {
  at::Tensor inner = t;
  if (at::functionalization::impl::isFunctionalTensor(t)) {
    at::functionalization::impl::sync(t);
    inner = at::functionalization::impl::from_functional_tensor(t);
  }
  auto* impl = dynamic_cast<XlaTensorImpl*>(inner.unsafeGetTensorImpl());
  TORCH_CHECK(impl, op, ": expected the running statistics on the XLA device, got ", DescribeTensor(t));
  const XlaTensorPtr& dst = impl->tensor();
  dst->SetIr(ir::Convert(v, dst->shape().type));
}

bool Defined(const std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

void CheckChannelTensor(const char* op, const char* name, const std::optional<at::Tensor>& t, const at::Tensor& input) {
  if (!Defined(t)) return;
  TORCH_CHECK(t->numel() == input.size(1), op, ": expected ", name, " to have ", input.size(1),
              " elements (the input's channels), got ", DescribeTensor(*t), " for input ", DescribeTensor(input));
  TORCH_CHECK(at::isFloatingType(t->scalar_type()), op, ": expected a floating point ", name, ", got ",
              DescribeTensor(*t));
  TORCH_CHECK(IsXlaTensor(*t), op, ": expected ", name, " on the XLA device, got a ", t->device(), " tensor");
}

// A [C] tensor (or `fill` when undefined) in type `acc`, broadcast along dimension 1.
Value ChannelOperand(const std::optional<at::Tensor>& t, double fill, ElementType acc, const std::vector<int64_t>& dims,
                     const char* op) {
  if (!Defined(t)) return Full(fill, acc, dims);
  Value v = ir::Reshape(ir::Convert(GetXlaTensor(*t, op)->GetIrValue(), acc), {dims[1]});
  return ir::BroadcastInDim(v, dims, {1});
}

Value ChannelValue(const std::optional<at::Tensor>& t, ElementType acc, const char* op) {
  Value v = GetXlaTensor(*t, op)->GetIrValue();
  return ir::Reshape(ir::Convert(v, acc), {v.shape().numel()});
}

std::vector<int64_t> NonChannelDims(int64_t rank) { return AllBut(rank, 1); }

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::native_batch_norm(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var, bool training,
    double momentum, double eps) {
  XLA_COUNT("native_batch_norm");
  const char* op = "native_batch_norm";
  TORCH_CHECK(input.dim() >= 2, op, ": expected an input with at least 2 dimensions [N, C, ...], got ",
              DescribeTensor(input));
  TORCH_CHECK(at::isFloatingType(input.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(input));
  CheckChannelTensor(op, "weight", weight, input);
  CheckChannelTensor(op, "bias", bias, input);
  CheckChannelTensor(op, "running_mean", running_mean, input);
  CheckChannelTensor(op, "running_var", running_var, input);
  TORCH_CHECK(training || (Defined(running_mean) && Defined(running_var)), op,
              ": running_mean and running_var must be defined in evaluation mode (input ", DescribeTensor(input), ")");
  TORCH_CHECK(Defined(running_mean) == Defined(running_var), op,
              ": running_mean and running_var must be both defined or both undefined");
  XlaTensorPtr x = GetXlaTensor(input, op);
  int device = x->device();
  ElementType type = x->shape().type;
  ElementType acc = AccumulationType(type);
  // Statistics come out in f32 when the parameters' type differs from a low-precision
  // input's (PyTorch's mixed-type batch norm), else in the input's type.
  bool mixed = false;
  for (const auto* t : {&weight, &bias, &running_mean, &running_var})
    if (Defined(*t) && t->value().scalar_type() != input.scalar_type()) mixed = true;
  ElementType stat_type = mixed ? ElementType::kF32 : type;
  const std::vector<int64_t> dims = x->shape().dims;
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t channels = dims[1];
  int64_t count = channels ? x->shape().numel() / channels : 0;
  return Checked(op, [&] {
    Value v = ir::Convert(x->GetIrValue(), acc);
    Value w = ChannelOperand(weight, 1, acc, dims, op);
    Value b = ChannelOperand(bias, 0, acc, dims, op);
    std::vector<int64_t> reduced = NonChannelDims(rank);
    auto per_channel = [&](const Value& c) { return ir::BroadcastInDim(c, dims, {1}); };
    Value mean, invstd;
    if (training) {
      Value n = Full(static_cast<double>(count), acc, {channels});
      mean = Div(ir::Reduce(ReduceKind::kSum, v, reduced), n);
      Value centered = Sub(v, per_channel(mean));
      Value var_sum = ir::Reduce(ReduceKind::kSum, Mul(centered, centered), reduced);
      Value var = Div(var_sum, n);
      invstd = ir::Unary(ir::op::kRsqrt, Add(var, Full(eps, acc, {channels})));
      if (Defined(running_mean)) {
        // A graph parameter, not a constant: with momentum=None the factor changes every
        // step (1 / num_batches_tracked), and must not cause a recompile.
        Value m = ir::Broadcast(IrScalar(at::Scalar(momentum), acc), {channels});
        Value keep = Sub(Full(1, acc, {channels}), m);
        Value rm = ChannelValue(running_mean, acc, op), rv = ChannelValue(running_var, acc, op);
        Value unbiased = Div(var_sum, Full(static_cast<double>(count - 1), acc, {channels}));
        Value new_rm = Add(Mul(keep, rm), Mul(m, mean));
        Value new_rv = Add(Mul(keep, rv), Mul(m, unbiased));
        AssignInPlace(*running_mean, ir::Reshape(new_rm, running_mean->sizes().vec()), op);
        AssignInPlace(*running_var, ir::Reshape(new_rv, running_var->sizes().vec()), op);
      }
    } else {
      mean = ChannelValue(running_mean, acc, op);
      invstd = ir::Unary(ir::op::kRsqrt, Add(ChannelValue(running_var, acc, op), Full(eps, acc, {channels})));
    }
    Value out = Add(Mul(Mul(Sub(v, per_channel(mean)), per_channel(invstd)), w), b);
    at::Tensor result = AtenFromIr(ir::Convert(out, type), device);
    if (!training) {
      return std::make_tuple(result, AtenFromIr(Full(0, stat_type, {0}), device),
                             AtenFromIr(Full(0, stat_type, {0}), device));
    }
    return std::make_tuple(result, AtenFromIr(ir::Convert(mean, stat_type), device),
                           AtenFromIr(ir::Convert(invstd, stat_type), device));
  });
}

// The forms of batch norm that AOTAutograd's decompositions (torch.compile) produce; the
// running statistics, when given, are updated in place as native_batch_norm does.
std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::_native_batch_norm_legit(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    at::Tensor& running_mean, at::Tensor& running_var, bool training, double momentum, double eps) {
  return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::_native_batch_norm_legit(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    bool training, double momentum, double eps) {
  return native_batch_norm(input, weight, bias, std::nullopt, std::nullopt, training, momentum, eps);
}

// _batch_norm_with_update: training batch norm updating the running statistics in
// place (as native_batch_norm does), with an empty reserve as on the CPU.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::_batch_norm_with_update(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    at::Tensor& running_mean, at::Tensor& running_var, double momentum, double eps) {
  XLA_COUNT("_batch_norm_with_update");
  auto [out, save_mean, save_invstd] =
      native_batch_norm(input, weight, bias, running_mean, running_var, true, momentum, eps);
  at::Tensor reserve = AtenFromIr(ir::Constant(0, ir::Shape(runtime::ElementType::kU8, {0})),
                                  GetXlaTensor(input, "_batch_norm_with_update")->device());
  return std::make_tuple(out, save_mean, save_invstd, reserve);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::_native_batch_norm_legit_no_training(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    const at::Tensor& running_mean, const at::Tensor& running_var, double momentum, double eps) {
  return native_batch_norm(input, weight, bias, running_mean, running_var, false, momentum, eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::native_batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean, const std::optional<at::Tensor>& save_invstd, bool train, double eps,
    std::array<bool, 3> output_mask) {
  XLA_COUNT("native_batch_norm_backward");
  const char* op = "native_batch_norm_backward";
  TORCH_CHECK(input.dim() >= 2, op, ": expected an input with at least 2 dimensions [N, C, ...], got ",
              DescribeTensor(input));
  TORCH_CHECK(at::isFloatingType(input.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(input));
  TORCH_CHECK(grad_out.sizes() == input.sizes(), op, ": grad_out ", DescribeTensor(grad_out),
              " and input ", DescribeTensor(input), " must have the same size");
  CheckChannelTensor(op, "weight", weight, input);
  if (train) {
    TORCH_CHECK(Defined(save_mean) && Defined(save_invstd), op,
                ": save_mean and save_invstd must be defined in training mode");
    CheckChannelTensor(op, "save_mean", save_mean, input);
    CheckChannelTensor(op, "save_invstd", save_invstd, input);
  } else {
    TORCH_CHECK(Defined(running_mean) && Defined(running_var), op,
                ": running_mean and running_var must be defined in evaluation mode");
    CheckChannelTensor(op, "running_mean", running_mean, input);
    CheckChannelTensor(op, "running_var", running_var, input);
  }
  int device = CommonDevice({&grad_out, &input}, op);
  XlaTensorPtr x = GetXlaTensor(input, op);
  ElementType type = x->shape().type;
  ElementType acc = AccumulationType(type);
  ElementType param_type = Defined(weight) ? ElementTypeOf(weight->scalar_type()) : type;
  const std::vector<int64_t> dims = x->shape().dims;
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t channels = dims[1];
  int64_t count = channels ? x->shape().numel() / channels : 0;
  return Checked(op, [&] {
    Value v = ir::Convert(x->GetIrValue(), acc);
    Value g = ir::Convert(GetXlaTensor(grad_out, op)->GetIrValue(), acc);
    auto per_channel = [&](const Value& c) { return ir::BroadcastInDim(c, dims, {1}); };
    Value mean, invstd;
    if (train) {
      mean = ChannelValue(save_mean, acc, op);
      invstd = ChannelValue(save_invstd, acc, op);
    } else {
      mean = ChannelValue(running_mean, acc, op);
      invstd = ir::Unary(ir::op::kRsqrt, Add(ChannelValue(running_var, acc, op), Full(eps, acc, {channels})));
    }
    std::vector<int64_t> reduced = NonChannelDims(rank);
    Value centered = Sub(v, per_channel(mean));
    Value sum_g = ir::Reduce(ReduceKind::kSum, g, reduced);
    Value dot = ir::Reduce(ReduceKind::kSum, Mul(g, centered), reduced);
    at::Tensor grad_input, grad_weight, grad_bias;
    if (output_mask[0]) {
      Value w = Defined(weight) ? ChannelValue(weight, acc, op) : Full(1, acc, {channels});
      Value scale = Mul(invstd, w);
      Value gi;
      if (train) {
        // dx = (dy - mean(dy) - xmu * sum(dy * xmu) * invstd^2 / n) * invstd * w
        Value n = Full(static_cast<double>(count), acc, {channels});
        Value mean_g = Div(sum_g, n);
        Value k = Div(Mul(dot, Mul(invstd, invstd)), n);
        gi = Mul(Sub(Sub(g, per_channel(mean_g)), Mul(centered, per_channel(k))), per_channel(scale));
      } else {
        gi = Mul(g, per_channel(scale));
      }
      grad_input = AtenFromIr(ir::Convert(gi, type), device);
    }
    if (output_mask[1]) grad_weight = AtenFromIr(ir::Convert(Mul(dot, invstd), param_type), device);
    if (output_mask[2]) grad_bias = AtenFromIr(ir::Convert(sum_g, param_type), device);
    return std::make_tuple(grad_input, grad_weight, grad_bias);
  });
}

namespace {

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

// ---- renorm ---------------------------------------------------------------------------------

// Each slice along `dim` whose p-norm exceeds maxnorm is scaled to norm maxnorm:
// factor maxnorm / (norm + 1e-7), rounded to the input's type, as PyTorch's kernel.
at::Tensor XLANativeFunctions::renorm(const at::Tensor& self, const at::Scalar& p, int64_t dim,
                                      const at::Scalar& maxnorm) {
  XLA_COUNT("renorm");
  const char* op = "renorm";
  TORCH_CHECK(!p.isComplex(), "renorm: p must be real-valued");
  TORCH_CHECK(p.toDouble() > 0.0, "renorm: non-positive-norm not supported");
  TORCH_CHECK(!maxnorm.isComplex(), "renorm: maxnorm must be real-valued");
  TORCH_CHECK(maxnorm.toDouble() >= 0.0, "renorm: expected maxnorm to be >= 0 but got ", maxnorm.toDouble());
  TORCH_CHECK(self.dim() > 1, "renorm: input needs at least 2 dimensions, got ", self.dim(), " dimensions");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(self));
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, s.rank(), op);
  std::vector<int64_t> reduce;
  for (int64_t i = 0; i < s.rank(); ++i)
    if (i != d) reduce.push_back(i);
  at::ScalarType acc = self.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor norm_t = linalg_vector_norm(self, p, at::IntArrayRef(reduce), true, acc);
  Value norm = GetXlaTensor(norm_t, op)->GetIrValue();
  Value limit = ScalarLike(maxnorm.toDouble(), norm);
  Value factor = ir::Select(ir::Compare(CompareDirection::kGt, norm, limit), Div(limit, Add(norm, ScalarLike(1e-7, norm))),
                            ScalarLike(1, norm));
  factor = ir::Broadcast(ir::Convert(factor, s.type), s.dims);
  return AtenFromIr(Mul(x->GetIrValue(), factor), x->device());
}

}  // namespace torch_xla
