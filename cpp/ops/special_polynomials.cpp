// The orthogonal polynomials of torch.special: Chebyshev (T, U, V, W, and their shifted
// forms), Hermite (H, He), Laguerre and Legendre, of a tensor degree n. Their three-term
// recurrences run in a device loop (ElementwiseLoop, over ir::While) of max(n) steps, as
// PyTorch's loops do.
// Each is built from element-wise IR ops with the approximations PyTorch's CPU kernels use
// (ATen/native/Math.h: the Cephes polynomials and Chebyshev series, their ranges and
// coefficients), so that results agree with eager PyTorch to a few ulps. bf16/f16 compute
// in f32 and round once at the end, as PyTorch's CPU kernels do; integer inputs compute
// in the default float type (ops/special_util.h).
#include <ATen/ATen.h>

#include <cmath>
#include <functional>
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

// ---- orthogonal polynomials: three-term recurrences in a device loop ---------------

const ir::OpKind kAcos = ir::OpKind::Get("chlo.acos");
Value Acos(const Value& x) { return ir::Unary(kAcos, x); }

// The degree as PyTorch's kernels take it, static_cast<int64_t>(n) (s64): NaN, the
// infinities and values beyond the int64 range become INT64_MIN on x86, a negative degree.
Value Degree(const Value& n) {
  Value in_range = Lt(Abs(n), 9.2e18);  // false for NaN and the infinities
  Value as_int = ir::Convert(Sel(in_range, n, C(-1, n)), ElementType::kS64);
  return Sel(in_range, as_int, IntLike(-1, as_int));
}

// r = step(k, x, p, q) for the float k = 1, 2, ... as the element-wise terms of a
// three-term recurrence; x is the polynomial's argument.
using RecurrenceStep = std::function<Value(const Value& k, const Value& x, const Value& p, const Value& q)>;

// The last q of p, q = q, step(k, x, p, q) for k = 1 .. last - 1 (per element; elements
// with last <= 1 keep q0), starting from p0, q0. An element stops where q becomes NaN, as
// PyTorch's loops do; the loop runs max(last) - 1 steps at most.
Value Recurrence(const Value& x, const Value& last, const Value& p0, const Value& q0, const RecurrenceStep& step) {
  const std::vector<int64_t>& dims = x.shape().dims;
  auto finished = [&](const Value& k, const Value& n, const Value& q) {  // k: s64[], the next step's k
    return Or(Cmp(CompareDirection::kGe, ir::Broadcast(k, dims), n), IsNan(q));
  };
  Value one = ir::Constant(1, ir::Shape(ElementType::kS64, {}));
  std::vector<Value> out = ElementwiseLoop(
      {x, last}, {p0, q0}, finished(one, last, q0), int64_t{1} << 62,
      [&](const Value& i, const std::vector<Value>& in, const std::vector<Value>& st) {
        Value k = Add(i, C(1, i));
        Value r = step(ir::Broadcast(ir::Convert(k, in[0].shape().type), dims), in[0], st[0], st[1]);
        return LoopStep{{st[1], r}, finished(Add(k, C(1, k)), in[1], r)};
      });
  return out[1];
}

Value IsEven(const Value& n) { return Cmp(CompareDirection::kEq, ir::Binary(ir::op::kRemainder, n, IntLike(2, n)), IntLike(0, n)); }

enum class ChebyshevKind { kT, kU, kV, kW };

// Chebyshev polynomials of the four kinds (Math.h's chebyshev_polynomial_*_forward), and
// their shifted forms of argument y = 2x - 1 (shifted_chebyshev_polynomial_*_forward).
// At y = +-1 they have closed values; for |y| < 1 and degrees above a threshold PyTorch
// uses the trigonometric form; otherwise the recurrence r = 2y q - p.
Value Chebyshev(ChebyshevKind kind, bool shifted, const Value& x, const Value& n_float) {
  Value n = Degree(n_float);
  Value nf = ir::Convert(n, x.shape().type);
  Value y = shifted ? Sub(Add(x, x), C(1, x)) : x;
  Value at_plus = shifted ? Eq(x, 1) : And(Eq(Abs(x), 1), Gt(x, 0));
  Value at_minus = shifted ? Eq(x, 0) : And(Eq(Abs(x), 1), Not(Gt(x, 0)));
  Value even = IsEven(n);
  Value one = C(1, x), sign = Sel(even, one, C(-1, x));
  Value n1 = Add(nf, one), n2 = Add(Add(nf, nf), one);  // n + 1, 2n + 1
  Value theta = Acos(y);
  Value half = Add(nf, C(0.5, x));
  Value plus, minus, trig, q0;
  int threshold;
  switch (kind) {
    case ChebyshevKind::kT:
      plus = one, minus = sign, threshold = 6, q0 = y;
      trig = Cos(Mul(nf, theta));
      break;
    case ChebyshevKind::kU: {
      plus = n1, minus = Mul(sign, n1), threshold = shifted ? 6 : 8, q0 = Add(y, y);
      Value s = Sin(theta);
      trig = Sel(Not(Eq(s, 0)), Div(Sin(Mul(n1, theta)), s), Div(Mul(n1, Cos(Mul(n1, theta))), y));
      break;
    }
    case ChebyshevKind::kV: {
      plus = one, minus = Mul(sign, n2), threshold = shifted ? 6 : 8, q0 = Sub(Add(y, y), one);
      Value half_theta = Div(theta, C(2, x));
      trig = Sel(Not(Eq(Sin(half_theta), 1)), Div(Cos(Mul(half, theta)), Cos(half_theta)), minus);
      break;
    }
    case ChebyshevKind::kW: {
      plus = n2, minus = sign, threshold = shifted ? 4 : 8, q0 = Add(Add(y, y), one);
      Value half_theta = Div(theta, C(2, x));
      Value fallback = shifted ? sign : Sel(Gt(x, 0), n2, sign);
      trig = Sel(Not(Eq(Cos(half_theta), 1)), Div(Sin(Mul(half, theta)), Sin(half_theta)), fallback);
      break;
    }
  }
  Value negative = Cmp(CompareDirection::kLt, n, IntLike(0, n));
  Value use_trig = And(Cmp(CompareDirection::kGt, n, IntLike(threshold, n)), Lt(Abs(y), 1));
  Value closed = Or(negative, Or(at_plus, at_minus));
  Value looped = Not(Or(closed, use_trig));
  Value last = Sel(looped, n, IntLike(0, n));
  Value rec = Recurrence(y, last, one, q0, [](const Value&, const Value& yy, const Value& p, const Value& q) {
    return Sub(Mul(Add(yy, yy), q), p);
  });
  Value r = Sel(Cmp(CompareDirection::kEq, n, IntLike(0, n)), one, rec);
  r = Sel(use_trig, trig, r);
  r = Sel(at_minus, minus, r);
  r = Sel(at_plus, plus, r);
  return Sel(negative, C(0, x), r);
}

// Hermite polynomials (physicists' H, probabilists' He): NaN above PyTorch's degree limit
// (128 in float32, 512 in float64).
Value Hermite(bool physicists, const Value& x, const Value& n_float) {
  Value n = Degree(n_float);
  const int64_t limit = x.shape().type == ElementType::kF64 ? 512 : 128;
  Value one = C(1, x);
  Value q0 = physicists ? Add(x, x) : x;
  Value too_high = Cmp(CompareDirection::kGt, n, IntLike(limit, n));
  Value negative = Cmp(CompareDirection::kLt, n, IntLike(0, n));
  Value last = Sel(Or(too_high, negative), IntLike(0, n), n);
  Value rec = Recurrence(x, last, one, q0, [physicists](const Value& k, const Value& xx, const Value& p, const Value& q) {
    // H: r = 2x q - 2k p (PyTorch's k runs over even numbers); He: r = x q - k p.
    return physicists ? Sub(Mul(Add(xx, xx), q), Mul(Add(k, k), p)) : Sub(Mul(xx, q), Mul(k, p));
  });
  Value r = Sel(Cmp(CompareDirection::kEq, n, IntLike(0, n)), one, rec);
  r = Sel(too_high, C(NAN, x), r);
  return Sel(negative, C(0, x), r);
}

// Laguerre L_n: 1 at x = 0; r = ((2k + (1 - x)) q - k p) / (k + 1).
Value Laguerre(const Value& x, const Value& n_float) {
  Value n = Degree(n_float);
  Value one = C(1, x);
  Value negative = Cmp(CompareDirection::kLt, n, IntLike(0, n));
  Value at_zero = Eq(Abs(x), 0);
  Value last = Sel(Or(negative, at_zero), IntLike(0, n), n);
  Value rec = Recurrence(x, last, one, Sub(one, x), [](const Value& k, const Value& xx, const Value& p, const Value& q) {
    Value one = C(1, xx);
    return Div(Sub(Mul(Add(Add(k, k), Sub(one, xx)), q), Mul(k, p)), Add(k, one));
  });
  Value r = Sel(Cmp(CompareDirection::kEq, n, IntLike(0, n)), one, rec);
  r = Sel(at_zero, one, r);
  return Sel(negative, C(0, x), r);
}

// Legendre P_n: +-1 at |x| = 1; r = ((2k + 1) x q - k p) / (k + 1).
Value Legendre(const Value& x, const Value& n_float) {
  Value n = Degree(n_float);
  Value one = C(1, x);
  Value negative = Cmp(CompareDirection::kLt, n, IntLike(0, n));
  Value at_one = Eq(Abs(x), 1);
  Value at_one_value = Sel(Or(Gt(x, 0), IsEven(n)), one, C(-1, x));
  Value last = Sel(Or(negative, at_one), IntLike(0, n), n);
  Value rec = Recurrence(x, last, one, x, [](const Value& k, const Value& xx, const Value& p, const Value& q) {
    Value one = C(1, xx);
    return Div(Sub(Mul(Mul(Add(Add(k, k), one), xx), q), Mul(k, p)), Add(k, one));
  });
  Value r = Sel(Cmp(CompareDirection::kEq, n, IntLike(0, n)), one, rec);
  r = Sel(at_one, at_one_value, r);
  return Sel(negative, C(0, x), r);
}

// A polynomial kernel: x and n promoted like PyTorch (integers to the default float).
at::Tensor Polynomial(const at::Tensor& x, const at::Tensor& n, const char* op,
                      const std::function<Value(const Value&, const Value&)>& fn) {
  BinaryIn in = GetBinary(x, n, op);
  return Result(fn(in.a, in.b), in.result, in.device);
}

}  // namespace

// ---- orthogonal polynomials -----------------------------------------------------------

at::Tensor XLANativeFunctions::special_chebyshev_polynomial_t(const at::Tensor& x, const at::Tensor& n) {
  XLA_COUNT("special_chebyshev_polynomial_t");
  return Polynomial(x, n, "special_chebyshev_polynomial_t", [](const Value& a, const Value& b) {
    return Chebyshev(ChebyshevKind::kT, false, a, b);
  });
}

at::Tensor XLANativeFunctions::special_chebyshev_polynomial_u(const at::Tensor& x, const at::Tensor& n) {
  XLA_COUNT("special_chebyshev_polynomial_u");
  return Polynomial(x, n, "special_chebyshev_polynomial_u", [](const Value& a, const Value& b) {
    return Chebyshev(ChebyshevKind::kU, false, a, b);
  });
}

at::Tensor XLANativeFunctions::special_chebyshev_polynomial_v(const at::Tensor& x, const at::Tensor& n) {
  XLA_COUNT("special_chebyshev_polynomial_v");
  return Polynomial(x, n, "special_chebyshev_polynomial_v", [](const Value& a, const Value& b) {
    return Chebyshev(ChebyshevKind::kV, false, a, b);
  });
}

at::Tensor XLANativeFunctions::special_chebyshev_polynomial_w(const at::Tensor& x, const at::Tensor& n) {
  XLA_COUNT("special_chebyshev_polynomial_w");
  return Polynomial(x, n, "special_chebyshev_polynomial_w", [](const Value& a, const Value& b) {
    return Chebyshev(ChebyshevKind::kW, false, a, b);
  });
}

at::Tensor XLANativeFunctions::special_shifted_chebyshev_polynomial_t(const at::Tensor& x, const at::Tensor& n) {
  XLA_COUNT("special_shifted_chebyshev_polynomial_t");
  return Polynomial(x, n, "special_shifted_chebyshev_polynomial_t", [](const Value& a, const Value& b) {
    return Chebyshev(ChebyshevKind::kT, true, a, b);
  });
}

at::Tensor XLANativeFunctions::special_shifted_chebyshev_polynomial_u(const at::Tensor& x, const at::Tensor& n) {
  XLA_COUNT("special_shifted_chebyshev_polynomial_u");
  return Polynomial(x, n, "special_shifted_chebyshev_polynomial_u", [](const Value& a, const Value& b) {
    return Chebyshev(ChebyshevKind::kU, true, a, b);
  });
}

at::Tensor XLANativeFunctions::special_shifted_chebyshev_polynomial_v(const at::Tensor& x, const at::Tensor& n) {
  XLA_COUNT("special_shifted_chebyshev_polynomial_v");
  return Polynomial(x, n, "special_shifted_chebyshev_polynomial_v", [](const Value& a, const Value& b) {
    return Chebyshev(ChebyshevKind::kV, true, a, b);
  });
}

at::Tensor XLANativeFunctions::special_shifted_chebyshev_polynomial_w(const at::Tensor& x, const at::Tensor& n) {
  XLA_COUNT("special_shifted_chebyshev_polynomial_w");
  return Polynomial(x, n, "special_shifted_chebyshev_polynomial_w", [](const Value& a, const Value& b) {
    return Chebyshev(ChebyshevKind::kW, true, a, b);
  });
}

at::Tensor XLANativeFunctions::special_hermite_polynomial_h(const at::Tensor& x, const at::Tensor& n) {
  XLA_COUNT("special_hermite_polynomial_h");
  return Polynomial(x, n, "special_hermite_polynomial_h", [](const Value& a, const Value& b) { return Hermite(true, a, b); });
}

at::Tensor XLANativeFunctions::special_hermite_polynomial_he(const at::Tensor& x, const at::Tensor& n) {
  XLA_COUNT("special_hermite_polynomial_he");
  return Polynomial(x, n, "special_hermite_polynomial_he", [](const Value& a, const Value& b) { return Hermite(false, a, b); });
}

at::Tensor XLANativeFunctions::special_laguerre_polynomial_l(const at::Tensor& x, const at::Tensor& n) {
  XLA_COUNT("special_laguerre_polynomial_l");
  return Polynomial(x, n, "special_laguerre_polynomial_l", [](const Value& a, const Value& b) { return Laguerre(a, b); });
}

at::Tensor XLANativeFunctions::special_legendre_polynomial_p(const at::Tensor& x, const at::Tensor& n) {
  XLA_COUNT("special_legendre_polynomial_p");
  return Polynomial(x, n, "special_legendre_polynomial_p", [](const Value& a, const Value& b) { return Legendre(a, b); });
}

}  // namespace torch_xla
