// Interpolation (upsampling) over the trailing one to three spatial dimensions of an
// [N, C, *] input. Every mode is separable: the output is the input resampled along
// each spatial dimension in turn, and the backward is the transpose of each step.
//
//   nearest, nearest-exact   integer upscaling is a broadcast + reshape (its backward a
//                            reshape + sum); periodic patterns (rational scales) are
//                            strided slices per phase, interleaved; other ratios select
//                            along the dimension with a one-hot [out, in] mask and sum
//                            (exact for all types).
//   linear (1-d, bi-, tri-), an [out, in] weight matrix per dimension, built from
//   bicubic, antialiased     iotas with PyTorch's f32 index arithmetic, applied by one
//   bilinear                 dot_general (ApplyAlong); the backward applies its
//                            transpose. A matrix holds the taps of each output row,
//                            clamped taps adding up at the border, as PyTorch's kernels
//                            read them.
// Low-precision floats interpolate in f32. (Grid sampling: ops/grid_sampler.cpp.)
#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"
#include "ops/upsample_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;
using namespace upsample_util;

// PyTorch's area_pixel_compute_scale in f32.
float LinearScale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f;
  if (scale.has_value() && *scale > 0) return static_cast<float>(1.0 / *scale);
  return static_cast<float>(in) / static_cast<float>(out);
}

// Bilinear weights (PyTorch's compute_source_index_and_lambda): row o holds lambda0 at
// i0 and lambda1 at i1. Lambdas are rounded to `input_type` as PyTorch stores them.
Value LinearMatrix(int64_t in, int64_t out, bool align_corners, std::optional<double> scale, ElementType type,
                   ElementType input_type) {
  std::vector<int64_t> md = {out, in};
  if (in == out) {
    Value o = ir::Iota(ir::Shape(ElementType::kS64, md), 0);
    Value i = ir::Iota(ir::Shape(ElementType::kS64, md), 1);
    return ir::Select(Cmp(CompareDirection::kEq, o, i), Full(1, type, md), Full(0, type, md));
  }
  std::vector<int64_t> n = {out};
  const ElementType f = ElementType::kF32;
  float ratio = LinearScale(in, out, align_corners, scale);
  Value o = ir::Convert(ir::Iota(ir::Shape(ElementType::kS64, n), 0), f);
  Value real;
  if (align_corners) {
    real = Mul(Full(ratio, f, n), o);
  } else {
    real = Sub(Mul(Full(ratio, f, n), Add(o, Full(0.5, f, n))), Full(0.5, f, n));
    real = ir::Binary(ir::op::kMaximum, real, Full(0, f, n));
  }
  Value i0 = ir::Binary(ir::op::kMinimum, ir::Convert(ir::Unary(ir::op::kFloor, real), ElementType::kS64),
                        Full(static_cast<double>(in - 1), ElementType::kS64, n));
  Value l1 = ir::Binary(ir::op::kMinimum,
                        ir::Binary(ir::op::kMaximum, Sub(real, ir::Convert(i0, f)), Full(0, f, n)), Full(1, f, n));
  l1 = ir::Convert(ir::Convert(l1, input_type), f);
  Value l0 = ir::Convert(ir::Convert(Sub(Full(1, f, n), l1), input_type), f);
  Value step = ir::Select(Cmp(CompareDirection::kLt, i0, Full(static_cast<double>(in - 1), ElementType::kS64, n)),
                          Full(1, ElementType::kS64, n), Full(0, ElementType::kS64, n));
  Value i1 = Add(i0, step);
  Value col = ir::Iota(ir::Shape(ElementType::kS64, md), 1);
  auto row = [&](const Value& v) { return ir::BroadcastInDim(v, md, {0}); };
  Value w0 = ir::Select(Cmp(CompareDirection::kEq, col, row(i0)), row(ir::Convert(l0, type)), Full(0, type, md));
  Value w1 = ir::Select(Cmp(CompareDirection::kEq, col, row(i1)), row(ir::Convert(l1, type)), Full(0, type, md));
  return Add(w0, w1);
}

// The f32 ratio of nearest_idx / nearest_exact_idx (compute_scales_value).
float NearestRatio(int64_t in, int64_t out, std::optional<double> scale) {
  return (scale.has_value() && *scale > 0) ? static_cast<float>(1.0 / *scale)
                                           : static_cast<float>(in) / static_cast<float>(out);
}

// PyTorch's nearest_idx (or, when `exact`, nearest_exact_idx: floor((o + 0.5) * ratio)),
// computed on the host: the source index of each output index.
std::vector<int64_t> NearestSource(int64_t in, int64_t out, std::optional<double> scale, bool exact) {
  std::vector<int64_t> src(out);
  float ratio = NearestRatio(in, out, scale);
  for (int64_t o = 0; o < out; ++o) {
    if (exact) {
      src[o] = std::min(static_cast<int64_t>(std::floor((static_cast<float>(o) + 0.5f) * ratio)), in - 1);
    } else if (out == in) {
      src[o] = o;
    } else if (out == 2 * in) {
      src[o] = o >> 1;
    } else {
      src[o] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * ratio)), in - 1);
    }
  }
  return src;
}

// One-hot [out, in] mask of NearestSource computed in the graph (the same f32 arithmetic).
Value NearestMask(int64_t in, int64_t out, std::optional<double> scale, bool exact) {
  std::vector<int64_t> md = {out, in};
  Value o = ir::Iota(ir::Shape(ElementType::kS64, md), 0);
  Value i = ir::Iota(ir::Shape(ElementType::kS64, md), 1);
  Value src;
  if (!exact && out == in) {
    src = o;
  } else if (!exact && out == 2 * in) {
    src = Div(o, Full(2, ElementType::kS64, md));
  } else {
    Value pos = ir::Convert(o, ElementType::kF32);
    if (exact) pos = Add(pos, Full(0.5, ElementType::kF32, md));
    Value prod = Mul(pos, Full(NearestRatio(in, out, scale), ElementType::kF32, md));
    src = ir::Binary(ir::op::kMinimum, ir::Convert(ir::Unary(ir::op::kFloor, prod), ElementType::kS64),
                     Full(static_cast<double>(in - 1), ElementType::kS64, md));
  }
  return Cmp(CompareDirection::kEq, i, src);
}

// The integer factor k when src[o] == o / k for every o, else 0.
int64_t IntegerFactor(const std::vector<int64_t>& src, int64_t in) {
  int64_t out = static_cast<int64_t>(src.size());
  if (out % in != 0) return 0;
  int64_t k = out / in;
  for (int64_t o = 0; o < out; ++o)
    if (src[o] != o / k) return 0;
  return k;
}

// A periodic nearest pattern: src[o + P] == src[o] + Q for every o, with P dividing out
// (the usual case for rational scale factors). {P, Q}, or {0, 0} when there is no such
// P <= 32.
std::pair<int64_t, int64_t> NearestPeriod(const std::vector<int64_t>& src) {
  int64_t out = static_cast<int64_t>(src.size());
  for (int64_t p = 1; p <= std::min<int64_t>(out, 32); ++p) {
    if (out % p != 0) continue;
    if (p == out) return {p, 1};
    int64_t q = src[p] - src[0];
    if (q < 1) continue;
    bool ok = true;
    for (int64_t o = p; o < out && ok; ++o) ok = src[o] == src[o - p] + q;
    if (ok) return {p, q};
  }
  return {0, 0};
}

// Nearest (or nearest-exact) resampling of dimension `dim` from in to out.
Value NearestAlong(const Value& x, int64_t dim, int64_t out, std::optional<double> scale, bool exact) {
  const std::vector<int64_t>& dims = x.shape().dims;
  int64_t in = dims[dim];
  int64_t r = x.shape().rank();
  std::vector<int64_t> src = NearestSource(in, out, scale, exact);
  if (int64_t k = IntegerFactor(src, in)) {
    if (k == 1) return x;
    // [.., in, ..] -> [.., in, k, ..] -> [.., in*k, ..]
    std::vector<int64_t> wide, bdims, result = dims;
    for (int64_t a = 0; a < r; ++a) {
      bdims.push_back(static_cast<int64_t>(wide.size()));
      wide.push_back(dims[a]);
      if (a == dim) wide.push_back(k);
    }
    result[dim] = out;
    return ir::Reshape(ir::BroadcastInDim(x, wide, bdims), result);
  }
  if (auto [period, step] = NearestPeriod(src); period > 0) {
    // Phase t takes inputs src[t], src[t] + Q, ... (a strided slice); the phases are
    // interleaved by a concatenate on a new axis + reshape.
    int64_t count = out / period;
    std::vector<int64_t> cell = dims, result = dims;
    cell[dim] = count;
    cell.insert(cell.begin() + dim + 1, 1);
    result[dim] = out;
    std::vector<Value> phases;
    for (int64_t t = 0; t < period; ++t) {
      std::vector<int64_t> start(r, 0), limit = dims, strides(r, 1);
      start[dim] = src[t];
      limit[dim] = src[t] + (count - 1) * step + 1;
      strides[dim] = step;
      phases.push_back(ir::Reshape(ir::Slice(x, start, limit, strides), cell));
    }
    return ir::Reshape(ir::Concatenate(phases, dim + 1), result);
  }
  // [.., in, ..] -> [.., out, in, ..], select by the one-hot mask, sum over in.
  std::vector<int64_t> wide, xdims;
  for (int64_t a = 0; a < r; ++a) {
    if (a == dim) wide.push_back(out);
    xdims.push_back(static_cast<int64_t>(wide.size()));
    wide.push_back(dims[a]);
  }
  Value xb = ir::BroadcastInDim(x, wide, xdims);
  Value mask = ir::BroadcastInDim(NearestMask(in, out, scale, exact), wide, {dim, dim + 1});
  Value picked = ir::Select(mask, xb, Full(0, x.shape().type, wide));
  return ir::Reduce(ReduceKind::kSum, picked, {dim + 1});
}

// The gradient of NearestAlong: g's dimension `dim` (size out) summed back onto in.
Value NearestAlongBackward(const Value& g, int64_t dim, int64_t in, std::optional<double> scale, bool exact) {
  const std::vector<int64_t>& dims = g.shape().dims;
  int64_t out = dims[dim];
  int64_t r = g.shape().rank();
  std::vector<int64_t> src = NearestSource(in, out, scale, exact);
  if (int64_t k = IntegerFactor(src, in)) {
    if (k == 1) return g;
    std::vector<int64_t> split;
    for (int64_t a = 0; a < r; ++a) {
      if (a == dim) {
        split.push_back(in);
        split.push_back(k);
      } else {
        split.push_back(dims[a]);
      }
    }
    return ir::Reduce(ReduceKind::kSum, ir::Reshape(g, split), {dim + 1});
  }
  if (auto [period, step] = NearestPeriod(src); period > 0) {
    // Phase t (outputs t, t + P, ...) goes back to inputs src[t], src[t] + Q, ...: a pad
    // with interior padding Q - 1; the phases are summed.
    int64_t count = out / period;
    Value sum;
    for (int64_t t = 0; t < period; ++t) {
      std::vector<int64_t> start(r, 0), limit = dims, strides(r, 1);
      start[dim] = t;
      limit[dim] = t + (count - 1) * period + 1;
      strides[dim] = period;
      Value phase = ir::Slice(g, start, limit, strides);
      std::vector<int64_t> low(r, 0), high(r, 0), interior(r, 0);
      low[dim] = src[t];
      high[dim] = in - (src[t] + (count - 1) * step + 1);
      interior[dim] = step - 1;
      Value placed = ir::Pad(phase, Full(0, g.shape().type, {}), low, high, interior);
      sum = sum ? Add(sum, placed) : placed;
    }
    return sum;
  }
  // [.., out, ..] -> [.., in, out, ..], select by the transposed mask, sum over out.
  std::vector<int64_t> wide, gdims;
  for (int64_t a = 0; a < r; ++a) {
    if (a == dim) wide.push_back(in);
    gdims.push_back(static_cast<int64_t>(wide.size()));
    wide.push_back(dims[a]);
  }
  Value gb = ir::BroadcastInDim(g, wide, gdims);
  Value mask = ir::BroadcastInDim(ir::Transpose(NearestMask(in, out, scale, exact), {1, 0}), wide, {dim, dim + 1});
  Value picked = ir::Select(mask, gb, Full(0, g.shape().type, wide));
  return ir::Reduce(ReduceKind::kSum, picked, {dim + 1});
}

}  // namespace

// PyTorch's cubic convolution weights (A = -0.75) of the four taps x0 - 1 .. x0 + 2 at
// fraction t, as get_cubic_upsample_coefficients computes them (upsample_util.h: the
// bicubic grid sampler uses them too).
std::array<Value, 4> upsample_util::CubicCoefficients(const Value& t) {
  const ElementType f = ElementType::kF32;
  const std::vector<int64_t>& n = t.shape().dims;
  const double a = -0.75;
  auto c = [&](double v) { return Full(v, f, n); };
  // ((A + 2) x - (A + 3)) x x + 1, for |x| <= 1
  auto near = [&](const Value& x) { return Add(Mul(Mul(Sub(Mul(c(a + 2), x), c(a + 3)), x), x), c(1)); };
  // ((A x - 5A) x + 8A) x - 4A, for 1 < |x| < 2
  auto far = [&](const Value& x) { return Sub(Mul(Add(Mul(Sub(Mul(c(a), x), c(5 * a)), x), c(8 * a)), x), c(4 * a)); };
  Value rest = Sub(c(1), t);
  return {far(Add(t, c(1))), near(t), near(rest), far(Add(rest, c(1)))};
}

namespace {

// Bicubic weights along one dimension (upsample_bicubic2d): row o has the four
// coefficients at clamp(floor(real) - 1 + k, 0, in - 1), real being the unclamped
// source index.
Value CubicMatrix(int64_t in, int64_t out, bool align_corners, std::optional<double> scale, ElementType type) {
  std::vector<int64_t> n = {out}, md = {out, in};
  const ElementType f = ElementType::kF32;
  float ratio = LinearScale(in, out, align_corners, scale);
  Value o = ir::Convert(ir::Iota(ir::Shape(ElementType::kS64, n), 0), f);
  Value real = align_corners ? Mul(Full(ratio, f, n), o)
                             : Sub(Mul(Full(ratio, f, n), Add(o, Full(0.5, f, n))), Full(0.5, f, n));
  Value floor = ir::Unary(ir::op::kFloor, real);
  Value t = ir::Binary(ir::op::kMinimum, ir::Binary(ir::op::kMaximum, Sub(real, floor), Full(0, f, n)), Full(1, f, n));
  std::array<Value, 4> coeff = CubicCoefficients(t);
  Value x0 = ir::Convert(floor, ElementType::kS64);
  Value col = ir::Iota(ir::Shape(ElementType::kS64, md), 1);
  Value sum = Full(0, type, md);
  for (int64_t k = 0; k < 4; ++k) {
    Value tap = ir::Binary(ir::op::kMinimum,
                           ir::Binary(ir::op::kMaximum, Add(x0, Full(static_cast<double>(k - 1), ElementType::kS64, n)),
                                      Full(0, ElementType::kS64, n)),
                           Full(static_cast<double>(in - 1), ElementType::kS64, n));
    Value hit = Cmp(CompareDirection::kEq, col, ir::BroadcastInDim(tap, md, {0}));
    sum = Add(sum, ir::Select(hit, ir::BroadcastInDim(ir::Convert(coeff[k], type), md, {0}), Full(0, type, md)));
  }
  return sum;
}

// Antialiased bilinear weights along one dimension (_upsample_bilinear2d_aa, PIL's
// filter): row o weighs inputs [xmin, xmax) around center = scale (o + 0.5) with the
// triangle filter stretched by the scale when downsampling, normalized to sum 1.
Value AntialiasMatrix(int64_t in, int64_t out, bool align_corners, std::optional<double> scale, ElementType type) {
  std::vector<int64_t> md = {out, in};
  const ElementType f = ElementType::kF32;
  float ratio = LinearScale(in, out, align_corners, scale);
  float support = ratio >= 1.f ? ratio : 1.f;
  float invscale = ratio >= 1.f ? 1.f / ratio : 1.f;
  auto c = [&](double v) { return Full(v, f, md); };
  Value o = ir::Convert(ir::Iota(ir::Shape(ElementType::kS64, md), 0), f);
  Value i = ir::Convert(ir::Iota(ir::Shape(ElementType::kS64, md), 1), f);
  Value center = Mul(c(ratio), Add(o, c(0.5)));
  // PyTorch truncates center -+ support + 0.5 to integers: floor, as the bounds clamp at 0.
  Value xmin = ir::Binary(ir::op::kMaximum, ir::Unary(ir::op::kFloor, Add(Sub(center, c(support)), c(0.5))), c(0));
  Value xmax = ir::Binary(ir::op::kMinimum, ir::Unary(ir::op::kFloor, Add(Add(center, c(support)), c(0.5))),
                          c(static_cast<double>(in)));
  Value inside = ir::Binary(ir::op::kAnd, Cmp(CompareDirection::kGe, i, xmin), Cmp(CompareDirection::kLt, i, xmax));
  Value x = ir::Unary(ir::op::kAbs, Mul(Add(Sub(i, center), c(0.5)), c(invscale)));
  Value w = ir::Select(ir::Binary(ir::op::kAnd, inside, Cmp(CompareDirection::kLt, x, c(1))), Sub(c(1), x), c(0));
  Value total = ir::BroadcastInDim(ir::Reduce(ReduceKind::kSum, w, {1}), md, {0});
  Value safe = ir::Select(Cmp(CompareDirection::kEq, total, c(0)), c(1), total);
  return ir::Convert(Div(w, safe), type);
}

enum class Mode { kNearest, kNearestExact, kLinear, kCubic, kLinearAntialias };

bool IsNearest(Mode m) { return m == Mode::kNearest || m == Mode::kNearestExact; }

// The [out, in] weight matrix of a weighted mode along one dimension.
Value WeightMatrix(Mode mode, int64_t in, int64_t out, bool align_corners, std::optional<double> scale,
                   ElementType acc, ElementType input_type) {
  switch (mode) {
    case Mode::kLinear:
      return LinearMatrix(in, out, align_corners, scale, acc, input_type);
    case Mode::kCubic:
      return CubicMatrix(in, out, align_corners, scale, acc);
    default:
      return AntialiasMatrix(in, out, align_corners, scale, acc);
  }
}

// PyTorch's checks of upsample_*: one output size per spatial dimension, all positive.
void CheckUpsample(const char* op, at::IntArrayRef input_size, at::IntArrayRef output_size, int64_t n) {
  TORCH_CHECK(static_cast<int64_t>(output_size.size()) == n, op, ": It is expected output_size equals to ", n,
              ", but got size ", output_size.size());
  TORCH_CHECK(static_cast<int64_t>(input_size.size()) == n + 2, op, ": It is expected input_size equals to ", n + 2,
              ", but got size ", input_size.size());
  bool positive = true;
  for (int64_t a = 0; a < n; ++a) positive = positive && input_size[2 + a] > 0 && output_size[a] > 0;
  TORCH_CHECK(positive, op, ": Input and output sizes should be greater than 0, but got input ",
              at::IntArrayRef(input_size.begin() + 2, input_size.end()), " output ", output_size);
}

at::Tensor Upsample(const char* op, const at::Tensor& self, at::IntArrayRef output_size, Mode mode,
                    bool align_corners, const std::vector<std::optional<double>>& scales) {
  int64_t n = static_cast<int64_t>(scales.size());
  TORCH_CHECK(self.dim() == n + 2, op, ": expected a ", n + 2, "-D input [N, C, ", n == 1 ? "W" : n == 2 ? "H, W" : "D, H, W",
              "], got ", DescribeTensor(self));
  CheckUpsample(op, self.sizes(), output_size, n);
  if (IsNearest(mode)) {
    TORCH_CHECK(self.scalar_type() != at::kBool && !at::isComplexType(self.scalar_type()), op,
                ": unsupported input dtype, got ", DescribeTensor(self));
  } else {
    TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": expected a floating point input, got ",
                DescribeTensor(self));
  }
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  ElementType acc = AccumulationType(type);
  return AtenFromIr(Checked(op, [&] {
                      Value v = x->GetIrValue();
                      if (IsNearest(mode)) {
                        for (int64_t a = 0; a < n; ++a)
                          v = NearestAlong(v, 2 + a, output_size[a], scales[a], mode == Mode::kNearestExact);
                        return v;
                      }
                      v = ir::Convert(v, acc);
                      // the last dimension first: the first dot needs no transpose
                      for (int64_t a = n - 1; a >= 0; --a)
                        v = ApplyAlong(v, 2 + a,
                                       WeightMatrix(mode, self.size(2 + a), output_size[a], align_corners, scales[a],
                                                    acc, type),
                                       false);
                      return ir::Convert(v, type);
                    }),
                    x->device());
}

at::Tensor UpsampleBackward(const char* op, const at::Tensor& grad_output, at::IntArrayRef output_size,
                            at::IntArrayRef input_size, Mode mode, bool align_corners,
                            const std::vector<std::optional<double>>& scales) {
  int64_t n = static_cast<int64_t>(scales.size());
  CheckUpsample(op, input_size, output_size, n);
  std::vector<int64_t> expected = {input_size[0], input_size[1]};
  expected.insert(expected.end(), output_size.begin(), output_size.end());
  TORCH_CHECK(grad_output.sizes().vec() == expected, op, ": Expected grad_output to have the size ",
              at::IntArrayRef(expected), ", but got ", DescribeTensor(grad_output));
  TORCH_CHECK(at::isFloatingType(grad_output.scalar_type()), op, ": expected a floating point grad_output, got ",
              DescribeTensor(grad_output));
  XlaTensorPtr g = GetXlaTensor(grad_output, op);
  ElementType type = g->shape().type;
  ElementType acc = AccumulationType(type);
  return AtenFromIr(Checked(op, [&] {
                      Value v = ir::Convert(g->GetIrValue(), acc);
                      for (int64_t a = n - 1; a >= 0; --a) {
                        v = IsNearest(mode)
                                ? NearestAlongBackward(v, 2 + a, input_size[2 + a], scales[a],
                                                       mode == Mode::kNearestExact)
                                : ApplyAlong(v, 2 + a,
                                             WeightMatrix(mode, input_size[2 + a], output_size[a], align_corners,
                                                          scales[a], acc, type),
                                             true);
                      }
                      return ir::Convert(v, type);
                    }),
                    g->device());
}

}  // namespace

at::Tensor XLANativeFunctions::upsample_nearest1d(const at::Tensor& self, at::IntArrayRef output_size, std::optional<double> scales) {
  XLA_COUNT("upsample_nearest1d");
  return Upsample("upsample_nearest1d", self, output_size, Mode::kNearest, false, {scales});
}

at::Tensor XLANativeFunctions::upsample_nearest1d_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
    at::IntArrayRef input_size, std::optional<double> scales) {
  XLA_COUNT("upsample_nearest1d_backward");
  return UpsampleBackward("upsample_nearest1d_backward", grad_output, output_size, input_size, Mode::kNearest, false, {scales});
}

at::Tensor XLANativeFunctions::upsample_nearest2d(const at::Tensor& self, at::IntArrayRef output_size, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("upsample_nearest2d");
  return Upsample("upsample_nearest2d", self, output_size, Mode::kNearest, false, {scales_h, scales_w});
}

at::Tensor XLANativeFunctions::upsample_nearest2d_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
    at::IntArrayRef input_size, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("upsample_nearest2d_backward");
  return UpsampleBackward("upsample_nearest2d_backward", grad_output, output_size, input_size, Mode::kNearest, false, {scales_h, scales_w});
}

at::Tensor XLANativeFunctions::upsample_nearest3d(const at::Tensor& self, at::IntArrayRef output_size, std::optional<double> scales_d, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("upsample_nearest3d");
  return Upsample("upsample_nearest3d", self, output_size, Mode::kNearest, false, {scales_d, scales_h, scales_w});
}

at::Tensor XLANativeFunctions::upsample_nearest3d_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
    at::IntArrayRef input_size, std::optional<double> scales_d, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("upsample_nearest3d_backward");
  return UpsampleBackward("upsample_nearest3d_backward", grad_output, output_size, input_size, Mode::kNearest, false, {scales_d, scales_h, scales_w});
}

at::Tensor XLANativeFunctions::_upsample_nearest_exact1d(const at::Tensor& self, at::IntArrayRef output_size, std::optional<double> scales) {
  XLA_COUNT("_upsample_nearest_exact1d");
  return Upsample("_upsample_nearest_exact1d", self, output_size, Mode::kNearestExact, false, {scales});
}

at::Tensor XLANativeFunctions::_upsample_nearest_exact1d_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
    at::IntArrayRef input_size, std::optional<double> scales) {
  XLA_COUNT("_upsample_nearest_exact1d_backward");
  return UpsampleBackward("_upsample_nearest_exact1d_backward", grad_output, output_size, input_size, Mode::kNearestExact, false, {scales});
}

at::Tensor XLANativeFunctions::_upsample_nearest_exact2d(const at::Tensor& self, at::IntArrayRef output_size, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("_upsample_nearest_exact2d");
  return Upsample("_upsample_nearest_exact2d", self, output_size, Mode::kNearestExact, false, {scales_h, scales_w});
}

at::Tensor XLANativeFunctions::_upsample_nearest_exact2d_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
    at::IntArrayRef input_size, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("_upsample_nearest_exact2d_backward");
  return UpsampleBackward("_upsample_nearest_exact2d_backward", grad_output, output_size, input_size, Mode::kNearestExact, false, {scales_h, scales_w});
}

at::Tensor XLANativeFunctions::_upsample_nearest_exact3d(const at::Tensor& self, at::IntArrayRef output_size, std::optional<double> scales_d, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("_upsample_nearest_exact3d");
  return Upsample("_upsample_nearest_exact3d", self, output_size, Mode::kNearestExact, false, {scales_d, scales_h, scales_w});
}

at::Tensor XLANativeFunctions::_upsample_nearest_exact3d_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
    at::IntArrayRef input_size, std::optional<double> scales_d, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("_upsample_nearest_exact3d_backward");
  return UpsampleBackward("_upsample_nearest_exact3d_backward", grad_output, output_size, input_size, Mode::kNearestExact, false, {scales_d, scales_h, scales_w});
}

at::Tensor XLANativeFunctions::upsample_linear1d(const at::Tensor& self, at::IntArrayRef output_size, bool align_corners, std::optional<double> scales) {
  XLA_COUNT("upsample_linear1d");
  return Upsample("upsample_linear1d", self, output_size, Mode::kLinear, align_corners, {scales});
}

at::Tensor XLANativeFunctions::upsample_linear1d_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
    at::IntArrayRef input_size, bool align_corners, std::optional<double> scales) {
  XLA_COUNT("upsample_linear1d_backward");
  return UpsampleBackward("upsample_linear1d_backward", grad_output, output_size, input_size, Mode::kLinear, align_corners, {scales});
}

at::Tensor XLANativeFunctions::upsample_bilinear2d(const at::Tensor& self, at::IntArrayRef output_size, bool align_corners, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("upsample_bilinear2d");
  return Upsample("upsample_bilinear2d", self, output_size, Mode::kLinear, align_corners, {scales_h, scales_w});
}

at::Tensor XLANativeFunctions::upsample_bilinear2d_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
    at::IntArrayRef input_size, bool align_corners, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("upsample_bilinear2d_backward");
  return UpsampleBackward("upsample_bilinear2d_backward", grad_output, output_size, input_size, Mode::kLinear, align_corners, {scales_h, scales_w});
}

at::Tensor XLANativeFunctions::upsample_trilinear3d(const at::Tensor& self, at::IntArrayRef output_size, bool align_corners, std::optional<double> scales_d, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("upsample_trilinear3d");
  return Upsample("upsample_trilinear3d", self, output_size, Mode::kLinear, align_corners, {scales_d, scales_h, scales_w});
}

at::Tensor XLANativeFunctions::upsample_trilinear3d_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
    at::IntArrayRef input_size, bool align_corners, std::optional<double> scales_d, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("upsample_trilinear3d_backward");
  return UpsampleBackward("upsample_trilinear3d_backward", grad_output, output_size, input_size, Mode::kLinear, align_corners, {scales_d, scales_h, scales_w});
}

at::Tensor XLANativeFunctions::upsample_bicubic2d(const at::Tensor& self, at::IntArrayRef output_size, bool align_corners, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("upsample_bicubic2d");
  return Upsample("upsample_bicubic2d", self, output_size, Mode::kCubic, align_corners, {scales_h, scales_w});
}

at::Tensor XLANativeFunctions::upsample_bicubic2d_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
    at::IntArrayRef input_size, bool align_corners, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("upsample_bicubic2d_backward");
  return UpsampleBackward("upsample_bicubic2d_backward", grad_output, output_size, input_size, Mode::kCubic, align_corners, {scales_h, scales_w});
}

at::Tensor XLANativeFunctions::_upsample_bilinear2d_aa(const at::Tensor& self, at::IntArrayRef output_size, bool align_corners, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("_upsample_bilinear2d_aa");
  return Upsample("_upsample_bilinear2d_aa", self, output_size, Mode::kLinearAntialias, align_corners, {scales_h, scales_w});
}

at::Tensor XLANativeFunctions::_upsample_bilinear2d_aa_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
    at::IntArrayRef input_size, bool align_corners, std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("_upsample_bilinear2d_aa_backward");
  return UpsampleBackward("_upsample_bilinear2d_aa_backward", grad_output, output_size, input_size, Mode::kLinearAntialias, align_corners, {scales_h, scales_w});
}

}  // namespace torch_xla
