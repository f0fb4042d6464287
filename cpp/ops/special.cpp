// Special functions (torch.special and their torch.* spellings): the normal
// distribution's quantile and log-CDF (ndtri, log_ndtr), erfcx, entr, xlog1py,
// logaddexp2, nextafter and frexp. (Bessel functions: ops/special_bessel.cpp; zeta,
// polygamma and the incomplete gamma functions: ops/special_gamma.cpp; orthogonal
// polynomials: ops/special_polynomials.cpp.)
// Each is built from element-wise IR ops with the approximations PyTorch's CPU kernels use
// (ATen/native/Math.h: the Cephes polynomials and Chebyshev series, their ranges and
// coefficients), so that results agree with eager PyTorch to a few ulps. bf16/f16 compute
// in f32 and round once at the end, as PyTorch's CPU kernels do; integer inputs compute
// in the default float type (ops/special_util.h).
#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <vector>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"
#include "ops/special_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;
using namespace special_util;

Value Max(const Value& a, const Value& b) { return ir::Binary(ir::op::kMaximum, a, b); }

const ir::OpKind kBitcast = ir::OpKind::Get("stablehlo.bitcast_convert");

Value Bitcast(const Value& v, ElementType type) {
  return Value(ir::MakeNode(kBitcast, std::vector<Value>{v}, ir::Shape(type, v.shape().dims)));
}

// ---- the normal distribution ------------------------------------------------------

// Cephes ndtri: the x with Phi(x) = y. A rational function of y - 1/2 in the middle,
// rational functions of 1/sqrt(-2 log y) in the tails.
Value Ndtri(const Value& y0) {
  const double kExpM2 = 0.13533528323661269189;  // exp(-2)
  Value one = C(1, y0);
  Value upper = Gt(y0, 1 - kExpM2);
  Value y = Sel(upper, Sub(one, y0), y0);

  Value yc = Sub(y0, C(0.5, y0));
  Value y2 = Mul(yc, yc);
  Value p0 = Polevl(y2, {-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
                         1.39312609387279679503E1, -1.23916583867381258016E0});
  Value q0 = Polevl(y2, {1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
                         -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
                         1.59056225126211695515E1, -1.18331621121330003142E0});
  Value central = Mul(Add(yc, Mul(yc, Div(Mul(y2, p0), q0))), C(2.50662827463100050242E0, y0));

  Value x = Sqrt(Mul(C(-2, y), Log(y)));
  Value x0 = Sub(x, Div(Log(x), x));
  Value z = Div(one, x);
  Value p1 = Polevl(z, {4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
                        4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
                        -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4});
  Value q1 = Polevl(z, {1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
                        1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
                        -3.80806407691578277194E-2, -9.33259480895457427372E-4});
  Value p2 = Polevl(z, {3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
                        1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
                        3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9});
  Value q2 = Polevl(z, {1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
                        2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
                        2.89247864745380683936E-6, 6.79019408009981274425E-9});
  Value x1 = Sel(Lt(x, 8), Mul(z, Div(p1, q1)), Mul(z, Div(p2, q2)));
  Value tail = Sub(x0, x1);
  tail = Sel(upper, tail, Neg(tail));

  Value r = Sel(Gt(y, kExpM2), central, tail);
  const double inf = std::numeric_limits<double>::infinity();
  r = Sel(Eq(y0, 0), C(-inf, y0), r);
  r = Sel(Eq(y0, 1), C(inf, y0), r);
  return Sel(Or(Lt(y0, 0), Gt(y0, 1)), C(NAN, y0), r);
}

// erfcx(x) = exp(x^2) erfc(x). Below 2 the product itself (erfc is accurate in relative
// terms there and exp(x^2) overflows only where erfcx does); from 2 up the continued
// fraction 1/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))) cut after 12 terms,
// relative error below 3e-7 at x = 2 and falling fast (measured against scipy).
Value Erfcx(const Value& x) {
  Value direct = Mul(Exp(Mul(x, x)), ir::Unary(kErfc, x));
  Value t = x;
  for (int k = 12; k >= 1; --k) t = Add(x, Div(C(k / 2.0, x), t));
  Value fraction = Div(C(0.56418958354775628694807945156, x), t);
  return Sel(Lt(x, 2), direct, fraction);
}

// log(Phi(x)) as SciPy computes it: through erfcx in the lower tail.
Value LogNdtr(const Value& x) {
  Value t = Mul(x, C(M_SQRT1_2, x));
  Value lower = Sub(Log(Div(Erfcx(Neg(t)), C(2, x))), Mul(t, t));
  Value upper = Log1p(Neg(Div(ir::Unary(kErfc, t), C(2, x))));
  return Sel(Lt(x, -1), lower, upper);
}

// ---- floating-point representation --------------------------------------------------

struct FloatBits {
  ElementType int_type;
  int mantissa_bits;
  int64_t exponent_mask;  // of the biased exponent, after shifting
  int64_t bias;
};
FloatBits BitsOf(ElementType t) {
  if (t == ElementType::kF64) return FloatBits{ElementType::kS64, 52, 0x7ff, 1023};
  return FloatBits{ElementType::kS32, 23, 0xff, 127};
}

}  // namespace

// ---- kernels -------------------------------------------------------------------------

at::Tensor XLANativeFunctions::special_ndtri(const at::Tensor& self) {
  XLA_COUNT("special_ndtri");
  UnaryIn in = GetUnary(self, "special_ndtri");
  return Result(Ndtri(in.x), in.result, in.device);
}

at::Tensor XLANativeFunctions::special_log_ndtr(const at::Tensor& self) {
  XLA_COUNT("special_log_ndtr");
  UnaryIn in = GetUnary(self, "special_log_ndtr");
  return Result(LogNdtr(in.x), in.result, in.device);
}

at::Tensor XLANativeFunctions::special_erfcx(const at::Tensor& self) {
  XLA_COUNT("special_erfcx");
  UnaryIn in = GetUnary(self, "special_erfcx");
  return Result(Erfcx(in.x), in.result, in.device);
}

// -x log(x) for x > 0, 0 at 0, -inf below.
at::Tensor XLANativeFunctions::special_entr(const at::Tensor& self) {
  XLA_COUNT("special_entr");
  UnaryIn in = GetUnary(self, "special_entr");
  Value x = in.x;
  Value r = Sel(Gt(x, 0), Neg(Mul(x, Log(x))), Sel(Eq(x, 0), C(0, x), C(-INFINITY, x)));
  return Result(Sel(IsNan(x), x, r), in.result, in.device);
}

// x log1p(y), 0 where x is 0, NaN where y is NaN.
at::Tensor XLANativeFunctions::special_xlog1py(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("special_xlog1py");
  BinaryIn in = GetBinary(self, other, "special_xlog1py");
  Value r = Sel(Eq(in.a, 0), C(0, in.a), Mul(in.a, Log1p(in.b)));
  return Result(Sel(IsNan(in.b), C(NAN, in.b), r), in.result, in.device);
}

// log2(2^a + 2^b) = max + log1p(2^-|a - b|) / log(2); a where both are the same infinity.
at::Tensor XLANativeFunctions::logaddexp2(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("logaddexp2");
  BinaryIn in = GetBinary(self, other, "logaddexp2");
  Value a = in.a, b = in.b;
  Value m = Max(a, b);
  Value pow2 = Exp(Mul(Neg(Abs(Sub(a, b))), C(M_LN2, a)));
  Value r = Add(m, Mul(Log1p(pow2), C(1 / M_LN2, a)));
  Value same_inf = And(Eq(Abs(a), INFINITY), Cmp(CompareDirection::kEq, a, b));
  return Result(Sel(same_inf, a, r), in.result, in.device);
}

// std::nextafter on the bit patterns: one ulp from self towards other.
at::Tensor XLANativeFunctions::nextafter(const at::Tensor& self, const at::Tensor& other) {
  XLA_COUNT("nextafter");
  TORCH_CHECK(self.is_floating_point() && other.is_floating_point() && self.scalar_type() == other.scalar_type(),
              "nextafter: expected floating-point tensors of one type, got ", DescribeTensor(self), " and ",
              DescribeTensor(other));
  int device = CommonDevice({&self, &other}, "nextafter");
  ElementType type = ElementTypeOf(self.scalar_type());
  // bf16/f16 step in their own bits: 16-bit integers of the same layout.
  ElementType int_type = type == ElementType::kF64   ? ElementType::kS64
                         : type == ElementType::kF32 ? ElementType::kS32
                                                     : ElementType::kS16;
  std::vector<Value> v = BroadcastOperands({&self, &other}, type, "nextafter");
  Value a = v[0], b = v[1];
  Value bits = Bitcast(a, int_type);
  // Away from zero when a and b lie on the same side of a, in magnitude.
  Value up = Cmp(CompareDirection::kEq, Cmp(CompareDirection::kLt, a, b), Gt(a, 0));
  Value stepped = Bitcast(Sel(up, Add(bits, IntLike(1, bits)), Sub(bits, IntLike(1, bits))), type);
  // From zero: the smallest subnormal with b's sign.
  Value tiny = Bitcast(IntLike(1, bits), type);
  Value from_zero = Sel(Lt(b, 0), Neg(tiny), tiny);
  Value r = Sel(Eq(a, 0), from_zero, stepped);
  r = Sel(Cmp(CompareDirection::kEq, a, b), b, r);
  r = Sel(Or(IsNan(a), IsNan(b)), Add(a, b), r);
  return AtenFromIr(r, device);
}

// x = mantissa * 2^exponent with |mantissa| in [0.5, 1); 0, inf and NaN give (x, 0).
// Integer operations on the bit pattern only: XLA's CPU backend flushes subnormal
// operands of float arithmetic to zero, so subnormals are normalized through their
// (exactly convertible) integer fraction instead of a multiplication.
std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::frexp(const at::Tensor& self) {
  XLA_COUNT("frexp");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "torch.frexp() only supports floating-point dtypes, got ", DescribeTensor(self));
  XlaTensorPtr t = GetXlaTensor(self, "frexp");
  ElementType type = t->shape().type;
  // bf16/f16 convert exactly to f32.
  Value x = ir::Convert(t->GetIrValue(), AccumulationType(type));
  ElementType ftype = x.shape().type;
  FloatBits fb = BitsOf(ftype);
  auto shr = [](const Value& v, const Value& n) { return ir::Binary(ir::op::kShiftRightLogical, v, n); };
  auto shl = [](const Value& v, const Value& n) { return ir::Binary(ir::op::kShiftLeft, v, n); };
  Value bits = Bitcast(x, fb.int_type);
  Value m = IntLike(fb.mantissa_bits, bits);
  Value sign_and_exponent = shr(bits, m);
  Value exponent_field = And(sign_and_exponent, IntLike(fb.exponent_mask, bits));
  Value fraction = Sub(bits, shl(sign_and_exponent, m));
  // A subnormal is fraction * 2^(1 - bias - mantissa_bits); the fraction as a float is
  // normal, so split that one and shift its exponent.
  Value subnormal = And(Eq(exponent_field, 0), Cmp(CompareDirection::kNe, fraction, IntLike(0, fraction)));
  Value fraction_float = ir::Convert(fraction, ftype);
  fraction_float = Sel(Cmp(CompareDirection::kLt, bits, IntLike(0, bits)), Neg(fraction_float), fraction_float);
  Value normal_bits = Sel(subnormal, Bitcast(fraction_float, fb.int_type), bits);
  Value biased = And(shr(normal_bits, m), IntLike(fb.exponent_mask, bits));
  Value shift = Sub(biased, IntLike(fb.bias - 1, bits));
  // Keep sign and fraction, move the biased exponent to that of 2^-1 (a subtraction in
  // the exponent field, which stays within it: no 64-bit mask constants).
  Value mantissa = Bitcast(Sub(normal_bits, shl(shift, m)), ftype);
  Value exponent = Sel(subnormal, Add(shift, IntLike(1 - fb.bias - fb.mantissa_bits, shift)), shift);
  Value zero = Eq(shl(bits, IntLike(1, bits)), 0);
  Value special = Or(zero, Eq(exponent_field, static_cast<double>(fb.exponent_mask)));
  mantissa = Sel(special, x, mantissa);
  exponent = Sel(special, IntLike(0, exponent), exponent);
  return {AtenFromIr(ir::Convert(mantissa, type), t->device()),
          AtenFromIr(ir::Convert(exponent, ElementType::kS32), t->device())};
}

}  // namespace torch_xla
