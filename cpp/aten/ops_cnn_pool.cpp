// CNN layer kernels, part 2: pooling and interpolation over the last two dimensions of
// [N, C, H, W] (or [C, H, W]) inputs. 1-D pooling reaches us as the 2-D ops.
//
//   max_pool2d / avg_pool2d   for each of the kH*kW window offsets, a strided slice of
//                             the padded input ([.., oh, ow]); max_pool keeps a running
//                             maximum and its flat index h*W + w (first maximum wins, a
//                             NaN always wins, as in PyTorch's CPU kernel), avg_pool sums.
//   their backward            the gradient of each offset (max_pool: masked by indices ==
//                             that offset's index) is scattered back and summed, phase by
//                             phase of the stride (see ScatterWindows): plain pads, no
//                             interior padding, then one interleaving reshape.
//   adaptive avg pool,        separable [out, in] weight matrices A_h, A_w built from
//   bilinear interpolation    iotas: out = A_h x A_w^T by two dot_generals; the backward
//                             is A_h^T g A_w.
//   adaptive max pool         for each offset (i, j) < the largest window, the element at
//                             (start_h + i, start_w + j) of every window, gathered by
//                             one-hot selects, feeds the same running argmax; the
//                             backward scatters back through the transposed selects.
//   im2col / col2im           (unfold / fold) the same window offsets: im2col stacks
//                             each offset's strided slice of the padded input as rows
//                             c*kH*kW + i*kW + j; col2im scatters them back and sums
//                             (ScatterWindows). Each is the other's gradient.
//   nearest interpolation     integer upscaling is a broadcast + reshape (its backward a
//                             reshape + sum); periodic patterns (rational scales) are
//                             strided slices per phase, interleaved; other ratios select
//                             along each dimension with a one-hot [out, in] mask and sum
//                             (exact for all types).
// Low-precision floats accumulate in f32.
#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"
#include "ir/builder_cnn.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;


Value Full(double v, ElementType type, const std::vector<int64_t>& dims) { return ir::Constant(v, ir::Shape(type, dims)); }
Value Cmp(CompareDirection d, const Value& a, const Value& b) { return ir::Compare(d, a, b); }

std::string ListString(at::IntArrayRef v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// [.., a, b] -> [.., b, a]
Value SwapLastTwo(const Value& v) {
  int64_t r = v.shape().rank();
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < r - 2; ++i) perm.push_back(i);
  perm.push_back(r - 1);
  perm.push_back(r - 2);
  return ir::Transpose(v, perm);
}

// Broadcasts a [oh, ow] value to `dims` (its last two dimensions).
Value ToLastTwo(const Value& v, const std::vector<int64_t>& dims) {
  int64_t r = static_cast<int64_t>(dims.size());
  return ir::BroadcastInDim(v, dims, {r - 2, r - 1});
}

void CheckPoolInput(const char* op, const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, op,
              ": Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got ",
              DescribeTensor(self));
  for (int64_t i = self.dim() - 3; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, op, ": Expected input's non-batch dimensions to have positive length, but got ",
                DescribeTensor(self));
}

// ---------------------------------------------------------------------------------
// max_pool2d / avg_pool2d

struct PoolDim {
  int64_t in, k, s, p, d, out;
};

int64_t PickDim(at::IntArrayRef v, int64_t i) { return v.size() == 1 ? v[0] : v[i]; }

// The pooling geometry of the last two dimensions, with PyTorch's checks and messages.
std::array<PoolDim, 2> PoolGeometry(const char* op, const at::Tensor& self, at::IntArrayRef kernel_size,
                                    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                                    bool ceil_mode) {
  CheckPoolInput(op, self);
  TORCH_CHECK(kernel_size.size() == 1 || kernel_size.size() == 2, op,
              ": kernel_size must either be a single int, or a tuple of two ints, got ", ListString(kernel_size));
  TORCH_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 2, op,
              ": stride must either be omitted, a single int, or a tuple of two ints, got ", ListString(stride));
  TORCH_CHECK(padding.size() == 1 || padding.size() == 2, op,
              ": padding must either be a single int, or a tuple of two ints, got ", ListString(padding));
  TORCH_CHECK(dilation.size() == 1 || dilation.size() == 2, op,
              ": dilation must be either a single int, or a tuple of two ints, got ", ListString(dilation));
  std::array<PoolDim, 2> g;
  for (int64_t i = 0; i < 2; ++i) {
    PoolDim& d = g[i];
    d.in = self.size(self.dim() - 2 + i);
    d.k = PickDim(kernel_size, i);
    d.s = stride.empty() ? d.k : PickDim(stride, i);
    d.p = PickDim(padding, i);
    d.d = PickDim(dilation, i);
    TORCH_CHECK(d.k > 0, op, ": kernel size should be greater than zero, but got kernel_size=",
                ListString(kernel_size));
    TORCH_CHECK(d.s > 0, op, ": stride should be greater than zero, but got stride=", ListString(stride));
    TORCH_CHECK(d.d > 0, op, ": dilation should be greater than zero, but got dilation=", ListString(dilation));
    TORCH_CHECK(d.p >= 0 && d.p <= d.k / 2, op, ": pad should be at most half of effective kernel size, but got pad=",
                d.p, ", kernel_size=", d.k, " and dilation=", d.d);
    int64_t span = d.in + 2 * d.p - d.d * (d.k - 1) - 1 + (ceil_mode ? d.s - 1 : 0);
    // floor division (span may be negative)
    int64_t q = span >= 0 ? span / d.s : -((-span + d.s - 1) / d.s);
    d.out = q + 1;
    if (ceil_mode && (d.out - 1) * d.s >= d.in + d.p) --d.out;
  }
  TORCH_CHECK(g[0].out >= 1 && g[1].out >= 1, op, ": Given input size: ", DescribeTensor(self),
              ". Calculated output size: (", g[0].out, "x", g[1].out, "). Output size is too small");
  return g;
}

std::vector<int64_t> OutDims(const std::vector<int64_t>& in, const std::array<PoolDim, 2>& g) {
  std::vector<int64_t> out = in;
  out[out.size() - 2] = g[0].out;
  out[out.size() - 1] = g[1].out;
  return out;
}

// The input padded with `fill` so that every window offset's strided slice fits.
Value PadForWindows(const Value& x, const std::array<PoolDim, 2>& g, double fill) {
  int64_t r = x.shape().rank();
  std::vector<int64_t> low(r, 0), high(r, 0), interior(r, 0);
  for (int64_t i = 0; i < 2; ++i) {
    const PoolDim& d = g[i];
    low[r - 2 + i] = d.p;
    high[r - 2 + i] = std::max<int64_t>(0, (d.out - 1) * d.s + d.d * (d.k - 1) + 1 - d.in - d.p);
  }
  return ir::Pad(x, Full(fill, x.shape().type, {}), low, high, interior);
}

// The [.., oh, ow] elements at window offset (i, j) of every window.
Value WindowSlice(const Value& padded, const std::array<PoolDim, 2>& g, int64_t i, int64_t j) {
  int64_t r = padded.shape().rank();
  std::vector<int64_t> start(r, 0), limit = padded.shape().dims, strides(r, 1);
  int64_t off[2] = {i, j};
  for (int64_t a = 0; a < 2; ++a) {
    const PoolDim& d = g[a];
    start[r - 2 + a] = off[a] * d.d;
    limit[r - 2 + a] = off[a] * d.d + (d.out - 1) * d.s + 1;
    strides[r - 2 + a] = d.s;
  }
  return ir::Slice(padded, start, limit, strides);
}

// Scatters the [.., oh, ow] values of every window offset (contribs[i * kW + j]) back onto
// the [.., H, W] input and sums them. Input position h = (i*d - p) + s*o. Split by phase
// h mod s: within a phase an offset's values land on a contiguous, shifted range, so each
// phase is a sum of plainly padded (or cropped) [oh, ow] arrays, and the phases are
// interleaved by a concatenate + reshape. This touches each output element once per
// offset instead of each input element once per offset.
Value ScatterWindows(const std::vector<Value>& contribs, const std::array<PoolDim, 2>& g,
                     const std::vector<int64_t>& in_dims) {
  const Value& first = contribs.at(0);
  int64_t r = first.shape().rank();
  ElementType type = first.shape().type;
  int64_t q[2];
  std::vector<int64_t> residue_of[2], shift_of[2];
  for (int64_t a = 0; a < 2; ++a) {
    const PoolDim& d = g[a];
    q[a] = (d.in + d.s - 1) / d.s;
    for (int64_t i = 0; i < d.k; ++i) {
      int64_t o = i * d.d - d.p;
      int64_t res = ((o % d.s) + d.s) % d.s;
      residue_of[a].push_back(res);
      shift_of[a].push_back((o - res) / d.s);
    }
  }
  std::vector<int64_t> phase_dims = in_dims;
  phase_dims[r - 2] = q[0];
  phase_dims[r - 1] = q[1];
  std::vector<int64_t> cell_dims(in_dims.begin(), in_dims.end() - 2);
  for (int64_t v : {q[0], int64_t{1}, q[1], int64_t{1}}) cell_dims.push_back(v);
  std::vector<Value> rows;
  for (int64_t rh = 0; rh < g[0].s; ++rh) {
    std::vector<Value> cells;
    for (int64_t rw = 0; rw < g[1].s; ++rw) {
      Value phase;
      bool any = false;
      for (int64_t i = 0; i < g[0].k; ++i) {
        if (residue_of[0][i] != rh) continue;
        for (int64_t j = 0; j < g[1].k; ++j) {
          if (residue_of[1][j] != rw) continue;
          std::vector<int64_t> low(r, 0), high(r, 0), interior(r, 0);
          low[r - 2] = shift_of[0][i];
          high[r - 2] = q[0] - g[0].out - shift_of[0][i];
          low[r - 1] = shift_of[1][j];
          high[r - 1] = q[1] - g[1].out - shift_of[1][j];
          Value placed = ir::Pad(contribs[i * g[1].k + j], Full(0, type, {}), low, high, interior);
          phase = any ? Add(phase, placed) : placed;
          any = true;
        }
      }
      if (!any) phase = Full(0, type, phase_dims);
      cells.push_back(ir::Reshape(phase, cell_dims));
    }
    rows.push_back(ir::Concatenate(cells, r + 1));
  }
  Value grid = ir::Concatenate(rows, r - 1);  // [.., qh, sh, qw, sw]
  std::vector<int64_t> flat = in_dims;
  flat[r - 2] = q[0] * g[0].s;
  flat[r - 1] = q[1] * g[1].s;
  Value full = ir::Reshape(grid, flat);
  std::vector<int64_t> start(r, 0), strides(r, 1);
  return ir::Slice(full, start, in_dims, strides);
}

// Per output position of one dimension, the first input position of its window
// ([out], s64): oh*s - p (may be negative).
Value WindowStart(const PoolDim& d) {
  Value o = ir::Iota(ir::Shape(ElementType::kS64, {d.out}), 0);
  return Sub(Mul(o, Full(static_cast<double>(d.s), ElementType::kS64, {d.out})),
             Full(static_cast<double>(d.p), ElementType::kS64, {d.out}));
}

// The flat index (h*W + w) of window offset (i, j) for every output position, [oh, ow].
Value OffsetIndex(const std::array<PoolDim, 2>& g, int64_t i, int64_t j) {
  std::vector<int64_t> od = {g[0].out, g[1].out};
  Value h = Add(WindowStart(g[0]), Full(static_cast<double>(i * g[0].d), ElementType::kS64, {g[0].out}));
  Value w = Add(WindowStart(g[1]), Full(static_cast<double>(j * g[1].d), ElementType::kS64, {g[1].out}));
  Value hw = Mul(ir::BroadcastInDim(h, od, {0}), Full(static_cast<double>(g[1].in), ElementType::kS64, od));
  return Add(hw, ir::BroadcastInDim(w, od, {1}));
}

// The flat index of the first in-bounds element of each window, [oh, ow].
Value FirstValidIndex(const std::array<PoolDim, 2>& g) {
  std::vector<int64_t> od = {g[0].out, g[1].out};
  Value first[2];
  for (int64_t a = 0; a < 2; ++a) {
    const PoolDim& d = g[a];
    std::vector<int64_t> n = {d.out};
    Value start = WindowStart(d);
    // start + d * ceil(max(0, -start) / d)
    Value before = ir::Binary(ir::op::kMaximum, ir::Unary(ir::op::kNegate, start), Full(0, ElementType::kS64, n));
    Value steps = Div(Add(before, Full(static_cast<double>(d.d - 1), ElementType::kS64, n)),
                      Full(static_cast<double>(d.d), ElementType::kS64, n));
    first[a] = Add(start, Mul(steps, Full(static_cast<double>(d.d), ElementType::kS64, n)));
  }
  Value hw = Mul(ir::BroadcastInDim(first[0], od, {0}), Full(static_cast<double>(g[1].in), ElementType::kS64, od));
  return Add(hw, ir::BroadcastInDim(first[1], od, {1}));
}

double Lowest(ElementType t) {
  if (runtime::IsFloating(t)) return -std::numeric_limits<double>::infinity();
  if (runtime::IsUnsigned(t)) return 0;
  return -std::ldexp(1.0, static_cast<int>(runtime::ElementSize(t) * 8 - 1));
}

// avg_pool's divisor per output position, [oh, ow] in `type`.
Value AvgDivisor(const std::array<PoolDim, 2>& g, bool count_include_pad, std::optional<int64_t> divisor_override,
                 ElementType type) {
  std::vector<int64_t> od = {g[0].out, g[1].out};
  if (divisor_override) return Full(static_cast<double>(*divisor_override), type, od);
  Value count[2];
  for (int64_t a = 0; a < 2; ++a) {
    const PoolDim& d = g[a];
    std::vector<int64_t> n = {d.out};
    auto c = [&](int64_t v) { return Full(static_cast<double>(v), ElementType::kS64, n); };
    Value start = WindowStart(d);
    Value end = ir::Binary(ir::op::kMinimum, Add(start, c(d.k)), c(d.in + d.p));
    if (count_include_pad) {
      count[a] = Sub(end, start);
    } else {
      Value s = ir::Binary(ir::op::kMaximum, start, c(0));
      Value e = ir::Binary(ir::op::kMinimum, end, c(d.in));
      count[a] = Sub(e, s);
    }
  }
  Value prod = Mul(ir::BroadcastInDim(count[0], od, {0}), ir::BroadcastInDim(count[1], od, {1}));
  return ir::Convert(prod, type);
}

void CheckAvgArgs(const char* op, std::optional<int64_t> divisor_override) {
  TORCH_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor must be not zero");
}

// ---------------------------------------------------------------------------------
// adaptive average pooling and interpolation matrices ([out, in], type `type`)

// Row o averages inputs [floor(o*in/out), ceil((o+1)*in/out)).
Value AdaptiveMatrix(int64_t in, int64_t out, ElementType type) {
  std::vector<int64_t> md = {out, in};
  auto c = [&](int64_t v) { return Full(static_cast<double>(v), ElementType::kS64, md); };
  Value o = ir::Iota(ir::Shape(ElementType::kS64, md), 0);
  Value i = ir::Iota(ir::Shape(ElementType::kS64, md), 1);
  Value start = Div(Mul(o, c(in)), c(out));
  Value end = Div(Add(Mul(Add(o, c(1)), c(in)), c(out - 1)), c(out));
  Value inside = ir::Binary(ir::op::kAnd, Cmp(CompareDirection::kGe, i, start), Cmp(CompareDirection::kLt, i, end));
  Value weight = Div(Full(1, type, md), ir::Convert(Sub(end, start), type));
  return ir::Select(inside, weight, Full(0, type, md));
}

// out[.., oh, ow] = sum_h sum_w A_h[oh, h] x[.., h, w] A_w[ow, w]
Value ApplySeparable(const Value& x, const Value& a_h, const Value& a_w) {
  int64_t r = x.shape().rank();
  ElementType t = x.shape().type;
  Value u = ir::DotGeneral(x, a_w, {}, {}, {r - 1}, {1}, t);   // [.., H, ow]
  Value v = ir::DotGeneral(u, a_h, {}, {}, {r - 2}, {1}, t);   // [.., ow, oh]
  return SwapLastTwo(v);
}

// The transpose of ApplySeparable: in[.., h, w] = sum A_h[oh, h] g[.., oh, ow] A_w[ow, w]
Value ApplySeparableTransposed(const Value& g, const Value& a_h, const Value& a_w) {
  int64_t r = g.shape().rank();
  ElementType t = g.shape().type;
  Value u = ir::DotGeneral(g, a_w, {}, {}, {r - 1}, {0}, t);   // [.., oh, W]
  Value v = ir::DotGeneral(u, a_h, {}, {}, {r - 2}, {0}, t);   // [.., W, H]
  return SwapLastTwo(v);
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

// PyTorch's nearest_idx, computed on the host: the source index of each output index.
std::vector<int64_t> NearestSource(int64_t in, int64_t out, std::optional<double> scale) {
  std::vector<int64_t> src(out);
  float ratio = (scale.has_value() && *scale > 0) ? static_cast<float>(1.0 / *scale)
                                                  : static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    if (out == in) src[o] = o;
    else if (out == 2 * in) src[o] = o >> 1;
    else src[o] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * ratio)), in - 1);
  }
  return src;
}

// One-hot [out, in] mask of nearest_idx computed in the graph (the same f32 arithmetic).
Value NearestMask(int64_t in, int64_t out, std::optional<double> scale) {
  std::vector<int64_t> md = {out, in};
  Value o = ir::Iota(ir::Shape(ElementType::kS64, md), 0);
  Value i = ir::Iota(ir::Shape(ElementType::kS64, md), 1);
  Value src;
  if (out == in) {
    src = o;
  } else if (out == 2 * in) {
    src = Div(o, Full(2, ElementType::kS64, md));
  } else {
    float ratio = (scale.has_value() && *scale > 0) ? static_cast<float>(1.0 / *scale)
                                                    : static_cast<float>(in) / static_cast<float>(out);
    Value prod = Mul(ir::Convert(o, ElementType::kF32), Full(ratio, ElementType::kF32, md));
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

// Nearest resampling of dimension `dim` from in to out.
Value NearestAlong(const Value& x, int64_t dim, int64_t out, std::optional<double> scale) {
  const std::vector<int64_t>& dims = x.shape().dims;
  int64_t in = dims[dim];
  int64_t r = x.shape().rank();
  std::vector<int64_t> src = NearestSource(in, out, scale);
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
  Value mask = ir::BroadcastInDim(NearestMask(in, out, scale), wide, {dim, dim + 1});
  Value picked = ir::Select(mask, xb, Full(0, x.shape().type, wide));
  return ir::Reduce(ReduceKind::kSum, picked, {dim + 1});
}

// The gradient of NearestAlong: g's dimension `dim` (size out) summed back onto in.
Value NearestAlongBackward(const Value& g, int64_t dim, int64_t in, std::optional<double> scale) {
  const std::vector<int64_t>& dims = g.shape().dims;
  int64_t out = dims[dim];
  int64_t r = g.shape().rank();
  std::vector<int64_t> src = NearestSource(in, out, scale);
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
  Value mask = ir::BroadcastInDim(ir::Transpose(NearestMask(in, out, scale), {1, 0}), wide, {dim, dim + 1});
  Value picked = ir::Select(mask, gb, Full(0, g.shape().type, wide));
  return ir::Reduce(ReduceKind::kSum, picked, {dim + 1});
}

// out[.., o, ..] = sum_i (mask[o, i] ? x[.., i, ..] : 0) along dimension `dim`: a gather
// by a one-hot [out, in] mask, exact for every type (one term per row).
Value SelectSum(const Value& x, int64_t dim, const Value& mask) {
  const std::vector<int64_t>& dims = x.shape().dims;
  int64_t out = mask.shape().dims[0];
  std::vector<int64_t> wide, xdims;
  for (int64_t a = 0; a < x.shape().rank(); ++a) {
    if (a == dim) wide.push_back(out);
    xdims.push_back(static_cast<int64_t>(wide.size()));
    wide.push_back(dims[a]);
  }
  Value picked = ir::Select(ir::BroadcastInDim(mask, wide, {dim, dim + 1}), ir::BroadcastInDim(x, wide, xdims),
                            Full(0, x.shape().type, wide));
  return ir::Reduce(ReduceKind::kSum, picked, {dim + 1});
}

// The transpose of SelectSum: g's dimension `dim` (size out) summed back onto in.
Value SelectSumTransposed(const Value& g, int64_t dim, const Value& mask) {
  return SelectSum(g, dim, ir::Transpose(mask, {1, 0}));
}

// Adaptive pooling windows of one dimension: [start, end) per output index.
struct AdaptiveDim {
  int64_t in, out, kmax;
  Value start, end;  // [out], s64
};

AdaptiveDim AdaptiveWindows(int64_t in, int64_t out) {
  AdaptiveDim a{in, out, 0, {}, {}};
  for (int64_t o = 0; o < out; ++o) {
    int64_t s = (o * in) / out, e = ((o + 1) * in + out - 1) / out;
    a.kmax = std::max(a.kmax, e - s);
  }
  std::vector<int64_t> n = {out};
  auto c = [&](int64_t v) { return Full(static_cast<double>(v), ElementType::kS64, n); };
  Value o = ir::Iota(ir::Shape(ElementType::kS64, n), 0);
  a.start = Div(Mul(o, c(in)), c(out));
  a.end = Div(Add(Mul(Add(o, c(1)), c(in)), c(out - 1)), c(out));
  return a;
}

// Position start + i of each window ([out], s64) and whether it lies inside the window.
std::pair<Value, Value> AdaptiveOffset(const AdaptiveDim& a, int64_t i) {
  std::vector<int64_t> n = {a.out};
  Value pos = Add(a.start, Full(static_cast<double>(i), ElementType::kS64, n));
  return {pos, Cmp(CompareDirection::kLt, pos, a.end)};
}

// One-hot [out, in] mask of positions `pos` ([out]) where `valid`.
Value PositionMask(const Value& pos, const Value& valid, int64_t in) {
  int64_t out = pos.shape().dims[0];
  std::vector<int64_t> md = {out, in};
  Value col = ir::Iota(ir::Shape(ElementType::kS64, md), 1);
  Value hit = Cmp(CompareDirection::kEq, col, ir::BroadcastInDim(pos, md, {0}));
  return ir::Binary(ir::op::kAnd, hit, ir::BroadcastInDim(valid, md, {0}));
}

void CheckUpsample(const char* op, at::IntArrayRef input_size, at::IntArrayRef output_size) {
  TORCH_CHECK(output_size.size() == 2, op, ": It is expected output_size equals to 2, but got size ",
              output_size.size());
  TORCH_CHECK(input_size.size() == 4, op, ": It is expected input_size equals to 4, but got size ",
              input_size.size());
  TORCH_CHECK(input_size[2] > 0 && input_size[3] > 0 && output_size[0] > 0 && output_size[1] > 0, op,
              ": Input and output sizes should be greater than 0, but got input (H: ", input_size[2], ", W: ",
              input_size[3], ") output (H: ", output_size[0], ", W: ", output_size[1], ")");
}

void CheckUpsampleGrad(const char* op, const at::Tensor& grad_output, at::IntArrayRef output_size,
                       at::IntArrayRef input_size) {
  CheckUpsample(op, input_size, output_size);
  std::vector<int64_t> expected = {input_size[0], input_size[1], output_size[0], output_size[1]};
  TORCH_CHECK(grad_output.sizes().vec() == expected, op, ": Expected grad_output to have the size ",
              ListString(expected), ", but got ", DescribeTensor(grad_output));
  TORCH_CHECK(at::isFloatingType(grad_output.scalar_type()), op, ": expected a floating point grad_output, got ",
              DescribeTensor(grad_output));
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::max_pool2d_with_indices(const at::Tensor& self,
                                                                               at::IntArrayRef kernel_size,
                                                                               at::IntArrayRef stride,
                                                                               at::IntArrayRef padding,
                                                                               at::IntArrayRef dilation,
                                                                               bool ceil_mode) {
  XLA_COUNT("max_pool2d_with_indices");
  const char* op = "max_pool2d";
  TORCH_CHECK(self.scalar_type() != at::kBool && !at::isComplexType(self.scalar_type()), op,
              ": unsupported input dtype, got ", DescribeTensor(self));
  auto g = PoolGeometry(op, self, kernel_size, stride, padding, dilation, ceil_mode);
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  bool floating = runtime::IsFloating(type);
  return Checked(op, [&] {
    std::vector<int64_t> od = OutDims(x->shape().dims, g);
    Value padded = PadForWindows(x->GetIrValue(), g, Lowest(type));
    Value best = Full(Lowest(type), type, od);
    Value best_index = ToLastTwo(FirstValidIndex(g), od);
    for (int64_t i = 0; i < g[0].k; ++i) {
      for (int64_t j = 0; j < g[1].k; ++j) {
        Value v = WindowSlice(padded, g, i, j);
        Value take = Cmp(CompareDirection::kGt, v, best);
        if (floating) take = ir::Binary(ir::op::kOr, take, Cmp(CompareDirection::kNe, v, v));
        best = ir::Select(take, v, best);
        best_index = ir::Select(take, ToLastTwo(OffsetIndex(g, i, j), od), best_index);
      }
    }
    // Otherwise XLA fuses the whole running-argmax chain into every consumer of the
    // indices and recomputes it once per use (kH*kW times in the backward).
    if (g[0].k * g[1].k > 1) best_index = ir::Materialize(best_index);
    return std::make_tuple(AtenFromIr(best, x->device()), AtenFromIr(best_index, x->device()));
  });
}

at::Tensor XLANativeFunctions::max_pool2d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                                at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                                at::IntArrayRef padding, at::IntArrayRef dilation,
                                                                bool ceil_mode, const at::Tensor& indices) {
  XLA_COUNT("max_pool2d_with_indices_backward");
  const char* op = "max_pool2d_with_indices_backward";
  auto g = PoolGeometry(op, self, kernel_size, stride, padding, dilation, ceil_mode);
  std::vector<int64_t> od = self.sizes().vec();
  od[od.size() - 2] = g[0].out;
  od[od.size() - 1] = g[1].out;
  TORCH_CHECK(grad_output.sizes().vec() == od && indices.sizes().vec() == od, op, ": expected grad_output and indices of size ",
              ListString(od), " for input ", DescribeTensor(self), ", got grad_output ", DescribeTensor(grad_output),
              " and indices ", DescribeTensor(indices));
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": expected indices of dtype Long, got ", DescribeTensor(indices));
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && at::isFloatingType(self.scalar_type()), op,
              ": expected floating point grad_output and input of the same dtype, got ", DescribeTensor(grad_output),
              " and ", DescribeTensor(self));
  int device = CommonDevice({&grad_output, &self, &indices}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  Value idx = GetXlaTensor(indices, op)->GetIrValue();
  return AtenFromIr(Checked(op, [&] {
                      // Read once per window position: computed once (XLA would fuse the
                      // gradient's computation, batch norm's backward say, into each).
                      if (g[0].k * g[1].k > 1) dy = ir::Materialize(dy);
                      Value zero = Full(0, acc, od);
                      std::vector<Value> contribs;
                      for (int64_t i = 0; i < g[0].k; ++i) {
                        for (int64_t j = 0; j < g[1].k; ++j) {
                          Value hit = Cmp(CompareDirection::kEq, idx, ToLastTwo(OffsetIndex(g, i, j), od));
                          contribs.push_back(ir::Select(hit, dy, zero));
                        }
                      }
                      return ir::Convert(ScatterWindows(contribs, g, self.sizes().vec()), type);
                    }),
                    device);
}

at::Tensor XLANativeFunctions::avg_pool2d(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                          at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                          std::optional<int64_t> divisor_override) {
  XLA_COUNT("avg_pool2d");
  const char* op = "avg_pool2d";
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kLong, op,
              ": \"avg_pool2d\" not implemented for '", self.scalar_type(), "' (input ", DescribeTensor(self), ")");
  CheckAvgArgs(op, divisor_override);
  auto g = PoolGeometry(op, self, kernel_size, stride, padding, {1}, ceil_mode);
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  ElementType acc = runtime::IsFloating(type) ? AccumulationType(type) : ElementType::kS64;
  return AtenFromIr(Checked(op, [&] {
                      std::vector<int64_t> od = OutDims(x->shape().dims, g);
                      Value padded = PadForWindows(ir::Convert(x->GetIrValue(), acc), g, 0);
                      Value sum = Full(0, acc, od);
                      for (int64_t i = 0; i < g[0].k; ++i)
                        for (int64_t j = 0; j < g[1].k; ++j) sum = Add(sum, WindowSlice(padded, g, i, j));
                      Value div = ToLastTwo(AvgDivisor(g, count_include_pad, divisor_override, acc), od);
                      return ir::Convert(Div(sum, div), type);
                    }),
                    x->device());
}

at::Tensor XLANativeFunctions::avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                   at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                   at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                                   std::optional<int64_t> divisor_override) {
  XLA_COUNT("avg_pool2d_backward");
  const char* op = "avg_pool2d_backward";
  CheckAvgArgs(op, divisor_override);
  auto g = PoolGeometry(op, self, kernel_size, stride, padding, {1}, ceil_mode);
  std::vector<int64_t> od = self.sizes().vec();
  od[od.size() - 2] = g[0].out;
  od[od.size() - 1] = g[1].out;
  TORCH_CHECK(grad_output.sizes().vec() == od, op, ": expected grad_output of size ", ListString(od), " for input ",
              DescribeTensor(self), ", got ", DescribeTensor(grad_output));
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && at::isFloatingType(self.scalar_type()), op,
              ": expected floating point grad_output and input of the same dtype, got ", DescribeTensor(grad_output),
              " and ", DescribeTensor(self));
  int device = CommonDevice({&grad_output, &self}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  return AtenFromIr(Checked(op, [&] {
                      Value scaled = Div(dy, ToLastTwo(AvgDivisor(g, count_include_pad, divisor_override, acc), od));
                      std::vector<Value> contribs(g[0].k * g[1].k, scaled);
                      return ir::Convert(ScatterWindows(contribs, g, self.sizes().vec()), type);
                    }),
                    device);
}

at::Tensor XLANativeFunctions::_adaptive_avg_pool2d(const at::Tensor& self, at::IntArrayRef output_size) {
  XLA_COUNT("_adaptive_avg_pool2d");
  const char* op = "adaptive_avg_pool2d";
  TORCH_CHECK(output_size.size() == 2, op, ": output_size must be 2, got ", ListString(output_size));
  TORCH_CHECK(output_size[0] >= 0 && output_size[1] >= 0, op,
              ": elements of output_size must be greater than or equal to 0 but received ", ListString(output_size));
  CheckPoolInput(op, self);
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(self));
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  ElementType acc = AccumulationType(type);
  int64_t h = self.size(-2), w = self.size(-1);
  return AtenFromIr(Checked(op, [&] {
                      Value a_h = AdaptiveMatrix(h, output_size[0], acc);
                      Value a_w = AdaptiveMatrix(w, output_size[1], acc);
                      return ir::Convert(ApplySeparable(ir::Convert(x->GetIrValue(), acc), a_h, a_w), type);
                    }),
                    x->device());
}

at::Tensor XLANativeFunctions::_adaptive_avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  XLA_COUNT("_adaptive_avg_pool2d_backward");
  const char* op = "adaptive_avg_pool2d_backward";
  CheckPoolInput(op, self);
  TORCH_CHECK(grad_output.dim() == self.dim(), op, ": expected grad_output of ", self.dim(), " dimensions, got ",
              DescribeTensor(grad_output), " for input ", DescribeTensor(self));
  for (int64_t i = 0; i < self.dim() - 2; ++i)
    TORCH_CHECK(grad_output.size(i) == self.size(i), op, ": grad_output ", DescribeTensor(grad_output),
                " does not match input ", DescribeTensor(self), " outside the last two dimensions");
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && at::isFloatingType(self.scalar_type()), op,
              ": expected floating point grad_output and input of the same dtype, got ", DescribeTensor(grad_output),
              " and ", DescribeTensor(self));
  int device = CommonDevice({&grad_output, &self}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  return AtenFromIr(Checked(op, [&] {
                      Value a_h = AdaptiveMatrix(self.size(-2), grad_output.size(-2), acc);
                      Value a_w = AdaptiveMatrix(self.size(-1), grad_output.size(-1), acc);
                      return ir::Convert(ApplySeparableTransposed(dy, a_h, a_w), type);
                    }),
                    device);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::adaptive_max_pool2d(const at::Tensor& self,
                                                                           at::IntArrayRef output_size) {
  XLA_COUNT("adaptive_max_pool2d");
  const char* op = "adaptive_max_pool2d";
  TORCH_CHECK(output_size.size() == 2, op, ": internal error: output_size.size() must be 2, got ",
              ListString(output_size));
  CheckPoolInput(op, self);
  TORCH_CHECK(output_size[0] > 0 && output_size[1] > 0, op, ": elements of output_size must be greater than 0, got ",
              ListString(output_size));
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": \"adaptive_max_pool2d\" not implemented for '",
              self.scalar_type(), "' (input ", DescribeTensor(self), ")");
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  int64_t r = self.dim();
  AdaptiveDim ah = AdaptiveWindows(self.size(-2), output_size[0]);
  AdaptiveDim aw = AdaptiveWindows(self.size(-1), output_size[1]);
  return Checked(op, [&] {
    std::vector<int64_t> od = x->shape().dims;
    od[r - 2] = ah.out;
    od[r - 1] = aw.out;
    std::vector<int64_t> od2 = {ah.out, aw.out};
    auto grid = [&](const Value& h, const Value& w) {  // [oh] x [ow] -> flat h*W + w, [oh, ow]
      Value hh = Mul(ir::BroadcastInDim(h, od2, {0}), Full(static_cast<double>(aw.in), ElementType::kS64, od2));
      return Add(hh, ir::BroadcastInDim(w, od2, {1}));
    };
    Value best = Full(-std::numeric_limits<double>::infinity(), type, od);
    Value best_index = ToLastTwo(grid(ah.start, aw.start), od);
    for (int64_t i = 0; i < ah.kmax; ++i) {
      auto [hpos, hvalid] = AdaptiveOffset(ah, i);
      Value rows = SelectSum(x->GetIrValue(), r - 2, PositionMask(hpos, hvalid, ah.in));  // [.., oh, W]
      for (int64_t j = 0; j < aw.kmax; ++j) {
        auto [wpos, wvalid] = AdaptiveOffset(aw, j);
        Value v = SelectSum(rows, r - 1, PositionMask(wpos, wvalid, aw.in));  // [.., oh, ow]
        Value valid = ir::Binary(ir::op::kAnd, ir::BroadcastInDim(hvalid, od2, {0}), ir::BroadcastInDim(wvalid, od2, {1}));
        valid = ToLastTwo(valid, od);
        Value take = ir::Binary(ir::op::kOr, Cmp(CompareDirection::kGt, v, best), Cmp(CompareDirection::kNe, v, v));
        take = ir::Binary(ir::op::kAnd, take, valid);
        best = ir::Select(take, v, best);
        best_index = ir::Select(take, ToLastTwo(grid(hpos, wpos), od), best_index);
      }
    }
    if (ah.kmax * aw.kmax > 1) best_index = ir::Materialize(best_index);
    return std::make_tuple(AtenFromIr(best, x->device()), AtenFromIr(best_index, x->device()));
  });
}

at::Tensor XLANativeFunctions::adaptive_max_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                            const at::Tensor& indices) {
  XLA_COUNT("adaptive_max_pool2d_backward");
  const char* op = "adaptive_max_pool2d_backward";
  CheckPoolInput(op, self);
  TORCH_CHECK(grad_output.dim() == self.dim() && grad_output.sizes() == indices.sizes(), op,
              ": expected grad_output and indices of the same size with the input's rank, got grad_output ",
              DescribeTensor(grad_output), ", indices ", DescribeTensor(indices), " for input ", DescribeTensor(self));
  for (int64_t i = 0; i < self.dim() - 2; ++i)
    TORCH_CHECK(grad_output.size(i) == self.size(i), op, ": grad_output ", DescribeTensor(grad_output),
                " does not match input ", DescribeTensor(self), " outside the last two dimensions");
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": expected indices of dtype Long, got ", DescribeTensor(indices));
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && at::isFloatingType(self.scalar_type()), op,
              ": expected floating point grad_output and input of the same dtype, got ", DescribeTensor(grad_output),
              " and ", DescribeTensor(self));
  int device = CommonDevice({&grad_output, &self, &indices}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  int64_t r = self.dim();
  AdaptiveDim ah = AdaptiveWindows(self.size(-2), grad_output.size(-2));
  AdaptiveDim aw = AdaptiveWindows(self.size(-1), grad_output.size(-1));
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  Value idx = GetXlaTensor(indices, op)->GetIrValue();
  return AtenFromIr(Checked(op, [&] {
                      std::vector<int64_t> od = dy.shape().dims;
                      std::vector<int64_t> od2 = {ah.out, aw.out};
                      Value zero = Full(0, acc, od);
                      Value sum;
                      for (int64_t i = 0; i < ah.kmax; ++i) {
                        auto [hpos, hvalid] = AdaptiveOffset(ah, i);
                        Value row_sum;
                        for (int64_t j = 0; j < aw.kmax; ++j) {
                          auto [wpos, wvalid] = AdaptiveOffset(aw, j);
                          Value flat = Add(Mul(ir::BroadcastInDim(hpos, od2, {0}),
                                               Full(static_cast<double>(aw.in), ElementType::kS64, od2)),
                                           ir::BroadcastInDim(wpos, od2, {1}));
                          Value valid = ir::Binary(ir::op::kAnd, ir::BroadcastInDim(hvalid, od2, {0}),
                                                   ir::BroadcastInDim(wvalid, od2, {1}));
                          Value hit = ir::Binary(ir::op::kAnd, Cmp(CompareDirection::kEq, idx, ToLastTwo(flat, od)),
                                                 ToLastTwo(valid, od));
                          Value cols = SelectSumTransposed(ir::Select(hit, dy, zero), r - 1,
                                                           PositionMask(wpos, wvalid, aw.in));  // [.., oh, W]
                          row_sum = row_sum ? Add(row_sum, cols) : cols;
                        }
                        Value back = SelectSumTransposed(row_sum, r - 2, PositionMask(hpos, hvalid, ah.in));
                        sum = sum ? Add(sum, back) : back;
                      }
                      return ir::Convert(sum, type);
                    }),
                    device);
}

at::Tensor XLANativeFunctions::upsample_nearest2d(const at::Tensor& self, at::IntArrayRef output_size,
                                                  std::optional<double> scales_h, std::optional<double> scales_w) {
  XLA_COUNT("upsample_nearest2d");
  const char* op = "upsample_nearest2d";
  TORCH_CHECK(self.dim() == 4, op, ": expected a 4-D input [N, C, H, W], got ", DescribeTensor(self));
  CheckUpsample(op, self.sizes(), output_size);
  TORCH_CHECK(self.scalar_type() != at::kBool && !at::isComplexType(self.scalar_type()), op,
              ": unsupported input dtype, got ", DescribeTensor(self));
  XlaTensorPtr x = GetXlaTensor(self, op);
  return AtenFromIr(Checked(op, [&] {
                      Value v = NearestAlong(x->GetIrValue(), 2, output_size[0], scales_h);
                      return NearestAlong(v, 3, output_size[1], scales_w);
                    }),
                    x->device());
}

at::Tensor XLANativeFunctions::upsample_nearest2d_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
                                                           at::IntArrayRef input_size, std::optional<double> scales_h,
                                                           std::optional<double> scales_w) {
  XLA_COUNT("upsample_nearest2d_backward");
  const char* op = "upsample_nearest2d_backward";
  CheckUpsampleGrad(op, grad_output, output_size, input_size);
  XlaTensorPtr g = GetXlaTensor(grad_output, op);
  ElementType type = g->shape().type;
  return AtenFromIr(Checked(op, [&] {
                      Value v = ir::Convert(g->GetIrValue(), AccumulationType(type));
                      v = NearestAlongBackward(v, 2, input_size[2], scales_h);
                      v = NearestAlongBackward(v, 3, input_size[3], scales_w);
                      return ir::Convert(v, type);
                    }),
                    g->device());
}

at::Tensor XLANativeFunctions::upsample_bilinear2d(const at::Tensor& self, at::IntArrayRef output_size,
                                                   bool align_corners, std::optional<double> scales_h,
                                                   std::optional<double> scales_w) {
  XLA_COUNT("upsample_bilinear2d");
  const char* op = "upsample_bilinear2d";
  TORCH_CHECK(self.dim() == 4, op, ": expected a 4-D input [N, C, H, W], got ", DescribeTensor(self));
  CheckUpsample(op, self.sizes(), output_size);
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(self));
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  ElementType acc = AccumulationType(type);
  return AtenFromIr(Checked(op, [&] {
                      Value a_h = LinearMatrix(self.size(2), output_size[0], align_corners, scales_h, acc, type);
                      Value a_w = LinearMatrix(self.size(3), output_size[1], align_corners, scales_w, acc, type);
                      return ir::Convert(ApplySeparable(ir::Convert(x->GetIrValue(), acc), a_h, a_w), type);
                    }),
                    x->device());
}

at::Tensor XLANativeFunctions::upsample_bilinear2d_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
                                                            at::IntArrayRef input_size, bool align_corners,
                                                            std::optional<double> scales_h,
                                                            std::optional<double> scales_w) {
  XLA_COUNT("upsample_bilinear2d_backward");
  const char* op = "upsample_bilinear2d_backward";
  CheckUpsampleGrad(op, grad_output, output_size, input_size);
  XlaTensorPtr g = GetXlaTensor(grad_output, op);
  ElementType type = g->shape().type;
  ElementType acc = AccumulationType(type);
  return AtenFromIr(Checked(op, [&] {
                      Value a_h = LinearMatrix(input_size[2], output_size[0], align_corners, scales_h, acc, type);
                      Value a_w = LinearMatrix(input_size[3], output_size[1], align_corners, scales_w, acc, type);
                      return ir::Convert(ApplySeparableTransposed(ir::Convert(g->GetIrValue(), acc), a_h, a_w), type);
                    }),
                    g->device());
}

// ---------------------------------------------------------------------------------
// im2col / col2im

namespace {

// The sliding-block geometry of unfold/fold over an [H, W] image, with PyTorch's checks.
std::array<PoolDim, 2> BlockGeometry(const char* op, int64_t height, int64_t width, at::IntArrayRef kernel_size,
                                     at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  for (auto [name, v] : {std::pair<const char*, at::IntArrayRef>{"kernel_size", kernel_size}, {"dilation", dilation},
                         {"padding", padding}, {"stride", stride}})
    TORCH_CHECK(v.size() == 2, op, ": It is expected ", name, " equals to 2, but got size ", v.size());
  TORCH_CHECK(kernel_size[0] > 0 && kernel_size[1] > 0, op,
              ": kernel size should be greater than zero, but got kernel_size=", ListString(kernel_size));
  TORCH_CHECK(dilation[0] > 0 && dilation[1] > 0, op, ": dilation should be greater than zero, but got dilation=",
              ListString(dilation));
  TORCH_CHECK(padding[0] >= 0 && padding[1] >= 0, op, ": padding should be non-negative, but got padding=",
              ListString(padding));
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0, op, ": stride should be greater than zero, but got stride=",
              ListString(stride));
  std::array<PoolDim, 2> g;
  int64_t size[2] = {height, width};
  for (int64_t a = 0; a < 2; ++a) {
    PoolDim& d = g[a];
    d = PoolDim{size[a], kernel_size[a], stride[a], padding[a], dilation[a], 0};
    int64_t span = d.in + 2 * d.p - (d.d * (d.k - 1) + 1);
    d.out = span >= 0 ? span / d.s + 1 : 0;
  }
  TORCH_CHECK(g[0].out >= 1 && g[1].out >= 1, op, ": Given input with spatial size (", height, ", ", width,
              "), kernel_size=", ListString(kernel_size), ", dilation=", ListString(dilation), ", padding=",
              ListString(padding), ", calculated shape of the array of sliding blocks as (", g[0].out, ", ",
              g[1].out, "), but its components must be at least one.");
  return g;
}

}  // namespace

at::Tensor XLANativeFunctions::im2col(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef dilation,
                                      at::IntArrayRef padding, at::IntArrayRef stride) {
  XLA_COUNT("im2col");
  const char* op = "im2col";
  TORCH_CHECK((self.dim() == 3 || self.dim() == 4) && self.numel() > 0, op,
              ": Expected non-empty 3D or 4D input tensor, but got ", DescribeTensor(self));
  // PyTorch's CPU kernel takes floating types and bool only
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kBool,
                              "\"im2col\" not implemented for '", self.scalar_type(), "'");
  auto g = BlockGeometry(op, self.size(-2), self.size(-1), kernel_size, dilation, padding, stride);
  XlaTensorPtr x = GetXlaTensor(self, op);
  return AtenFromIr(Checked(op, [&] {
                      std::vector<int64_t> dims = x->shape().dims;
                      int64_t r = static_cast<int64_t>(dims.size());
                      Value padded = PadForWindows(x->GetIrValue(), g, 0);
                      // each offset's [.., C, oh, ow] slice becomes [.., C, 1, oh, ow]
                      std::vector<int64_t> one_offset(dims.begin(), dims.end() - 2);
                      one_offset.insert(one_offset.end(), {1, g[0].out, g[1].out});
                      std::vector<Value> offsets;
                      for (int64_t i = 0; i < g[0].k; ++i)
                        for (int64_t j = 0; j < g[1].k; ++j)
                          offsets.push_back(ir::Reshape(WindowSlice(padded, g, i, j), one_offset));
                      std::vector<int64_t> cols(dims.begin(), dims.end() - 3);
                      cols.insert(cols.end(), {dims[r - 3] * g[0].k * g[1].k, g[0].out * g[1].out});
                      return ir::Reshape(ir::Concatenate(offsets, r - 2), cols);
                    }),
                    x->device());
}

at::Tensor XLANativeFunctions::col2im(const at::Tensor& self, at::IntArrayRef output_size,
                                      at::IntArrayRef kernel_size, at::IntArrayRef dilation, at::IntArrayRef padding,
                                      at::IntArrayRef stride) {
  XLA_COUNT("col2im");
  const char* op = "col2im";
  TORCH_CHECK(output_size.size() == 2, op, ": It is expected output_size equals to 2, but got size ",
              output_size.size());
  TORCH_CHECK(output_size[0] > 0 && output_size[1] > 0, op,
              ": output_size should be greater than zero, but got output_size=", ListString(output_size));
  TORCH_CHECK((self.dim() == 2 || self.dim() == 3) && self.numel() > 0, op,
              ": Expected non-empty 2D or 3D input tensor, but got ", DescribeTensor(self));
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kBool,
                              "\"col2im\" not implemented for '", self.scalar_type(), "'");
  auto g = BlockGeometry(op, output_size[0], output_size[1], kernel_size, dilation, padding, stride);
  int64_t blocks = g[0].k * g[1].k;
  TORCH_CHECK(self.size(-2) % blocks == 0, op, ": Expected size of input's dimension ", self.dim() - 2,
              " to be divisible by the product of kernel_size, but got input.size(", self.dim() - 2, ")=",
              self.size(-2), " and kernel_size=", ListString(kernel_size));
  TORCH_CHECK(self.size(-1) == g[0].out * g[1].out, op, ": Given output_size=", ListString(output_size),
              ", kernel_size=", ListString(kernel_size), ", dilation=", ListString(dilation), ", padding=",
              ListString(padding), ", stride=", ListString(stride), ", expected size of input's dimension ",
              self.dim() - 1, " to match the calculated number of sliding blocks ", g[0].out, " * ", g[1].out, " = ",
              g[0].out * g[1].out, ", but got input.size(", self.dim() - 1, ")=", self.size(-1));
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  // bool blocks sum as integers: an element is true where any block holding it is
  ElementType acc = type == ElementType::kPred ? ElementType::kS32 : AccumulationType(type);
  return AtenFromIr(Checked(op, [&] {
                      std::vector<int64_t> lead(self.sizes().begin(), self.sizes().end() - 2);
                      int64_t channels = self.size(-2) / blocks;
                      // [.., C, kH, kW, oh, ow]: offset (i, j) is a [.., C, oh, ow] slice
                      std::vector<int64_t> split = lead;
                      split.insert(split.end(), {channels, g[0].k, g[1].k, g[0].out, g[1].out});
                      Value cols = ir::Reshape(ir::Convert(x->GetIrValue(), acc), split);
                      int64_t r = static_cast<int64_t>(split.size());
                      std::vector<int64_t> offset_dims = lead;
                      offset_dims.insert(offset_dims.end(), {channels, g[0].out, g[1].out});
                      std::vector<Value> contribs;
                      for (int64_t i = 0; i < g[0].k; ++i) {
                        for (int64_t j = 0; j < g[1].k; ++j) {
                          std::vector<int64_t> start(r, 0), limit = split, strides(r, 1);
                          start[r - 4] = i;
                          limit[r - 4] = i + 1;
                          start[r - 3] = j;
                          limit[r - 3] = j + 1;
                          contribs.push_back(ir::Reshape(ir::Slice(cols, start, limit, strides), offset_dims));
                        }
                      }
                      std::vector<int64_t> image = lead;
                      image.insert(image.end(), {channels, output_size[0], output_size[1]});
                      return ir::Convert(ScatterWindows(contribs, g, image), type);
                    }),
                    x->device());
}

}  // namespace torch_xla
