// Transformer-layer kernels: layer norm, GELU, softmax (plain and "safe", as the attention
// math path uses it), baddbmm, addmv/dot (matmul with 1-D operands) and their backward formulas.
// Low-precision floats (bf16, f16) compute in f32 internally and round once at the end,
// as PyTorch's CPU kernels do.
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


// Reduces `dims` of `v` and broadcasts the result back to v's shape.
Value ReduceBack(ReduceKind kind, const Value& v, const std::vector<int64_t>& dims) {
  Value r = ir::Reduce(kind, v, dims);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < v.shape().rank(); ++i)
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) kept.push_back(i);
  return ir::BroadcastInDim(r, v.shape().dims, kept);
}

void CheckFloating(const at::Tensor& t, const char* op, const char* what) {
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), op, ": expected a floating point ", what, ", got ",
              DescribeTensor(t));
}

std::string ListString(at::IntArrayRef v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

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
              "element, but got normalized_shape = ", ListString(normalized_shape));
  const int64_t rank = input.dim();
  bool ok = rank >= nd;
  for (int64_t i = 0; ok && i < nd; ++i) ok = input.size(rank - nd + i) == normalized_shape[i];
  TORCH_CHECK(ok, op, ": Given normalized_shape=", ListString(normalized_shape), ", expected input with shape [*, ",
              ListString(normalized_shape).substr(1), ", but got input of size ", ListString(input.sizes()));
  for (const at::Tensor* p : {weight, bias}) {
    if (p == nullptr) continue;
    TORCH_CHECK(p->sizes() == normalized_shape, op, ": Expected ", p == weight ? "weight" : "bias",
                " to be of same shape as normalized_shape, but got ", p == weight ? "weight" : "bias",
                " of shape ", ListString(p->sizes()), " and normalized_shape = ", ListString(normalized_shape));
    TORCH_CHECK(at::isFloatingType(p->scalar_type()), op, ": expected a floating point ",
                p == weight ? "weight" : "bias", ", got ", DescribeTensor(*p));
  }
  CheckFloating(input, op, "input");
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

// ---- softmax ---------------------------------------------------------------

Value Softmax(const Value& x, int64_t dim) {
  Value max = ReduceBack(ReduceKind::kMax, x, {dim});
  Value e = ir::Unary(ir::op::kExp, Sub(x, max));
  return Div(e, ReduceBack(ReduceKind::kSum, e, {dim}));
}

// ---- gelu ------------------------------------------------------------------

enum class GeluKind { kNone, kTanh };

GeluKind ParseApproximate(c10::string_view approximate, const char* op) {
  if (approximate == "none") return GeluKind::kNone;
  if (approximate == "tanh") return GeluKind::kTanh;
  TORCH_CHECK(false, op, ": approximate argument must be either none or tanh, got '", std::string(approximate), "'");
}

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
constexpr double kKappa = 0.044715;

// tanh(sqrt(2/pi) * (x + kappa x^3))
Value GeluTanhInner(const Value& x) {
  Value x3 = Mul(Mul(x, x), x);
  return ir::Unary(ir::op::kTanh, Mul(ScalarLike(kSqrt2OverPi, x), Add(x, Mul(ScalarLike(kKappa, x), x3))));
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
              " with normalized_shape ", ListString(normalized_shape));
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
      Value mean_g = Div(ReduceBack(ReduceKind::kSum, g, s.norm_dims), n);
      Value mean_gx = Div(ReduceBack(ReduceKind::kSum, Mul(g, xhat), s.norm_dims), n);
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

// ---- gelu ------------------------------------------------------------------

at::Tensor XLANativeFunctions::gelu(const at::Tensor& self, c10::string_view approximate) {
  XLA_COUNT("gelu");
  GeluKind kind = ParseApproximate(approximate, "gelu");
  CheckFloating(self, "gelu", "input");
  XlaTensorPtr x = GetXlaTensor(self, "gelu");
  ElementType type = x->shape().type;
  Value v = ir::Convert(x->GetIrValue(), AccumulationType(type));
  Value half_x = Mul(ScalarLike(0.5, v), v);
  Value y = kind == GeluKind::kNone
                ? Mul(half_x, Add(ScalarLike(1, v), ir::Unary(ir::op::kErf, Mul(v, ScalarLike(1 / kSqrt2, v)))))
                : Mul(half_x, Add(ScalarLike(1, v), GeluTanhInner(v)));
  return AtenFromIr(ir::Convert(y, type), x->device());
}

at::Tensor XLANativeFunctions::gelu_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                             c10::string_view approximate) {
  XLA_COUNT("gelu_backward");
  const char* op = "gelu_backward";
  GeluKind kind = ParseApproximate(approximate, op);
  CheckFloating(self, op, "input");
  TORCH_CHECK(grad_output.sizes() == self.sizes(), op, ": grad_output ", DescribeTensor(grad_output),
              " does not match input ", DescribeTensor(self));
  int device = CommonDevice({&grad_output, &self}, op);
  ElementType type = ElementTypeOf(at::result_type(grad_output, self));
  ElementType ct = AccumulationType(type);
  Value x = ir::Convert(GetXlaTensor(self, op)->GetIrValue(), ct);
  Value g = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), ct);
  Value d;
  if (kind == GeluKind::kNone) {
    Value cdf = Mul(ScalarLike(0.5, x), Add(ScalarLike(1, x), ir::Unary(ir::op::kErf, Mul(x, ScalarLike(1 / kSqrt2, x)))));
    Value pdf = Mul(ScalarLike(kInvSqrt2Pi, x), ir::Unary(ir::op::kExp, Mul(ScalarLike(-0.5, x), Mul(x, x))));
    d = Add(cdf, Mul(x, pdf));
  } else {
    Value t = GeluTanhInner(x);
    Value left_derivative = Mul(ScalarLike(0.5, x), Add(ScalarLike(1, x), t));
    Value inner_derivative =
        Mul(ScalarLike(kSqrt2OverPi, x), Add(ScalarLike(1, x), Mul(ScalarLike(3 * kKappa, x), Mul(x, x))));
    Value right_derivative = Mul(Mul(Mul(ScalarLike(0.5, x), x), Sub(ScalarLike(1, x), Mul(t, t))), inner_derivative);
    d = Add(left_derivative, right_derivative);
  }
  return AtenFromIr(ir::Convert(Mul(g, d), type), device);
}

// ---- softmax ---------------------------------------------------------------

at::Tensor XLANativeFunctions::_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  XLA_COUNT("_softmax");
  TORCH_CHECK(!half_to_float, "_softmax: softmax with half to float conversion is not supported on XLA");
  CheckFloating(self, "_softmax", "input");
  XlaTensorPtr x = GetXlaTensor(self, "_softmax");
  ElementType type = x->shape().type;
  int64_t d = WrapDim(dim, x->shape().rank(), "_softmax");
  Value v = ir::Convert(x->GetIrValue(), AccumulationType(type));
  if (x->shape().rank() == 0) return AtenFromIr(ir::Convert(ScalarLike(1, v), type), x->device());
  return AtenFromIr(ir::Convert(Softmax(v, d), type), x->device());
}

at::Tensor XLANativeFunctions::_softmax_backward_data(const at::Tensor& grad_output, const at::Tensor& output,
                                                      int64_t dim, at::ScalarType input_dtype) {
  XLA_COUNT("_softmax_backward_data");
  const char* op = "_softmax_backward_data";
  TORCH_CHECK(grad_output.sizes() == output.sizes(), op, ": grad_output ", DescribeTensor(grad_output),
              " does not match output ", DescribeTensor(output));
  CheckFloating(output, op, "output");
  int device = CommonDevice({&grad_output, &output}, op);
  int64_t d = WrapDim(dim, output.dim(), op);
  ElementType ct = AccumulationType(ElementTypeOf(output.scalar_type()));
  Value y = ir::Convert(GetXlaTensor(output, op)->GetIrValue(), ct);
  Value g = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), ct);
  ElementType out_type = ElementTypeOf(input_dtype);
  if (output.dim() == 0) return AtenFromIr(ir::Convert(ScalarLike(0, y), out_type), device);
  Value dx = Mul(y, Sub(g, ReduceBack(ReduceKind::kSum, Mul(g, y), {d})));
  return AtenFromIr(ir::Convert(dx, out_type), device);
}

at::Tensor XLANativeFunctions::_safe_softmax(const at::Tensor& self, int64_t dim,
                                             std::optional<at::ScalarType> dtype) {
  XLA_COUNT("_safe_softmax");
  XlaTensorPtr x = GetXlaTensor(self, "_safe_softmax");
  ElementType type = dtype ? ElementTypeOf(*dtype) : x->shape().type;
  TORCH_CHECK(runtime::IsFloating(type), "_safe_softmax: expected a floating point input or dtype, got ",
              DescribeTensor(self), dtype ? " with dtype " + std::string(c10::toString(*dtype)) : std::string());
  int64_t d = WrapDim(dim, x->shape().rank(), "_safe_softmax");
  Value v = ir::Convert(ir::Convert(x->GetIrValue(), type), AccumulationType(type));
  if (x->shape().rank() == 0) return AtenFromIr(ir::Convert(ScalarLike(1, v), type), x->device());
  // Rows whose elements are all -inf (fully masked) give zeros instead of NaN.
  Value max = ReduceBack(ReduceKind::kMax, v, {d});
  Value masked = ir::Compare(CompareDirection::kEq, max, ScalarLike(-std::numeric_limits<double>::infinity(), max));
  Value y = ir::Select(masked, ScalarLike(0, v), Softmax(v, d));
  return AtenFromIr(ir::Convert(y, type), x->device());
}

// ---- _native_multi_head_attention ---------------------------------------------
// The fused self-attention of nn.MultiheadAttention's inference fast path (PyTorch takes
// that path for CPU/CUDA tensors only; this kernel serves direct calls). As on the CPU:
// q/k/v = input @ W^T + b with q scaled by 1/sqrt(head dim); a mask (any dtype, nonzero =
// masked out) is [T, T] for mask_type 0, [B, T] for 1, [B, H, T, T] for 2; masked scores
// are -inf before the softmax (a fully masked row gives NaN, as on the CPU); the result
// is the output projection and, with need_weights, the attention weights (averaged over
// the heads with average_attn_weights).

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::_native_multi_head_attention(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, int64_t embed_dim, int64_t num_head,
    const at::Tensor& qkv_weight, const at::Tensor& qkv_bias, const at::Tensor& proj_weight,
    const at::Tensor& proj_bias, const std::optional<at::Tensor>& mask, bool need_weights,
    bool average_attn_weights, std::optional<int64_t> mask_type) {
  XLA_COUNT("_native_multi_head_attention");
  const char* op = "_native_multi_head_attention";
  const int64_t D = embed_dim;
  TORCH_CHECK(query.dim() == 3, op, ": expected 3-D `query`, got ", DescribeTensor(query));
  TORCH_CHECK(query.size(2) == D, op, ": passed-in embed_dim ", D, " didn't match last dim of query ",
              DescribeTensor(query));
  TORCH_CHECK(key.dim() == 3 && value.dim() == 3 && query.sizes() == key.sizes() && key.sizes() == value.sizes(), op,
              ": expected `query`/`key`/`value` shapes to match, got ", DescribeTensor(query), ", ",
              DescribeTensor(key), " and ", DescribeTensor(value));
  TORCH_CHECK(qkv_weight.dim() == 2 && qkv_weight.size(0) == 3 * D && qkv_weight.size(1) == D, op,
              ": expected `qkv_weight` of shape [3 * embed_dim, embed_dim] = [", 3 * D, ", ", D, "], got ",
              DescribeTensor(qkv_weight));
  TORCH_CHECK(qkv_bias.dim() == 1 && qkv_bias.size(0) == 3 * D, op, ": expected `qkv_bias` of shape [", 3 * D,
              "], got ", DescribeTensor(qkv_bias));
  TORCH_CHECK(proj_weight.dim() == 2 && proj_weight.size(1) == D, op, ": expected `proj_weight` of shape [*, ", D,
              "], got ", DescribeTensor(proj_weight));
  TORCH_CHECK(proj_bias.dim() == 1 && proj_bias.size(0) == proj_weight.size(0), op, ": expected `proj_bias` of shape [",
              proj_weight.size(0), "], got ", DescribeTensor(proj_bias));
  TORCH_CHECK(num_head > 0 && D % num_head == 0, op, ": `embed_dim` ", D, " must divide evenly by `num_heads` ",
              num_head);
  CheckFloating(query, op, "query");
  for (const at::Tensor* t : {&key, &value, &qkv_weight, &qkv_bias, &proj_weight, &proj_bias})
    TORCH_CHECK(t->scalar_type() == query.scalar_type(), op, ": expected all tensors of dtype ", query.scalar_type(),
                ", got ", DescribeTensor(*t));
  const at::Tensor* m = DefinedOrNull(mask);
  const int64_t B = query.size(0), T = query.size(1), H = num_head, dh = D / num_head;
  const std::vector<int64_t> scores_dims = {B, H, T, T};
  if (m) {
    TORCH_CHECK(mask_type.has_value(), op, ": Mask Type should be defined");
    int64_t mt = *mask_type;
    TORCH_CHECK(mt == 0 || mt == 1 || mt == 2, op,
                ": Mask Type should be 0 (src_mask) or 1 (src_key_padding_mask), or 2 (default_mask), got ", mt);
    std::vector<int64_t> expected = mt == 0 ? std::vector<int64_t>{T, T}
                                    : mt == 1 ? std::vector<int64_t>{B, T}
                                              : scores_dims;
    TORCH_CHECK(m->sizes() == at::IntArrayRef(expected), op, ": for mask_type == ", mt, " the mask shape should be ",
                ListString(expected), ", got ", DescribeTensor(*m));
  }
  int device = CommonDevice({&query, &key, &value, &qkv_weight, &qkv_bias, &proj_weight, &proj_bias}, op);
  ElementType type = ElementTypeOf(query.scalar_type());
  if (query.numel() == 0) return std::make_tuple(AtenFromIr(ir::Constant(0, ir::Shape(type, {B, T, D})), device), at::Tensor());
  return Checked(op, [&] {
    auto ir_of = [&](const at::Tensor& t) { return GetXlaTensor(t, op)->GetIrValue(); };
    Value w = ir_of(qkv_weight);
    Value bias = ir_of(qkv_bias);
    // [B, T, D] @ W[i*D:(i+1)*D]^T + b[i*D:(i+1)*D], as [B, H, T, dh].
    auto project = [&](const at::Tensor& input, int64_t i) {
      Value wi = ir::Slice(w, {i * D, 0}, {(i + 1) * D, D}, {1, 1});
      Value bi = ir::Slice(bias, {i * D}, {(i + 1) * D}, {1});
      Value y = ir::DotGeneral(ir_of(input), wi, {}, {}, {2}, {1}, type);
      y = Add(y, ir::Broadcast(bi, y.shape().dims));
      if (i == 0) y = Mul(y, ScalarLike(1.0 / std::sqrt(static_cast<double>(dh)), y));
      return ir::Transpose(ir::Reshape(y, {B, T, H, dh}), {0, 2, 1, 3});
    };
    Value q = project(query, 0), k = project(key, 1), v = project(value, 2);
    ElementType ct = AccumulationType(type);
    Value scores = ir::Convert(ir::DotGeneral(q, k, {0, 1}, {0, 1}, {3}, {3}, type), ct);
    if (m) {
      Value mv = ir_of(*m);
      if (mv.shape().type != ElementType::kPred)
        mv = ir::Compare(CompareDirection::kNe, mv, ir::Constant(0, mv.shape()));
      int64_t mt = *mask_type;
      mv = mt == 0 ? ir::BroadcastInDim(mv, scores_dims, {2, 3})
           : mt == 1 ? ir::BroadcastInDim(mv, scores_dims, {0, 3})
                     : mv;
      scores = ir::Select(mv, ScalarLike(-std::numeric_limits<double>::infinity(), scores), scores);
    }
    Value attn = ir::Convert(Softmax(scores, 3), type);
    Value ctx = ir::DotGeneral(attn, v, {0, 1}, {0, 1}, {3}, {2}, type);  // [B, H, T, dh]
    ctx = ir::Reshape(ir::Transpose(ctx, {0, 2, 1, 3}), {B, T, D});
    Value out = ir::DotGeneral(ctx, ir_of(proj_weight), {}, {}, {2}, {1}, type);
    out = Add(out, ir::Broadcast(ir_of(proj_bias), out.shape().dims));
    at::Tensor weights;
    if (need_weights) {
      Value wts = attn;
      if (average_attn_weights) {
        Value sum = ir::Reduce(ReduceKind::kSum, ir::Convert(attn, ct), {1});
        wts = ir::Convert(Div(sum, ScalarLike(static_cast<double>(H), sum)), type);
      }
      weights = AtenFromIr(wts, device);
    }
    return std::make_tuple(AtenFromIr(out, device), weights);
  });
}

// ---- baddbmm ---------------------------------------------------------------

at::Tensor XLANativeFunctions::baddbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                                       const at::Scalar& beta, const at::Scalar& alpha) {
  XLA_COUNT("baddbmm");
  const char* op = "baddbmm";
  TORCH_CHECK(batch1.dim() == 3, op, ": batch1 must be a 3D tensor, got ", DescribeTensor(batch1));
  TORCH_CHECK(batch2.dim() == 3, op, ": batch2 must be a 3D tensor, got ", DescribeTensor(batch2));
  TORCH_CHECK(batch1.size(0) == batch2.size(0) && batch1.size(2) == batch2.size(1), op,
              ": shapes cannot be multiplied: batch1 ", DescribeTensor(batch1), " and batch2 ",
              DescribeTensor(batch2));
  TORCH_CHECK(batch1.scalar_type() == batch2.scalar_type() && self.scalar_type() == batch1.scalar_type(), op,
              ": expected self, batch1 and batch2 to have the same dtype, but got ", self.scalar_type(), ", ",
              batch1.scalar_type(), " and ", batch2.scalar_type());
  int device = CommonDevice({&self, &batch1, &batch2}, op);
  Value a = GetXlaTensor(batch1, op)->GetIrValue();
  Value b = GetXlaTensor(batch2, op)->GetIrValue();
  ElementType type = a.shape().type;
  Value product = ir::DotGeneral(a, b, {0}, {0}, {2}, {1}, type);
  const auto& dims = product.shape().dims;
  auto is_value = [](const at::Scalar& s, double v) {
    return s.isIntegral(true) ? s.toLong() == static_cast<int64_t>(v) : s.toDouble() == v;
  };
  // The bias must broadcast to the product even when beta is 0 (PyTorch checks it too).
  Value bias = Checked(op, [&] { return ir::Broadcast(IrOperand(self, type, op), dims); });
  if (!is_value(alpha, 1)) product = Mul(product, ir::Broadcast(IrScalar(alpha, type), dims));
  // beta = 0 ignores self entirely, NaN and inf included.
  if (is_value(beta, 0)) return AtenFromIr(product, device);
  if (!is_value(beta, 1)) bias = Mul(bias, ir::Broadcast(IrScalar(beta, type), dims));
  return AtenFromIr(Add(bias, product), device);
}

// ---- matrix-vector products (matmul with a 1-D operand) ----------------------

at::Tensor XLANativeFunctions::addmv(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                                     const at::Scalar& beta, const at::Scalar& alpha) {
  XLA_COUNT("addmv");
  const char* op = "addmv";
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1 && mat.size(1) == vec.size(0), op,
              ": vector + matrix @ vector expected, got mat ", DescribeTensor(mat), " and vec ", DescribeTensor(vec));
  TORCH_CHECK(mat.scalar_type() == vec.scalar_type() && self.scalar_type() == mat.scalar_type(), op,
              ": expected self, mat and vec to have the same dtype, but got ", self.scalar_type(), ", ",
              mat.scalar_type(), " and ", vec.scalar_type());
  int device = CommonDevice({&self, &mat, &vec}, op);
  Value a = GetXlaTensor(mat, op)->GetIrValue();
  Value v = GetXlaTensor(vec, op)->GetIrValue();
  ElementType type = a.shape().type;
  Value product = ir::DotGeneral(a, v, {}, {}, {1}, {0}, type);
  const auto& dims = product.shape().dims;
  auto is_value = [](const at::Scalar& s, double x) {
    return s.isIntegral(true) ? s.toLong() == static_cast<int64_t>(x) : s.toDouble() == x;
  };
  Value bias = Checked(op, [&] { return ir::Broadcast(IrOperand(self, type, op), dims); });
  if (!is_value(alpha, 1)) product = Mul(product, ir::Broadcast(IrScalar(alpha, type), dims));
  // beta = 0 ignores self (mv passes an uninitialized result as self).
  if (is_value(beta, 0)) return AtenFromIr(product, device);
  if (!is_value(beta, 1)) bias = Mul(bias, ir::Broadcast(IrScalar(beta, type), dims));
  return AtenFromIr(Add(bias, product), device);
}

at::Tensor XLANativeFunctions::dot(const at::Tensor& self, const at::Tensor& tensor) {
  XLA_COUNT("dot");
  TORCH_CHECK(self.dim() == 1 && tensor.dim() == 1, "dot: 1D tensors expected, but got ", self.dim(), "D and ",
              tensor.dim(), "D tensors");
  TORCH_CHECK(self.size(0) == tensor.size(0), "dot: inconsistent tensor size, expected tensor [", self.size(0),
              "] and src [", tensor.size(0), "] to have the same number of elements, but got ", self.size(0), " and ",
              tensor.size(0), " elements respectively");
  TORCH_CHECK(self.scalar_type() == tensor.scalar_type(), "dot: expected both vectors to have same dtype, but found ",
              self.scalar_type(), " and ", tensor.scalar_type());
  int device = CommonDevice({&self, &tensor}, "dot");
  Value a = GetXlaTensor(self, "dot")->GetIrValue();
  Value b = GetXlaTensor(tensor, "dot")->GetIrValue();
  return AtenFromIr(ir::DotGeneral(a, b, {}, {}, {0}, {0}, a.shape().type), device);
}

}  // namespace torch_xla
