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
//   grid sampling            (grid_sampler_2d / 3d) a gather of input rows per tap
//                            tuple, weighted and summed; the backward scatter-adds
//                            (see the section's comment).
// Low-precision floats interpolate in f32.
#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"
#include "ir/builder_indexing.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;


// The offset tuple of row-major flat index `flat` over `sizes`.
std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> t(sizes.size());
  for (int64_t a = static_cast<int64_t>(sizes.size()) - 1; a >= 0; --a) {
    t[a] = flat % sizes[a];
    flat /= sizes[a];
  }
  return t;
}

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


// PyTorch's cubic convolution weights (A = -0.75) of the four taps x0 - 1 .. x0 + 2 at
// fraction t, as get_cubic_upsample_coefficients computes them.
std::array<Value, 4> CubicCoefficients(const Value& t) {
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

// The derivatives of CubicCoefficients by t (grid_sampler's bicubic backward).
std::array<Value, 4> CubicCoefficientSlopes(const Value& t) {
  const ElementType f = ElementType::kF32;
  const std::vector<int64_t>& n = t.shape().dims;
  const double a = -0.75;
  auto c = [&](double v) { return Full(v, f, n); };
  // d/dx of the near and far pieces: 3(A + 2) x^2 - 2(A + 3) x and 3A x^2 - 10A x + 8A
  auto near = [&](const Value& x) { return Mul(Sub(Mul(c(3 * (a + 2)), x), c(2 * (a + 3))), x); };
  auto far = [&](const Value& x) { return Add(Mul(Sub(Mul(c(3 * a), x), c(10 * a)), x), c(8 * a)); };
  auto neg = [&](const Value& v) { return ir::Unary(ir::op::kNegate, v); };
  return {far(Add(t, c(1))), near(t), neg(near(Sub(c(1), t))), neg(far(Sub(c(2), t)))};
}

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

// x with dimension `dim` resampled by the [out, in] matrix a: one dot_general, and a
// transpose back unless `dim` is the last.
Value ApplyAlong(const Value& x, int64_t dim, const Value& a, bool transposed) {
  int64_t r = x.shape().rank();
  Value y = ir::DotGeneral(x, a, {}, {}, {dim}, {transposed ? 0 : 1}, x.shape().type);  // [.. without dim, n]
  if (dim == r - 1) return y;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < r; ++d) perm.push_back(d == dim ? r - 1 : (d < dim ? d : d - 1));
  return ir::Transpose(y, perm);
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

// ---------------------------------------------------------------------------------
// grid sampling (grid_sampler_2d / 3d): input [N, C, *in], grid [N, *out, n] holding
// (x, y[, z]) in [-1, 1]. Each output is a weighted sum over taps: per spatial
// dimension 1 (nearest), 2 (bilinear) or 4 (bicubic) integer positions with weights
// depending on the source coordinate. Every tap tuple gathers [N * out, C] rows of the
// input laid out as [N * prod(in), C]; the backward scatter-adds the weighted
// gradients back and differentiates the weights for the grid's gradient. Taps outside
// the input (zeros padding) are skipped, as PyTorch's kernels skip them.

namespace {

enum class GridMode : int64_t { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum class GridPadding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

// One tap along one dimension: position ([N, *out] s64, possibly outside [0, size)),
// whether it lies inside, its weight and the weight's derivative by the coordinate.
struct GridTap {
  Value pos, valid, w, dw;
};

// A coordinate ([N, *out] f32) and its derivative by the grid value.
struct CoordGrad {
  Value coord, mult;
};

struct GridSampling {
  const std::vector<int64_t>& od;  // [N, *out]
  ElementType f = ElementType::kF32;
  Value c(double v) const { return Full(v, f, od); }
  Value Select(const Value& p, const Value& a, const Value& b) const { return ir::Select(p, a, b); }
  Value Lt(const Value& a, const Value& b) const { return Cmp(CompareDirection::kLt, a, b); }
  Value Le(const Value& a, const Value& b) const { return Cmp(CompareDirection::kLe, a, b); }

  // clip_coordinates_set_grad: min(size - 1, max(x, 0)), slope 1 strictly inside
  CoordGrad Clip(const CoordGrad& x, int64_t size) const {
    Value hi = c(static_cast<double>(size - 1));
    Value clipped = ir::Binary(ir::op::kMinimum, ir::Binary(ir::op::kMaximum, x.coord, c(0)), hi);
    Value inside = ir::Binary(ir::op::kAnd, Lt(c(0), x.coord), Lt(x.coord, hi));
    return {clipped, Select(inside, x.mult, c(0))};
  }

  // reflect_coordinates_set_grad between twice_low / 2 and twice_high / 2
  CoordGrad Reflect(const CoordGrad& x, int64_t twice_low, int64_t twice_high) const {
    if (twice_low == twice_high) return {c(0), c(0)};
    double lo = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
    Value d = Sub(x.coord, c(lo));
    Value negative = Lt(d, c(0));
    Value sign = Select(negative, c(-1), c(1));
    d = ir::Unary(ir::op::kAbs, d);
    Value extra = ir::Binary(ir::op::kRemainder, d, c(span));
    Value flips = ir::Unary(ir::op::kFloor, Div(d, c(span)));
    Value even = Cmp(CompareDirection::kEq, ir::Binary(ir::op::kRemainder, flips, c(2)), c(0));
    Value v = Select(even, Add(extra, c(lo)), Add(Sub(c(span), extra), c(lo)));
    Value g = Select(even, sign, ir::Unary(ir::op::kNegate, sign));
    return {v, Mul(x.mult, g)};
  }

  // The padding mode applied to a coordinate (compute_coordinates).
  CoordGrad Pad(CoordGrad x, int64_t size, GridPadding padding, bool align_corners) const {
    if (padding == GridPadding::kBorder) return Clip(x, size);
    if (padding == GridPadding::kReflection) {
      x = align_corners ? Reflect(x, 0, 2 * (size - 1)) : Reflect(x, -1, 2 * size - 1);
      return Clip(x, size);
    }
    return x;
  }

  // grid_sampler_unnormalize_set_grad
  CoordGrad Unnormalize(const Value& g, int64_t size, bool align_corners) const {
    if (align_corners)
      return {Mul(Div(Add(g, c(1)), c(2)), c(static_cast<double>(size - 1))), c((size - 1) / 2.0)};
    return {Div(Sub(Mul(Add(g, c(1)), c(static_cast<double>(size))), c(1)), c(2)), c(size / 2.0)};
  }

  Value Inside(const Value& pos, int64_t size) const {
    return ir::Binary(ir::op::kAnd, Cmp(CompareDirection::kGe, pos, S64(0)),
                      Cmp(CompareDirection::kLt, pos, S64(static_cast<double>(size))));
  }
  Value S64(double v) const { return Full(v, ElementType::kS64, od); }

  std::vector<GridTap> Taps(const Value& g, int64_t size, GridMode mode, GridPadding padding,
                            bool align_corners) const {
    CoordGrad u = Unnormalize(g, size, align_corners);
    std::vector<GridTap> taps;
    if (mode == GridMode::kBicubic) {
      // the padding applies to each tap's position (get_value_bounded), not to the coordinate
      Value x0 = ir::Unary(ir::op::kFloor, u.coord);
      Value t = Sub(u.coord, x0);
      std::array<Value, 4> w = CubicCoefficients(t);
      std::array<Value, 4> dw = CubicCoefficientSlopes(t);
      for (int64_t k = 0; k < 4; ++k) {
        CoordGrad p = Pad({Add(x0, c(static_cast<double>(k - 1))), c(0)}, size, padding, align_corners);
        Value pos = ir::Convert(p.coord, ElementType::kS64);
        taps.push_back({pos, Inside(pos, size), w[k], Mul(dw[k], u.mult)});
      }
      return taps;
    }
    CoordGrad x = Pad(u, size, padding, align_corners);
    // safe_downgrade_to_int_range: NaN and infinite coordinates sample nothing
    Value finite = Lt(ir::Unary(ir::op::kAbs, x.coord), c(std::numeric_limits<double>::infinity()));
    Value coord = Select(finite, x.coord, c(-100));
    if (mode == GridMode::kNearest) {
      Value pos = ir::Convert(ir::Unary(ir::op::kRoundEven, coord), ElementType::kS64);
      taps.push_back({pos, Inside(pos, size), c(1), c(0)});
      return taps;
    }
    Value x0 = ir::Unary(ir::op::kFloor, coord);
    Value frac = Sub(coord, x0);
    Value p0 = ir::Convert(x0, ElementType::kS64);
    Value p1 = Add(p0, S64(1));
    taps.push_back({p0, Inside(p0, size), Sub(c(1), frac), ir::Unary(ir::op::kNegate, x.mult)});
    taps.push_back({p1, Inside(p1, size), frac, x.mult});
    return taps;
  }
};

struct GridProblem {
  int64_t n;                       // spatial rank
  std::vector<int64_t> in_sizes;   // [*in]
  std::vector<int64_t> od;         // [N, *out]
  int64_t batch, channels, rows;   // rows = N * prod(out)
  std::vector<std::vector<GridTap>> taps;  // per spatial dimension (D/H/W order)
};

void CheckGridSampler(const char* op, const at::Tensor& input, const at::Tensor& grid, int64_t n,
                      int64_t interpolation_mode, int64_t padding_mode) {
  TORCH_CHECK(input.dim() == n + 2 && grid.dim() == n + 2, op, ": expected ", n + 2, "-D input and grid, got input ",
              DescribeTensor(input), " and grid ", DescribeTensor(grid));
  TORCH_CHECK(grid.size(-1) == n, op, ": expected grid to have size ", n, " in last dimension, but got grid with sizes ",
              grid.sizes());
  TORCH_CHECK(input.size(0) == grid.size(0), op, ": expected grid and input to have same batch size, but got input ",
              DescribeTensor(input), " and grid ", DescribeTensor(grid));
  TORCH_CHECK(input.scalar_type() == grid.scalar_type() && at::isFloatingType(input.scalar_type()), op,
              ": expected input and grid of the same floating point dtype, got input ", DescribeTensor(input),
              " and grid ", DescribeTensor(grid));
  for (int64_t i = 2; i < input.dim(); ++i)
    TORCH_CHECK(input.size(i) > 0, op, ": expected input to have non-empty spatial dimensions, but input has sizes ",
                input.sizes(), " with dimension ", i, " being empty");
  TORCH_CHECK(interpolation_mode >= 0 && interpolation_mode <= (n == 2 ? 2 : 1), op,
              ": unsupported interpolation mode ", interpolation_mode);
  TORCH_CHECK(padding_mode >= 0 && padding_mode <= 2, op, ": unsupported padding mode ", padding_mode);
}

GridProblem MakeGridProblem(const at::Tensor& input, const at::Tensor& grid, const Value& grid_value, int64_t n,
                            int64_t interpolation_mode, int64_t padding_mode, bool align_corners) {
  GridProblem p;
  p.n = n;
  p.in_sizes = std::vector<int64_t>(input.sizes().begin() + 2, input.sizes().end());
  p.od = std::vector<int64_t>(grid.sizes().begin(), grid.sizes().end() - 1);
  p.batch = input.size(0);
  p.channels = input.size(1);
  p.rows = Product(p.od);
  GridSampling s{p.od};
  Value g = ir::Convert(grid_value, ElementType::kF32);
  int64_t r = static_cast<int64_t>(p.od.size());
  for (int64_t a = 0; a < n; ++a) {
    // grid component n-1-a addresses spatial dimension a (x is the last, W)
    std::vector<int64_t> start(r + 1, 0), limit = p.od, strides(r + 1, 1);
    limit.push_back(n);
    start[r] = n - 1 - a;
    limit[r] = n - a;
    Value component = ir::Reshape(ir::Slice(g, start, limit, strides), p.od);
    p.taps.push_back(s.Taps(component, p.in_sizes[a], static_cast<GridMode>(interpolation_mode),
                            static_cast<GridPadding>(padding_mode), align_corners));
  }
  return p;
}

// Calls visit(flat row index [rows, 1], valid [rows], weights per dimension) for every
// tap tuple.
void ForEachGridTap(const GridProblem& p,
                    const std::function<void(const Value&, const Value&, const std::vector<const GridTap*>&)>& visit) {
  std::vector<int64_t> counts;
  for (const auto& t : p.taps) counts.push_back(static_cast<int64_t>(t.size()));
  int64_t volume = Product(p.in_sizes);
  for (int64_t f = 0; f < Product(counts); ++f) {
    std::vector<int64_t> pick = Unflatten(f, counts);
    std::vector<const GridTap*> chosen;
    Value flat = Mul(ir::Iota(ir::Shape(ElementType::kS64, p.od), 0), Full(static_cast<double>(volume), ElementType::kS64, p.od));
    Value valid;
    int64_t stride = volume;
    for (int64_t a = 0; a < p.n; ++a) {
      const GridTap& t = p.taps[a][pick[a]];
      chosen.push_back(&t);
      stride /= p.in_sizes[a];
      Value clamped = ir::Binary(ir::op::kMinimum,
                                 ir::Binary(ir::op::kMaximum, t.pos, Full(0, ElementType::kS64, p.od)),
                                 Full(static_cast<double>(p.in_sizes[a] - 1), ElementType::kS64, p.od));
      flat = Add(flat, Mul(clamped, Full(static_cast<double>(stride), ElementType::kS64, p.od)));
      valid = valid ? ir::Binary(ir::op::kAnd, valid, t.valid) : t.valid;
    }
    visit(ir::Reshape(flat, {p.rows, 1}), ir::Reshape(valid, {p.rows}), chosen);
  }
}

// The product of the chosen taps' weights, the one of dimension `skip` replaced by its
// slope (skip < 0: none), as [rows].
Value TapWeight(const GridProblem& p, const std::vector<const GridTap*>& chosen, int64_t skip) {
  Value w;
  for (int64_t a = 0; a < p.n; ++a) {
    const Value& v = a == skip ? chosen[a]->dw : chosen[a]->w;
    w = w ? Mul(w, v) : v;
  }
  return ir::Reshape(w, {p.rows});
}

// [N, C, *in] -> [N * prod(in), C]
Value InputRows(const Value& x, int64_t n) {
  const std::vector<int64_t>& d = x.shape().dims;
  std::vector<int64_t> perm = {0};
  for (int64_t a = 0; a < n; ++a) perm.push_back(2 + a);
  perm.push_back(1);
  return ir::Reshape(ir::Transpose(x, perm), {d[0] * Product(std::vector<int64_t>(d.begin() + 2, d.end())), d[1]});
}

// [N * prod(sizes), C] -> [N, C, *sizes]
Value FromRows(const Value& rows, int64_t batch, int64_t channels, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> d = {batch};
  d.insert(d.end(), sizes.begin(), sizes.end());
  d.push_back(channels);
  std::vector<int64_t> perm = {0, static_cast<int64_t>(sizes.size()) + 1};
  for (std::size_t a = 0; a < sizes.size(); ++a) perm.push_back(1 + static_cast<int64_t>(a));
  return ir::Transpose(ir::Reshape(rows, d), perm);
}

Value GatherRows(const Value& table, const Value& index, int64_t channels) {
  return ir::Gather(table, index, {1}, {0}, {0}, 1, {1, channels});
}

Value RowMask(const Value& valid, int64_t channels) {
  int64_t rows = valid.shape().dims[0];
  return ir::BroadcastInDim(valid, {rows, channels}, {0});
}

Value PerRow(const Value& v, int64_t channels) {
  int64_t rows = v.shape().dims[0];
  return ir::BroadcastInDim(v, {rows, channels}, {0});
}

at::Tensor GridSampler(const char* op, const at::Tensor& input, const at::Tensor& grid, int64_t n,
                       int64_t interpolation_mode, int64_t padding_mode, bool align_corners) {
  CheckGridSampler(op, input, grid, n, interpolation_mode, padding_mode);
  int device = CommonDevice({&input, &grid}, op);
  ElementType type = ElementTypeOf(input.scalar_type());
  Value x = GetXlaTensor(input, op)->GetIrValue();
  Value gv = GetXlaTensor(grid, op)->GetIrValue();
  return AtenFromIr(Checked(op, [&] {
                      GridProblem p = MakeGridProblem(input, grid, gv, n, interpolation_mode, padding_mode,
                                                      align_corners);
                      Value table = InputRows(ir::Convert(x, ElementType::kF32), n);
                      Value zero = Full(0, ElementType::kF32, {p.rows, p.channels});
                      Value sum = zero;
                      ForEachGridTap(p, [&](const Value& index, const Value& valid,
                                            const std::vector<const GridTap*>& chosen) {
                        Value v = Mul(GatherRows(table, index, p.channels), PerRow(TapWeight(p, chosen, -1), p.channels));
                        sum = Add(sum, ir::Select(RowMask(valid, p.channels), v, zero));
                      });
                      std::vector<int64_t> out(p.od.begin() + 1, p.od.end());
                      return ir::Convert(FromRows(sum, p.batch, p.channels, out), type);
                    }),
                    device);
}

std::tuple<at::Tensor, at::Tensor> GridSamplerBackward(const char* op, const at::Tensor& grad_output,
                                                       const at::Tensor& input, const at::Tensor& grid, int64_t n,
                                                       int64_t interpolation_mode, int64_t padding_mode,
                                                       bool align_corners) {
  CheckGridSampler(op, input, grid, n, interpolation_mode, padding_mode);
  std::vector<int64_t> expected = {input.size(0), input.size(1)};
  expected.insert(expected.end(), grid.sizes().begin() + 1, grid.sizes().end() - 1);
  TORCH_CHECK(grad_output.sizes().vec() == expected && grad_output.scalar_type() == input.scalar_type(), op,
              ": expected grad_output of size ", at::IntArrayRef(expected), " and the input's dtype, got ",
              DescribeTensor(grad_output));
  int device = CommonDevice({&grad_output, &input, &grid}, op);
  ElementType type = ElementTypeOf(input.scalar_type());
  const ElementType f = ElementType::kF32;
  Value x = GetXlaTensor(input, op)->GetIrValue();
  Value gv = GetXlaTensor(grid, op)->GetIrValue();
  Value dy = GetXlaTensor(grad_output, op)->GetIrValue();
  return Checked(op, [&] {
    GridProblem p = MakeGridProblem(input, grid, gv, n, interpolation_mode, padding_mode, align_corners);
    Value table = InputRows(ir::Convert(x, f), n);
    Value gout = InputRows(ir::Convert(dy, f), n);  // [rows, C]
    Value zero = Full(0, f, {p.rows, p.channels});
    Value zero_rows = Full(0, f, {p.rows});
    Value grad_table = Full(0, f, table.shape().dims);
    std::vector<Value> slope(n, zero_rows);
    ForEachGridTap(p, [&](const Value& index, const Value& valid, const std::vector<const GridTap*>& chosen) {
      Value mask = RowMask(valid, p.channels);
      Value weighted = ir::Select(mask, Mul(gout, PerRow(TapWeight(p, chosen, -1), p.channels)), zero);
      grad_table = ir::Scatter(ir::ScatterKind::kAdd, grad_table, index, weighted, {1}, {0}, {0}, 1);
      // sum over channels of value * gradient, for the weights' slopes
      Value vg = ir::Reduce(ReduceKind::kSum, ir::Select(mask, Mul(GatherRows(table, index, p.channels), gout), zero),
                            {1});
      for (int64_t a = 0; a < n; ++a) slope[a] = Add(slope[a], Mul(vg, TapWeight(p, chosen, a)));
    });
    std::vector<int64_t> in_sizes(input.sizes().begin() + 2, input.sizes().end());
    Value grad_input = ir::Convert(FromRows(grad_table, p.batch, p.channels, in_sizes), type);
    // grid's last dimension lists x (dimension n-1) first
    std::vector<int64_t> one = p.od;
    one.push_back(1);
    std::vector<Value> parts;
    for (int64_t a = n - 1; a >= 0; --a) parts.push_back(ir::Reshape(slope[a], one));
    Value grad_grid = ir::Convert(ir::Concatenate(parts, static_cast<int64_t>(p.od.size())), type);
    return std::make_tuple(AtenFromIr(grad_input, device), AtenFromIr(grad_grid, device));
  });
}

}  // namespace

at::Tensor XLANativeFunctions::grid_sampler_2d(const at::Tensor& input, const at::Tensor& grid,
                                               int64_t interpolation_mode, int64_t padding_mode, bool align_corners) {
  XLA_COUNT("grid_sampler_2d");
  return GridSampler("grid_sampler_2d", input, grid, 2, interpolation_mode, padding_mode, align_corners);
}

at::Tensor XLANativeFunctions::grid_sampler_3d(const at::Tensor& input, const at::Tensor& grid,
                                               int64_t interpolation_mode, int64_t padding_mode, bool align_corners) {
  XLA_COUNT("grid_sampler_3d");
  return GridSampler("grid_sampler_3d", input, grid, 3, interpolation_mode, padding_mode, align_corners);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::grid_sampler_2d_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& grid, int64_t interpolation_mode,
    int64_t padding_mode, bool align_corners, ::std::array<bool, 2> output_mask) {
  XLA_COUNT("grid_sampler_2d_backward");
  return GridSamplerBackward("grid_sampler_2d_backward", grad_output, input, grid, 2, interpolation_mode,
                             padding_mode, align_corners);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::grid_sampler_3d_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& grid, int64_t interpolation_mode,
    int64_t padding_mode, bool align_corners, ::std::array<bool, 2> output_mask) {
  XLA_COUNT("grid_sampler_3d_backward");
  return GridSamplerBackward("grid_sampler_3d_backward", grad_output, input, grid, 3, interpolation_mode,
                             padding_mode, align_corners);
}

}  // namespace torch_xla
