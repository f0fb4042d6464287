// Random kernels on the device, from the per-device RNG state (tensor/rng_state.h), so
// xm.set_rng_state() repeats them: uniform and normal draws and the distributions derived
// from them by a transform (cauchy, exponential, geometric, log_normal), multinomial
// sampling, rrelu's noise and random_ (torch.randint on the device). Draws compute in f32
// (f64 for double tensors) and round to the tensor's type. (bernoulli, dropout's mask on
// this backend, is in ops/dropout.cpp.)
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>
#include <limits>

#include "XLANativeFunctions.h"
#include "ir/builder_indexing.h"
#include "ops/kernel_util.h"
#include "tensor/rng_state.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Shape;
using ir::Value;
using runtime::ElementType;

ElementType DrawType(ElementType t) { return t == ElementType::kF64 ? ElementType::kF64 : ElementType::kF32; }

// 1 - u for u uniform in [0, 1): uniform in (0, 1], safe to take the log of.
Value OpenUniform(int device, const Shape& shape) {
  return Sub(ir::Constant(1, shape), RandomUniform(device, shape));
}

// Standard normal draws by Box-Muller: sqrt(-2 ln v1) cos(2 pi u2), v1 in (0, 1].
Value StandardNormal(int device, const Shape& shape) {
  Value r = ir::Unary(ir::op::kSqrt, Mul(ir::Constant(-2, shape), ir::Unary(ir::op::kLog, OpenUniform(device, shape))));
  return Mul(r, ir::Unary(ir::op::kCos, Mul(ir::Constant(2 * M_PI, shape), RandomUniform(device, shape))));
}

// The floating tensor a distribution fills, with its draw shape.
struct Target {
  XlaTensorPtr x;
  Shape draw;  // the tensor's dimensions in the draw type
};

Target FloatTarget(const at::Tensor& self, const char* op) {
  XlaTensorPtr x = GetXlaTensor(self, op);
  TORCH_CHECK(runtime::IsFloating(x->shape().type), op, " expects a floating point tensor, got ", DescribeTensor(self));
  return {x, Shape(DrawType(x->shape().type), x->shape().dims)};
}

at::Tensor Filled(const Target& t, const Value& v) { return AtenFromIr(ir::Convert(v, t.x->shape().type), t.x->device()); }

}  // namespace

at::Tensor XLANativeFunctions::uniform(const at::Tensor& self, double from, double to,
                                       std::optional<at::Generator> generator) {
  XLA_COUNT("uniform");
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  XlaTensorPtr x = GetXlaTensor(self, "uniform_");
  TORCH_CHECK(runtime::IsFloating(x->shape().type), "uniform_ expects a floating point tensor, got ", DescribeTensor(self));
  runtime::ElementType work = x->shape().type == runtime::ElementType::kF64 ? runtime::ElementType::kF64
                                                                             : runtime::ElementType::kF32;
  Value u = RandomUniform(x->device(), ir::Shape(work, x->shape().dims));
  Value scaled = ir::Binary(ir::op::kAdd, ir::Binary(ir::op::kMultiply, u, ir::Broadcast(IrScalar(to - from, work), u.shape().dims)),
                            ir::Broadcast(IrScalar(from, work), u.shape().dims));
  return AtenFromIr(ir::Convert(scaled, x->shape().type), x->device());
}

at::Tensor XLANativeFunctions::normal_functional(const at::Tensor& self, double mean, double std,
                                                 std::optional<at::Generator> generator) {
  XLA_COUNT("normal");
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  XlaTensorPtr x = GetXlaTensor(self, "normal_");
  if (runtime::IsComplex(x->shape().type)) {
    // As eager draws it: both parts normal with the mean and std / sqrt(2), so that the
    // complex value has variance std^2.
    runtime::ElementType part = x->shape().type == runtime::ElementType::kC128 ? runtime::ElementType::kF64
                                                                                : runtime::ElementType::kF32;
    std::vector<int64_t> dims = x->shape().dims;
    dims.push_back(2);
    ir::Shape shape(part, dims);
    Value z = StandardNormal(x->device(), shape);
    Value parts = ir::Binary(ir::op::kAdd,
                             ir::Binary(ir::op::kMultiply, z, ir::Broadcast(IrScalar(std / std::sqrt(2.0), part), dims)),
                             ir::Broadcast(IrScalar(mean, part), dims));
    const int64_t last = static_cast<int64_t>(dims.size()) - 1;
    Value real = ir::Reshape(SliceDim(parts, last, 0, 1), x->shape().dims);
    Value imag = ir::Reshape(SliceDim(parts, last, 1, 2), x->shape().dims);
    return AtenFromIr(ir::Complex(real, imag), x->device());
  }
  TORCH_CHECK(runtime::IsFloating(x->shape().type), "normal_ expects a floating point tensor, got ", DescribeTensor(self));
  runtime::ElementType work = x->shape().type == runtime::ElementType::kF64 ? runtime::ElementType::kF64
                                                                             : runtime::ElementType::kF32;
  ir::Shape shape(work, x->shape().dims);
  Value z = StandardNormal(x->device(), shape);
  Value out = ir::Binary(ir::op::kAdd, ir::Binary(ir::op::kMultiply, z, ir::Broadcast(IrScalar(std, work), shape.dims)),
                         ir::Broadcast(IrScalar(mean, work), shape.dims));
  return AtenFromIr(ir::Convert(out, x->shape().type), x->device());
}

// ---- normal with tensor parameters ----------------------------------------------------------
// mean + std * z, mean and std broadcast to their common shape. A negative std in a
// tensor cannot be reported: it is device data.
namespace {

at::Tensor NormalWith(const at::Tensor* mean_t, double mean, const at::Tensor* std_t, double std, const char* op) {
  const at::Tensor& some = mean_t ? *mean_t : *std_t;
  int device = mean_t && std_t ? CommonDevice({mean_t, std_t}, op) : GetXlaTensor(some, op)->device();
  at::ScalarType st = mean_t && std_t ? at::result_type(*mean_t, *std_t) : some.scalar_type();
  TORCH_CHECK(at::isFloatingType(st), op, ": expected floating point mean and std, got ", DescribeTensor(some));
  ElementType type = ElementTypeOf(st), work = DrawType(type);
  return Checked(op, [&] {
    Value m, s;
    if (mean_t && std_t) {
      std::vector<Value> v = BroadcastOperands({mean_t, std_t}, work, op);
      m = v[0];
      s = v[1];
    } else if (mean_t) {
      m = IrOperand(*mean_t, work, op);
      s = ir::Broadcast(IrScalar(std, work), m.shape().dims);
    } else {
      s = IrOperand(*std_t, work, op);
      m = ir::Broadcast(IrScalar(mean, work), s.shape().dims);
    }
    Value z = StandardNormal(device, m.shape());
    return AtenFromIr(ir::Convert(Add(m, Mul(s, z)), type), device);
  });
}

}  // namespace

at::Tensor XLANativeFunctions::normal(const at::Tensor& mean, double std, std::optional<at::Generator> generator) {
  XLA_COUNT("normal");
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  return NormalWith(&mean, 0, nullptr, std, "normal");
}

at::Tensor XLANativeFunctions::normal(double mean, const at::Tensor& std, std::optional<at::Generator> generator) {
  XLA_COUNT("normal");
  return NormalWith(nullptr, mean, &std, 0, "normal");
}

at::Tensor XLANativeFunctions::normal(const at::Tensor& mean, const at::Tensor& std,
                                      std::optional<at::Generator> generator) {
  XLA_COUNT("normal");
  return NormalWith(&mean, 0, &std, 0, "normal");
}

// ---- distributions by transform of a uniform draw -----------------------------------------------

at::Tensor XLANativeFunctions::cauchy(const at::Tensor& self, double median, double sigma,
                                      std::optional<at::Generator> generator) {
  XLA_COUNT("cauchy");
  TORCH_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  Target t = FloatTarget(self, "cauchy_");
  // median + sigma * tan(pi (u - 1/2))
  Value u = RandomUniform(t.x->device(), t.draw);
  Value angle = Mul(ir::Constant(M_PI, t.draw), Sub(u, ir::Constant(0.5, t.draw)));
  return Filled(t, Add(ir::Constant(median, t.draw), Mul(ir::Constant(sigma, t.draw), ir::Unary(ir::op::kTan, angle))));
}

at::Tensor XLANativeFunctions::exponential(const at::Tensor& self, double lambd,
                                           std::optional<at::Generator> generator) {
  XLA_COUNT("exponential");
  TORCH_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  Target t = FloatTarget(self, "exponential_");
  // -ln(v) / lambda for v uniform in (0, 1]
  Value e = ir::Unary(ir::op::kNegate, ir::Unary(ir::op::kLog, OpenUniform(t.x->device(), t.draw)));
  return Filled(t, Div(e, ir::Constant(lambd, t.draw)));
}

at::Tensor XLANativeFunctions::geometric(const at::Tensor& self, double p, std::optional<at::Generator> generator) {
  XLA_COUNT("geometric");
  TORCH_CHECK(0 < p && p < 1, "geometric_ expects p to be in (0, 1), but got p=", p);
  XlaTensorPtr x = GetXlaTensor(self, "geometric_");
  // The number of trials to the first success: ceil(ln(v) / ln(1 - p)) for v in (0, 1],
  // at least 1. Integer tensors take the counts too.
  Shape draw(DrawType(x->shape().type), x->shape().dims);
  Value trials = ir::Unary(ir::op::kCeil, Div(ir::Unary(ir::op::kLog, OpenUniform(x->device(), draw)),
                                               ir::Constant(std::log1p(-p), draw)));
  trials = ir::Binary(ir::op::kMaximum, trials, ir::Constant(1, draw));
  return AtenFromIr(ir::Convert(trials, x->shape().type), x->device());
}

at::Tensor XLANativeFunctions::log_normal(const at::Tensor& self, double mean, double std,
                                          std::optional<at::Generator> generator) {
  XLA_COUNT("log_normal");
  TORCH_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std);
  Target t = FloatTarget(self, "log_normal_");
  Value z = StandardNormal(t.x->device(), t.draw);
  return Filled(t, ir::Unary(ir::op::kExp, Add(ir::Constant(mean, t.draw), Mul(ir::Constant(std, t.draw), z))));
}

// ---- multinomial ---------------------------------------------------------------------------------
// Rows of (unnormalized, non-negative) weights over C categories. Without replacement:
// the num_samples largest of w / E with E ~ Exp(1) (PyTorch's own method: the order in
// which exponential clocks of rates w ring). With replacement: the inverse CDF, the count
// of cumulative weights <= u * total for each uniform u. Weights that are negative, NaN,
// or too few positive for the samples asked cannot be reported: they are device data.
at::Tensor XLANativeFunctions::multinomial(const at::Tensor& self, int64_t n_sample, bool replacement,
                                           std::optional<at::Generator> generator) {
  XLA_COUNT("multinomial");
  const char* op = "multinomial";
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim, got ", DescribeTensor(self));
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "multinomial only supports floating-point dtypes for input, got: ",
              self.scalar_type());
  TORCH_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  int64_t c = self.size(-1);
  TORCH_CHECK(replacement || n_sample <= c, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  TORCH_CHECK(c > 0, "number of categories cannot be zero (", DescribeTensor(self), ")");
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType work = DrawType(x->shape().type);
  int64_t n = self.dim() == 2 ? self.size(0) : 1;
  int device = x->device();
  return Checked(op, [&] {
    Value w = ir::Reshape(ir::Convert(x->GetIrValue(), work), {n, c});
    Value picked;
    if (!replacement) {
      Shape nc(work, {n, c});
      Value e = ir::Unary(ir::op::kNegate, ir::Unary(ir::op::kLog, OpenUniform(device, nc)));
      Value keys = Div(w, e);
      Value iota = ir::Iota(Shape(ElementType::kS64, {n, c}), 1);
      std::vector<Value> sorted = c > 1 ? ir::Sort({keys, iota}, 1, true) : std::vector<Value>{keys, iota};
      picked = ir::Slice(sorted[1], {0, 0}, {n, n_sample}, {1, 1});
    } else {
      // cdf[n, j] = sum over i <= j of w[n, i], by a product with an upper-triangular matrix.
      Shape square(ElementType::kS32, {c, c});
      Value upper = ir::Convert(ir::Compare(CompareDirection::kLe, ir::Iota(square, 0), ir::Iota(square, 1)), work);
      Value cdf = ir::DotGeneral(w, upper, {}, {}, {1}, {0}, work);
      Value total = ir::Reshape(ir::Slice(cdf, {0, c - 1}, {n, c}, {1, 1}), {n});
      Shape ns(work, {n, n_sample});
      Value u = Mul(RandomUniform(device, ns), ir::BroadcastInDim(total, {n, n_sample}, {0}));
      std::vector<int64_t> nsc = {n, n_sample, c};
      Value below = ir::Compare(CompareDirection::kLe, ir::BroadcastInDim(cdf, nsc, {0, 2}), ir::BroadcastInDim(u, nsc, {0, 1}));
      picked = ir::Reduce(ReduceKind::kSum, ir::Convert(below, ElementType::kS64), {2});
      picked = ir::Binary(ir::op::kMinimum, picked, ScalarLike(static_cast<double>(c - 1), picked));
    }
    if (self.dim() == 1) picked = ir::Reshape(picked, {n_sample});
    return AtenFromIr(picked, device);
  });
}

// ---- rrelu --------------------------------------------------------------------------------------
// Training: each non-positive element is scaled by a slope drawn uniformly from [lower,
// upper], which is also written to the noise (1 elsewhere). Evaluation: leaky_relu with
// slope (lower + upper) / 2, the noise unchanged.
// Functionalization turns rrelu_with_noise (which writes its noise argument) into
// rrelu_with_noise_functional, an op torchgen generates; gen_backend_stubs cannot take it
// from the yaml (it asserts on a generated functional op), so it is registered here.
namespace {

std::tuple<at::Tensor, at::Tensor> RreluWithNoiseFunctional(
    const at::Tensor& self, const at::Tensor& noise, const at::Scalar& lower, const at::Scalar& upper, bool training,
    std::optional<at::Generator> generator) {
  XLA_COUNT("rrelu_with_noise");
  const char* op = "rrelu_with_noise";
  double lo = lower.toDouble(), hi = upper.toDouble();
  TORCH_CHECK(lo <= hi, "Lower bound should be less than or equal to the upper bound (lower ", lo, ", upper ", hi, ")");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(self));
  TORCH_CHECK(noise.sizes() == self.sizes(), op, ": noise ", DescribeTensor(noise), " must have the input's size ",
              DescribeTensor(self));
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type, work = DrawType(type);
  int device = CommonDevice({&self, &noise}, op);
  return Checked(op, [&] {
    Value v = ir::Convert(x->GetIrValue(), work);
    Value non_positive = ir::Compare(CompareDirection::kLe, v, ScalarLike(0, v));
    if (!training) {
      Value slope = ScalarLike((lo + hi) / 2, v);
      Value out = ir::Select(non_positive, Mul(v, slope), v);
      return std::make_tuple(AtenFromIr(ir::Convert(out, type), device), AtenFromIr(GetXlaTensor(noise, op)->GetIrValue(), device));
    }
    Value r = Add(ScalarLike(lo, v), Mul(ScalarLike(hi - lo, v), RandomUniform(device, v.shape())));
    Value slope = ir::Select(non_positive, r, ScalarLike(1, v));
    ElementType noise_type = ElementTypeOf(noise.scalar_type());
    return std::make_tuple(AtenFromIr(ir::Convert(Mul(v, slope), type), device),
                           AtenFromIr(ir::Convert(slope, noise_type), device));
  });
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, XLA, m) { m.impl("rrelu_with_noise_functional", TORCH_FN(RreluWithNoiseFunctional)); }

// ---- random_ -----------------------------------------------------------------

namespace {

const ir::OpKind kBitcastConvert = ir::OpKind::Get("stablehlo.bitcast_convert");

// An exact 64-bit integer constant (doubles hold only 53 bits): built from two 32-bit
// halves, then reinterpreted as `type` (kU64 or kS64).
Value ExactInt(uint64_t bits, ElementType type, const std::vector<int64_t>& dims) {
  ir::Shape u64(ElementType::kU64, dims);
  Value v;
  if (bits < (uint64_t{1} << 53)) {
    v = ir::Constant(static_cast<double>(bits), u64);
  } else {
    Value hi = ir::Constant(static_cast<double>(bits >> 32), u64);
    Value lo = ir::Constant(static_cast<double>(bits & 0xffffffffu), u64);
    v = ir::Binary(ir::op::kOr, ir::Binary(ir::op::kShiftLeft, hi, ir::Constant(32, u64)), lo);
  }
  if (type == ElementType::kU64) return v;
  return Value(ir::MakeNode(kBitcastConvert, std::vector<Value>{v}, ir::Shape(type, dims)));
}

// Integers uniform in [from, from + range) (range 0 stands for 2^64), in the tensor's type.
at::Tensor RandomRange(const at::Tensor& self, int64_t from, uint64_t range, const char* op) {
  XlaTensorPtr x = GetXlaTensor(self, op);
  const auto& dims = x->shape().dims;
  ElementType type = x->shape().type;
  int device = x->device();
  Value result;
  if (range == 0) {
    Value bits = RandomBits(device, dims, true);
    result = Value(ir::MakeNode(kBitcastConvert, std::vector<Value>{bits}, ir::Shape(ElementType::kS64, dims)));
  } else {
    // As PyTorch's CPU generator: 64-bit draws for ranges of 2^32 and more.
    bool wide = range >= (uint64_t{1} << 32);
    Value bits = ir::Convert(RandomBits(device, dims, wide), ElementType::kU64);
    Value offset = ir::Binary(ir::op::kRemainder, bits, ExactInt(range, ElementType::kU64, dims));
    result = Value(ir::MakeNode(kBitcastConvert, std::vector<Value>{offset}, ir::Shape(ElementType::kS64, dims)));
    if (from != 0) result = ir::Binary(ir::op::kAdd, result, ExactInt(static_cast<uint64_t>(from), ElementType::kS64, dims));
  }
  return AtenFromIr(ir::Convert(result, type), device);
}

// The inclusive upper end of random_() without bounds: 2^digits for floats (every
// integer up to it is exact), the type's maximum for integers.
uint64_t DefaultUpper(at::ScalarType t, const char* op) {
  switch (t) {
    case at::kFloat: return uint64_t{1} << 24;
    case at::kDouble: return uint64_t{1} << 53;
    case at::kBFloat16: return uint64_t{1} << 8;
    case at::kHalf: return uint64_t{1} << 11;
    case at::kBool: return 1;
    case at::kByte: return 255;
    case at::kChar: return 127;
    case at::kShort: return 32767;
    case at::kInt: return 2147483647;
    case at::kLong: return static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    default: TORCH_CHECK(false, op, ": random_ is not supported for dtype ", t);
  }
}

// The lowest value random_(from, to) accepts for the type.
int64_t Lower(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return -(int64_t{1} << 24);
    case at::kDouble: return -(int64_t{1} << 53);
    case at::kBFloat16: return -(int64_t{1} << 8);
    case at::kHalf: return -(int64_t{1} << 11);
    case at::kBool: return 0;
    case at::kByte: return 0;
    case at::kChar: return -128;
    case at::kShort: return -32768;
    case at::kInt: return -2147483648LL;
    default: return std::numeric_limits<int64_t>::min();
  }
}

void CheckFromTo(const at::Tensor& self, int64_t from, int64_t to_inclusive, const char* op) {
  at::ScalarType t = self.scalar_type();
  int64_t lo = Lower(t);
  uint64_t hi = DefaultUpper(t, op);
  TORCH_CHECK(from >= lo && (from < 0 || static_cast<uint64_t>(from) <= hi), op, ": from=", from,
              " is out of bounds for ", t, " (expected a value in [", lo, ", ", hi, "])");
  TORCH_CHECK(to_inclusive >= lo && (to_inclusive < 0 || static_cast<uint64_t>(to_inclusive) <= hi), op,
              ": to - 1=", to_inclusive, " is out of bounds for ", t, " (expected a value in [", lo, ", ", hi, "])");
}

}  // namespace

at::Tensor XLANativeFunctions::random(const at::Tensor& self, std::optional<at::Generator> generator) {
  XLA_COUNT("random");
  uint64_t upper = DefaultUpper(self.scalar_type(), "random_");
  return RandomRange(self, 0, upper + 1, "random_");
}

at::Tensor XLANativeFunctions::random(const at::Tensor& self, int64_t from, std::optional<int64_t> to,
                                      std::optional<at::Generator> generator) {
  XLA_COUNT("random");
  if (to.has_value()) {
    TORCH_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", *to);
    CheckFromTo(self, from, *to - 1, "random_");
    return RandomRange(self, from, static_cast<uint64_t>(*to) - static_cast<uint64_t>(from), "random_");
  }
  uint64_t upper = DefaultUpper(self.scalar_type(), "random_");
  CheckFromTo(self, from, static_cast<int64_t>(upper), "random_");
  // [from, upper]; the full int64 range wraps to 0, which RandomRange reads as 2^64.
  return RandomRange(self, from, upper - static_cast<uint64_t>(from) + 1, "random_");
}

at::Tensor XLANativeFunctions::random(const at::Tensor& self, int64_t to, std::optional<at::Generator> generator) {
  XLA_COUNT("random");
  TORCH_CHECK(0 < to, "random_ expects 'from' to be less than 'to', but got from=0 >= to=", to);
  CheckFromTo(self, 0, to - 1, "random_");
  return RandomRange(self, 0, static_cast<uint64_t>(to), "random_");
}

}  // namespace torch_xla
