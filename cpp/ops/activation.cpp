// Activation kernels and their backward formulas: relu, threshold, hardtanh, leaky_relu,
// elu, silu, softplus, mish, hardsigmoid, hardswish, hardshrink, softshrink, glu,
// log_sigmoid, GELU (exact and tanh) and PReLU. The element-wise ones follow PyTorch's
// type promotion (ops/elementwise_util.h); GELU and PReLU compute low-precision floats
// (bf16, f16) in f32 internally and round once at the end, as PyTorch's CPU kernels do.
// (rrelu draws its noise in ops/distributions.cpp; softmax is in ops/softmax.cpp.)
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ops/elementwise_util.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;
using namespace elementwise_util;

}  // namespace

// ---- relu ----------------------------------------------------------------------

at::Tensor XLANativeFunctions::relu(const at::Tensor& self) {
  XLA_COUNT("relu");
  TORCH_CHECK(self.scalar_type() != at::kBool, "relu: Boolean inputs not supported");
  XlaTensorPtr x = GetXlaTensor(self, "relu");
  Value v = x->GetIrValue();
  return AtenFromIr(NanPropagating(ir::op::kMaximum, v, ScalarLike(0, v)), x->device());
}

at::Tensor XLANativeFunctions::threshold_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                  const at::Scalar& threshold) {
  XLA_COUNT("threshold_backward");
  ElementType type = ElementTypeOf(grad_output.scalar_type());
  Operands o = Promote(grad_output, self, type, "threshold_backward");
  Value at_or_below = ir::Compare(CompareDirection::kLe, o.b, ir::Broadcast(IrScalar(threshold, type), o.b.shape().dims));
  return AtenFromIr(ir::Select(at_or_below, ScalarLike(0, o.a), o.a), o.device);
}

namespace {

void CheckNotBool(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.scalar_type() != at::kBool, op, ": boolean tensors are not supported, got ", DescribeTensor(t));
}

// An activation computed in self's (floating) type.
struct ActIn {
  Value x;
  int device;
};
ActIn GetAct(const at::Tensor& self, const char* op) {
  CheckFloating(self, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  return ActIn{x->GetIrValue(), x->device()};
}

Value Sigmoid(const Value& x) { return ir::Unary(ir::op::kLogistic, x); }

}  // namespace

// ---- activations and their backward formulas --------------------------------------
at::Tensor XLANativeFunctions::hardtanh(const at::Tensor& self, const at::Scalar& min_val, const at::Scalar& max_val) {
  XLA_COUNT("hardtanh");
  CheckNotBool(self, "hardtanh");
  TORCH_CHECK(min_val.toDouble() <= max_val.toDouble(), "hardtanh: min_val (", min_val, ") must be <= max_val (", max_val, ")");
  XlaTensorPtr x = GetXlaTensor(self, "hardtanh");
  Value v = x->GetIrValue();
  v = NanPropagating(ir::op::kMaximum, v, Bcast(min_val, v));
  v = NanPropagating(ir::op::kMinimum, v, Bcast(max_val, v));
  return AtenFromIr(v, x->device());
}

at::Tensor XLANativeFunctions::hardtanh_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                 const at::Scalar& min_val, const at::Scalar& max_val) {
  XLA_COUNT("hardtanh_backward");
  BackIn b = GetBack(grad_output, self, "hardtanh_backward");
  Value outside = Or(Cmp(CompareDirection::kLe, b.x, Bcast(min_val, b.x)), Cmp(CompareDirection::kGe, b.x, Bcast(max_val, b.x)));
  return AtenFromIr(ir::Select(outside, Zeros(b.g), b.g), b.device);
}

at::Tensor XLANativeFunctions::leaky_relu(const at::Tensor& self, const at::Scalar& negative_slope) {
  XLA_COUNT("leaky_relu");
  ActIn in = GetAct(self, "leaky_relu");
  Value pos = Cmp(CompareDirection::kGt, in.x, Zeros(in.x));
  return AtenFromIr(ir::Select(pos, in.x, Mul(in.x, Bcast(negative_slope, in.x))), in.device);
}

at::Tensor XLANativeFunctions::leaky_relu_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                   const at::Scalar& negative_slope, bool self_is_result) {
  XLA_COUNT("leaky_relu_backward");
  TORCH_CHECK(!self_is_result || negative_slope.toDouble() >= 0.0,
              "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
              "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
              "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
              "in-place leakRelu backward calculation with negative slope");
  BackIn b = GetBack(grad_output, self, "leaky_relu_backward");
  Value pos = Cmp(CompareDirection::kGt, b.x, Zeros(b.x));
  return AtenFromIr(ir::Select(pos, b.g, Mul(b.g, Bcast(negative_slope, b.g))), b.device);
}

at::Tensor XLANativeFunctions::elu(const at::Tensor& self, const at::Scalar& alpha, const at::Scalar& scale,
                                   const at::Scalar& input_scale) {
  XLA_COUNT("elu");
  ActIn in = GetAct(self, "elu");
  Value x = in.x;
  Value neg = Mul(ir::Unary(ir::op::kExpm1, Mul(x, Bcast(input_scale, x))),
                  BcastD(alpha.toDouble() * scale.toDouble(), x));
  Value pos = Mul(x, Bcast(scale, x));
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kLe, x, Zeros(x)), neg, pos), in.device);
}

at::Tensor XLANativeFunctions::elu_backward(const at::Tensor& grad_output, const at::Scalar& alpha, const at::Scalar& scale,
                                            const at::Scalar& input_scale, bool is_result,
                                            const at::Tensor& self_or_result) {
  XLA_COUNT("elu_backward");
  TORCH_CHECK(!is_result || alpha.toDouble() >= 0.0,
              "In-place elu backward calculation is triggered with a negative slope which is not supported. This is "
              "caused by calling in-place forward function with a negative slope, please call out-of-place version "
              "instead.");
  BackIn b = GetBack(grad_output, self_or_result, "elu_backward");
  double negcoef = alpha.toDouble() * scale.toDouble();
  Value x = b.x, g = b.g;
  Value neg_grad = is_result ? Mul(Mul(g, Bcast(input_scale, g)), Add(x, BcastD(negcoef, x)))
                             : Mul(Mul(g, BcastD(input_scale.toDouble() * negcoef, g)),
                                   Exp(Mul(x, Bcast(input_scale, x))));
  Value pos_grad = Mul(g, Bcast(scale, g));
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kLe, x, Zeros(x)), neg_grad, pos_grad), b.device);
}

at::Tensor XLANativeFunctions::silu(const at::Tensor& self) {
  XLA_COUNT("silu");
  ActIn in = GetAct(self, "silu");
  return AtenFromIr(Mul(in.x, Sigmoid(in.x)), in.device);
}

at::Tensor XLANativeFunctions::silu_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  XLA_COUNT("silu_backward");
  BackIn b = GetBack(grad_output, self, "silu_backward");
  Value s = Sigmoid(b.x);
  Value one = ScalarLike(1, s);
  return AtenFromIr(Mul(Mul(b.g, s), Add(one, Mul(b.x, Sub(one, s)))), b.device);
}

at::Tensor XLANativeFunctions::softplus(const at::Tensor& self, const at::Scalar& beta, const at::Scalar& threshold) {
  XLA_COUNT("softplus");
  ActIn in = GetAct(self, "softplus");
  Value x = in.x;
  Value bx = Mul(x, Bcast(beta, x));
  Value soft = Div(Log1p(Exp(bx)), Bcast(beta, x));
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kGt, bx, Bcast(threshold, x)), x, soft), in.device);
}

at::Tensor XLANativeFunctions::softplus_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                 const at::Scalar& beta, const at::Scalar& threshold) {
  XLA_COUNT("softplus_backward");
  BackIn b = GetBack(grad_output, self, "softplus_backward");
  Value bx = Mul(b.x, Bcast(beta, b.x));
  Value z = Exp(bx);
  Value soft = Div(Mul(b.g, z), Add(z, ScalarLike(1, z)));
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kGt, bx, Bcast(threshold, b.x)), b.g, soft), b.device);
}

at::Tensor XLANativeFunctions::mish(const at::Tensor& self) {
  XLA_COUNT("mish");
  ActIn in = GetAct(self, "mish");
  return AtenFromIr(Mul(in.x, ir::Unary(ir::op::kTanh, Log1p(Exp(in.x)))), in.device);
}

at::Tensor XLANativeFunctions::hardsigmoid(const at::Tensor& self) {
  XLA_COUNT("hardsigmoid");
  ActIn in = GetAct(self, "hardsigmoid");
  Value x = in.x;
  Value r = ir::Binary(ir::op::kMinimum, ir::Binary(ir::op::kMaximum, Add(x, ScalarLike(3, x)), Zeros(x)), ScalarLike(6, x));
  return AtenFromIr(Div(r, ScalarLike(6, r)), in.device);
}

at::Tensor XLANativeFunctions::hardsigmoid_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  XLA_COUNT("hardsigmoid_backward");
  BackIn b = GetBack(grad_output, self, "hardsigmoid_backward");
  Value inside = And(Cmp(CompareDirection::kGt, b.x, ScalarLike(-3, b.x)), Cmp(CompareDirection::kLt, b.x, ScalarLike(3, b.x)));
  return AtenFromIr(ir::Select(inside, Div(b.g, ScalarLike(6, b.g)), Zeros(b.g)), b.device);
}

at::Tensor XLANativeFunctions::hardswish(const at::Tensor& self) {
  XLA_COUNT("hardswish");
  ActIn in = GetAct(self, "hardswish");
  Value x = in.x;
  Value r = ir::Binary(ir::op::kMinimum, ir::Binary(ir::op::kMaximum, Add(x, ScalarLike(3, x)), Zeros(x)), ScalarLike(6, x));
  return AtenFromIr(Div(Mul(x, r), ScalarLike(6, r)), in.device);
}

at::Tensor XLANativeFunctions::hardswish_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  XLA_COUNT("hardswish_backward");
  BackIn b = GetBack(grad_output, self, "hardswish_backward");
  Value x = b.x, g = b.g;
  Value mid = Mul(g, Add(Div(x, ScalarLike(3, x)), ScalarLike(0.5, x)));
  Value r = ir::Select(Cmp(CompareDirection::kLe, x, ScalarLike(3, x)), mid, g);
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kLt, x, ScalarLike(-3, x)), Zeros(g), r), b.device);
}

// ---- threshold, shrinkage activations, gated units ------------------------------

at::Tensor XLANativeFunctions::threshold(const at::Tensor& self, const at::Scalar& threshold, const at::Scalar& value) {
  XLA_COUNT("threshold");
  CheckNotBool(self, "threshold");
  XlaTensorPtr x = GetXlaTensor(self, "threshold");
  Value v = x->GetIrValue();
  return AtenFromIr(ir::Select(Cmp(CompareDirection::kLe, v, Bcast(threshold, v)), Bcast(value, v), v), x->device());
}

at::Tensor XLANativeFunctions::hardshrink(const at::Tensor& self, const at::Scalar& lambd) {
  XLA_COUNT("hardshrink");
  ActIn in = GetAct(self, "hardshrink");
  Value x = in.x;
  Value inside = And(Cmp(CompareDirection::kGe, x, Bcast(-lambd.toDouble(), x)), Cmp(CompareDirection::kLe, x, Bcast(lambd, x)));
  return AtenFromIr(ir::Select(inside, Zeros(x), x), in.device);
}

at::Tensor XLANativeFunctions::hardshrink_backward(const at::Tensor& grad_out, const at::Tensor& self,
                                                   const at::Scalar& lambd) {
  XLA_COUNT("hardshrink_backward");
  BackIn b = GetBack(grad_out, self, "hardshrink_backward");
  Value inside = And(Cmp(CompareDirection::kGe, b.x, Bcast(-lambd.toDouble(), b.x)), Cmp(CompareDirection::kLe, b.x, Bcast(lambd, b.x)));
  return AtenFromIr(ir::Select(inside, Zeros(b.g), b.g), b.device);
}

at::Tensor XLANativeFunctions::softshrink(const at::Tensor& self, const at::Scalar& lambd) {
  XLA_COUNT("softshrink");
  TORCH_CHECK(lambd.toDouble() >= 0, "softshrink: lambda must be greater or equal to 0, but found to be ", lambd.toDouble(), ".");
  ActIn in = GetAct(self, "softshrink");
  Value x = in.x, l = Bcast(lambd, in.x);
  Value r = ir::Select(Cmp(CompareDirection::kGt, x, l), Sub(x, l),
                       ir::Select(Cmp(CompareDirection::kLt, x, ir::Unary(ir::op::kNegate, l)), Add(x, l), Zeros(x)));
  return AtenFromIr(ir::Select(IsNan(x), x, r), in.device);
}

at::Tensor XLANativeFunctions::softshrink_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                   const at::Scalar& lambd) {
  XLA_COUNT("softshrink_backward");
  BackIn b = GetBack(grad_output, self, "softshrink_backward");
  Value inside = And(Cmp(CompareDirection::kGe, b.x, Bcast(-lambd.toDouble(), b.x)), Cmp(CompareDirection::kLe, b.x, Bcast(lambd, b.x)));
  return AtenFromIr(ir::Select(inside, Zeros(b.g), b.g), b.device);
}

namespace {
struct Halves {
  Value a, b;
  int64_t dim;
  int device;
};
Halves GluHalves(const at::Tensor& self, int64_t dim, const char* op) {
  TORCH_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  CheckFloating(self, op);
  int64_t d = WrapDim(dim, self.dim(), op);
  int64_t n = self.size(d);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  XlaTensorPtr x = GetXlaTensor(self, op);
  Value v = x->GetIrValue();
  std::vector<int64_t> lo(v.shape().rank(), 0), hi = v.shape().dims, st(v.shape().rank(), 1);
  hi[d] = n / 2;
  Value a = ir::Slice(v, lo, hi, st);
  lo[d] = n / 2;
  hi[d] = n;
  return Halves{a, ir::Slice(v, lo, hi, st), d, x->device()};
}
}  // namespace

at::Tensor XLANativeFunctions::glu(const at::Tensor& self, int64_t dim) {
  XLA_COUNT("glu");
  Halves h = GluHalves(self, dim, "glu");
  return AtenFromIr(Mul(h.a, Sigmoid(h.b)), h.device);
}

at::Tensor XLANativeFunctions::glu_backward(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim) {
  XLA_COUNT("glu_backward");
  Halves h = GluHalves(self, dim, "glu_backward");
  Value g = ir::Convert(GetXlaTensor(grad_output, "glu_backward")->GetIrValue(), h.a.shape().type);
  TORCH_CHECK(g.shape().dims == h.a.shape().dims, "glu_backward: grad_output ", DescribeTensor(grad_output),
              " does not match half of self ", DescribeTensor(self));
  Value s = Sigmoid(h.b);
  Value grad_a = Mul(g, s);
  Value grad_b = Mul(Mul(grad_a, h.a), Sub(ScalarLike(1, s), s));
  return AtenFromIr(ir::Concatenate({grad_a, grad_b}, h.dim), h.device);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::log_sigmoid_forward(const at::Tensor& self) {
  XLA_COUNT("log_sigmoid_forward");
  ActIn in = GetAct(self, "log_sigmoid");
  Value x = in.x;
  // min(x, 0) - log1p(exp(-|x|)), stable for large |x|.
  Value r = Sub(ir::Binary(ir::op::kMinimum, x, Zeros(x)),
                Log1p(Exp(ir::Unary(ir::op::kNegate, ir::Unary(ir::op::kAbs, x)))));
  // The buffer is unused by our backward (like CUDA's, it is empty).
  Value buffer = ir::Constant(0, ir::Shape(x.shape().type, {0}));
  return {AtenFromIr(ir::Select(IsNan(x), x, r), in.device), AtenFromIr(buffer, in.device)};
}

at::Tensor XLANativeFunctions::log_sigmoid_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                    const at::Tensor& buffer) {
  XLA_COUNT("log_sigmoid_backward");
  BackIn b = GetBack(grad_output, self, "log_sigmoid_backward");
  return AtenFromIr(Mul(b.g, Sigmoid(ir::Unary(ir::op::kNegate, b.x))), b.device);
}

namespace {

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

// ---- gelu ------------------------------------------------------------------

at::Tensor XLANativeFunctions::gelu(const at::Tensor& self, c10::string_view approximate) {
  XLA_COUNT("gelu");
  GeluKind kind = ParseApproximate(approximate, "gelu");
  CheckFloatingArg(self, "gelu", "input");
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
  CheckFloatingArg(self, op, "input");
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

// ---- PReLU ------------------------------------------------------------------
// PReLU's kernels. PyTorch's composite prelu reshapes the weight to broadcast against
// the input (one value, or one per channel) and calls these:
//   _prelu_kernel            x > 0 ? x : w * x
//   _prelu_kernel_backward   grad_input  = x > 0 ? g : w * g
//                            grad_weight = x > 0 ? 0 : x * g   (in the broadcast shape;
//                            autograd sums it down to the weight's shape)
// Low-precision inputs compute in f32 and round at the end.
namespace {

// The type the kernels compute in: the operands' promoted type, which must be floating.
ElementType CheckedType(const char* op, const at::Tensor& self, const at::Tensor& weight) {
  at::ScalarType common = at::result_type(self, weight);
  TORCH_CHECK(at::isFloatingType(common), op, ": expected a floating point input and weight, got input ",
              DescribeTensor(self), " and weight ", DescribeTensor(weight));
  return ElementTypeOf(common);
}

Value Positive(const Value& x) { return ir::Compare(CompareDirection::kGt, x, ScalarLike(0, x)); }

}  // namespace

at::Tensor XLANativeFunctions::_prelu_kernel(const at::Tensor& self, const at::Tensor& weight) {
  XLA_COUNT("_prelu_kernel");
  const char* op = "prelu";
  ElementType type = CheckedType(op, self, weight);
  int device = CommonDevice({&self, &weight}, op);
  return AtenFromIr(Checked(op, [&] {
                      std::vector<Value> v = BroadcastOperands({&self, &weight}, AccumulationType(type), op);
                      const Value &x = v[0], &w = v[1];
                      return ir::Convert(ir::Select(Positive(x), x, Mul(w, x)), type);
                    }),
                    device);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::_prelu_kernel_backward(const at::Tensor& grad_output,
                                                                              const at::Tensor& self,
                                                                              const at::Tensor& weight) {
  XLA_COUNT("_prelu_kernel_backward");
  const char* op = "prelu_backward";
  ElementType type = CheckedType(op, self, weight);
  int device = CommonDevice({&grad_output, &self, &weight}, op);
  return Checked(op, [&] {
    std::vector<Value> v = BroadcastOperands({&grad_output, &self, &weight}, AccumulationType(type), op);
    const Value &g = v[0], &x = v[1], &w = v[2];
    Value positive = Positive(x);
    Value grad_input = ir::Select(positive, g, Mul(w, g));
    Value grad_weight = ir::Select(positive, ScalarLike(0, x), Mul(x, g));
    return std::make_tuple(AtenFromIr(ir::Convert(grad_input, ElementTypeOf(self.scalar_type())), device),
                           AtenFromIr(ir::Convert(grad_weight, ElementTypeOf(weight.scalar_type())), device));
  });
}

}  // namespace torch_xla
