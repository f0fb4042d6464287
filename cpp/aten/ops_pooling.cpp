// Pooling over the trailing two or three spatial dimensions of [N, C, *] (or [C, *])
// inputs; 1-D pooling reaches us as the 2-D ops. One generic implementation per op,
// parameterized by the spatial rank n; the n-d windows are products of per-dimension
// windows (PoolDim).
//
//   max_pool / avg_pool       for each of the prod(k) window offsets, a strided slice of
//                             the padded input ([.., o1, .., on]); max_pool keeps a
//                             running maximum and its flat index (d*H + h)*W + w (first
//                             maximum wins, a NaN always wins, as in PyTorch's CPU
//                             kernel), avg_pool sums.
//                             On the CPU device, float32 and float64 max_pool and its
//                             backward run host kernels instead
//                             (host/max_pool_kernel.h).
//   their backward            the gradient of each offset (max_pool: masked by indices ==
//                             that offset's index) is scattered back and summed, phase by
//                             phase of the stride (see ScatterWindows): plain pads, no
//                             interior padding, then one interleaving reshape.
//   adaptive avg pool         separable [out, in] weight matrices built from iotas,
//                             applied along each dimension by a dot_general; the
//                             backward applies the transposes.
//   adaptive max pool         for each offset < the largest window, the element at
//                             start + offset of every window, gathered by one-hot
//                             selects dimension by dimension, feeds the same running
//                             argmax; the 2-D backward scatters back through the
//                             transposed selects, the 3-D one by a scatter-add at the
//                             indices.
//   fractional max pool       windows of a fixed size starting at positions drawn from
//                             the `random_samples` operand (per plane), gathered by
//                             one-hot selects like adaptive max pool; the backward is a
//                             scatter-add at the indices.
//   max_unpool3d              a scatter of each value to its flat index in its plane.
//   im2col / col2im           (unfold / fold) the same window offsets: im2col stacks
//                             each offset's strided slice of the padded input as rows
//                             c*kH*kW + i*kW + j; col2im scatters them back and sums
//                             (ScatterWindows). Each is the other's gradient.
// Low-precision floats accumulate in f32.
#include <ATen/ATen.h>

#include <cmath>
#include <functional>
#include <limits>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"
#include "ir/builder_cnn.h"
#include "ir/builder_indexing.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;


Value S64(double v, const std::vector<int64_t>& dims) { return Full(v, ElementType::kS64, dims); }

const char* CountWord(int64_t n) { return n == 2 ? "two" : "three"; }

// The last n entries of `dims`.
std::vector<int64_t> LastN(const std::vector<int64_t>& dims, int64_t n) {
  return std::vector<int64_t>(dims.end() - n, dims.end());
}

// `dims` with its last n entries replaced by `tail`.
std::vector<int64_t> WithLastN(std::vector<int64_t> dims, const std::vector<int64_t>& tail) {
  std::copy(tail.begin(), tail.end(), dims.end() - tail.size());
  return dims;
}

// Broadcasts a value of the spatial output shape to `dims` (its last dimensions).
Value ToLastN(const Value& v, const std::vector<int64_t>& dims) {
  int64_t r = static_cast<int64_t>(dims.size()), n = v.shape().rank();
  std::vector<int64_t> bdims;
  for (int64_t a = 0; a < n; ++a) bdims.push_back(r - n + a);
  return ir::BroadcastInDim(v, dims, bdims);
}

// The offset tuple of row-major flat index `flat` over `sizes`.
std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> t(sizes.size());
  for (int64_t a = static_cast<int64_t>(sizes.size()) - 1; a >= 0; --a) {
    t[a] = flat % sizes[a];
    flat /= sizes[a];
  }
  return t;
}

void CheckPoolInput(const char* op, const at::Tensor& self, int64_t n) {
  TORCH_CHECK(self.dim() == n + 1 || self.dim() == n + 2, op, ": Expected ", n + 1, "D or ", n + 2,
              "D (batch mode) tensor with optional 0 dim batch size for input, but got ", DescribeTensor(self));
  for (int64_t i = self.dim() - n - 1; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, op, ": Expected input's non-batch dimensions to have positive length, but got ",
                DescribeTensor(self));
}

// ---------------------------------------------------------------------------------
// max_pool / avg_pool windows

struct PoolDim {
  int64_t in, k, s, p, d, out;
};
using PoolDims = std::vector<PoolDim>;

int64_t PickDim(at::IntArrayRef v, int64_t i) { return v.size() == 1 ? v[0] : v[i]; }

std::vector<int64_t> OutSizes(const PoolDims& g) {
  std::vector<int64_t> o;
  for (const PoolDim& d : g) o.push_back(d.out);
  return o;
}

// The pooling geometry of the last n dimensions, with PyTorch's checks and messages.
PoolDims PoolGeometry(const char* op, const at::Tensor& self, int64_t n, at::IntArrayRef kernel_size,
                      at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
  CheckPoolInput(op, self, n);
  auto ok = [&](at::IntArrayRef v) { return v.size() == 1 || static_cast<int64_t>(v.size()) == n; };
  TORCH_CHECK(ok(kernel_size), op, ": kernel_size must either be a single int, or a tuple of ", CountWord(n),
              " ints, got ", SizesString(kernel_size));
  TORCH_CHECK(stride.empty() || ok(stride), op, ": stride must either be omitted, a single int, or a tuple of ",
              CountWord(n), " ints, got ", SizesString(stride));
  TORCH_CHECK(ok(padding), op, ": padding must either be a single int, or a tuple of ", CountWord(n), " ints, got ",
              SizesString(padding));
  TORCH_CHECK(ok(dilation), op, ": dilation must be either a single int, or a tuple of ", CountWord(n),
              " ints, got ", SizesString(dilation));
  PoolDims g(n);
  for (int64_t i = 0; i < n; ++i) {
    PoolDim& d = g[i];
    d.in = self.size(self.dim() - n + i);
    d.k = PickDim(kernel_size, i);
    d.s = stride.empty() ? d.k : PickDim(stride, i);
    d.p = PickDim(padding, i);
    d.d = PickDim(dilation, i);
    TORCH_CHECK(d.k > 0, op, ": kernel size should be greater than zero, but got kernel_size=",
                SizesString(kernel_size));
    TORCH_CHECK(d.s > 0, op, ": stride should be greater than zero, but got stride=", SizesString(stride));
    TORCH_CHECK(d.d > 0, op, ": dilation should be greater than zero, but got dilation=", SizesString(dilation));
    TORCH_CHECK(d.p >= 0 && d.p <= d.k / 2, op, ": pad should be at most half of effective kernel size, but got pad=",
                d.p, ", kernel_size=", d.k, " and dilation=", d.d);
    int64_t span = d.in + 2 * d.p - d.d * (d.k - 1) - 1 + (ceil_mode ? d.s - 1 : 0);
    // floor division (span may be negative)
    int64_t q = span >= 0 ? span / d.s : -((-span + d.s - 1) / d.s);
    d.out = q + 1;
    if (ceil_mode && (d.out - 1) * d.s >= d.in + d.p) --d.out;
  }
  bool positive = true;
  for (const PoolDim& d : g) positive = positive && d.out >= 1;
  TORCH_CHECK(positive, op, ": Given input size: ", DescribeTensor(self), ". Calculated output size: ",
              SizesString(OutSizes(g)), ". Output size is too small");
  return g;
}

std::vector<int64_t> OutDims(const std::vector<int64_t>& in, const PoolDims& g) { return WithLastN(in, OutSizes(g)); }

std::vector<int64_t> KernelSizes(const PoolDims& g) {
  std::vector<int64_t> k;
  for (const PoolDim& d : g) k.push_back(d.k);
  return k;
}

// The input padded with `fill` so that every window offset's strided slice fits.
Value PadForWindows(const Value& x, const PoolDims& g, double fill) {
  int64_t r = x.shape().rank(), n = static_cast<int64_t>(g.size());
  std::vector<int64_t> low(r, 0), high(r, 0), interior(r, 0);
  for (int64_t i = 0; i < n; ++i) {
    const PoolDim& d = g[i];
    low[r - n + i] = d.p;
    high[r - n + i] = std::max<int64_t>(0, (d.out - 1) * d.s + d.d * (d.k - 1) + 1 - d.in - d.p);
  }
  return ir::Pad(x, Full(fill, x.shape().type, {}), low, high, interior);
}

// The [.., o1, .., on] elements at window offset `off` of every window.
Value WindowSlice(const Value& padded, const PoolDims& g, const std::vector<int64_t>& off) {
  int64_t r = padded.shape().rank(), n = static_cast<int64_t>(g.size());
  std::vector<int64_t> start(r, 0), limit = padded.shape().dims, strides(r, 1);
  for (int64_t a = 0; a < n; ++a) {
    const PoolDim& d = g[a];
    start[r - n + a] = off[a] * d.d;
    limit[r - n + a] = off[a] * d.d + (d.out - 1) * d.s + 1;
    strides[r - n + a] = d.s;
  }
  return ir::Slice(padded, start, limit, strides);
}

// Scatters the [.., o1, .., on] values of every window offset (contribs, row-major over
// the offsets) back onto the [.., i1, .., in] input and sums them. Input position
// h = (i*d - p) + s*o. Split by phase h mod s: within a phase an offset's values land
// on a contiguous, shifted range, so each phase is a sum of plainly padded (or cropped)
// arrays, and the phases are interleaved by concatenates + one reshape. This touches
// each output element once per offset instead of each input element once per offset.
Value ScatterWindows(const std::vector<Value>& contribs, const PoolDims& g, const std::vector<int64_t>& in_dims) {
  const Value& first = contribs.at(0);
  int64_t r = first.shape().rank(), n = static_cast<int64_t>(g.size()), lead = r - n;
  ElementType type = first.shape().type;
  std::vector<int64_t> q(n);
  std::vector<std::vector<int64_t>> residue_of(n), shift_of(n);
  for (int64_t a = 0; a < n; ++a) {
    const PoolDim& d = g[a];
    q[a] = (d.in + d.s - 1) / d.s;
    for (int64_t i = 0; i < d.k; ++i) {
      int64_t o = i * d.d - d.p;
      int64_t res = ((o % d.s) + d.s) % d.s;
      residue_of[a].push_back(res);
      shift_of[a].push_back((o - res) / d.s);
    }
  }
  std::vector<int64_t> kernel = KernelSizes(g);
  int64_t offsets = Product(kernel);
  std::vector<int64_t> phase_dims = WithLastN(in_dims, q);
  // each phase as [.., q1, 1, .., qn, 1]
  std::vector<int64_t> cell_dims(in_dims.begin(), in_dims.end() - n);
  for (int64_t a = 0; a < n; ++a) cell_dims.insert(cell_dims.end(), {q[a], 1});
  std::vector<int64_t> residue(n);
  // Builds the phases of dimensions a.. for the residues fixed before a, concatenated
  // along their stride axes: [.., q1, 1, .., qa, sa, .., qn, sn].
  std::function<Value(int64_t)> build = [&](int64_t a) -> Value {
    if (a == n) {
      Value phase;
      for (int64_t f = 0; f < offsets; ++f) {
        std::vector<int64_t> off = Unflatten(f, kernel);
        bool match = true;
        for (int64_t b = 0; b < n; ++b) match = match && residue_of[b][off[b]] == residue[b];
        if (!match) continue;
        std::vector<int64_t> low(r, 0), high(r, 0), interior(r, 0);
        for (int64_t b = 0; b < n; ++b) {
          low[lead + b] = shift_of[b][off[b]];
          high[lead + b] = q[b] - g[b].out - shift_of[b][off[b]];
        }
        Value placed = ir::Pad(contribs[f], Full(0, type, {}), low, high, interior);
        phase = phase ? Add(phase, placed) : placed;
      }
      if (!phase) phase = Full(0, type, phase_dims);
      return ir::Reshape(phase, cell_dims);
    }
    std::vector<Value> parts;
    for (int64_t res = 0; res < g[a].s; ++res) {
      residue[a] = res;
      parts.push_back(build(a + 1));
    }
    return parts.size() == 1 ? parts[0] : ir::Concatenate(parts, lead + 2 * a + 1);
  };
  Value grid = build(0);  // [.., q1, s1, .., qn, sn]
  std::vector<int64_t> flat = in_dims;
  for (int64_t a = 0; a < n; ++a) flat[lead + a] = q[a] * g[a].s;
  Value full = ir::Reshape(grid, flat);
  std::vector<int64_t> start(r, 0), strides(r, 1);
  return ir::Slice(full, start, in_dims, strides);
}

// Per output position of one dimension, the first input position of its window
// ([out], s64): o*s - p (may be negative).
Value WindowStart(const PoolDim& d) {
  Value o = ir::Iota(ir::Shape(ElementType::kS64, {d.out}), 0);
  return Sub(Mul(o, S64(static_cast<double>(d.s), {d.out})), S64(static_cast<double>(d.p), {d.out}));
}

// The flat index ((p1 * i2 + p2) * i3 + p3 ..) of per-dimension positions ([o_a] each),
// shaped [o1, .., on].
Value FlatIndex(const std::vector<Value>& pos, const std::vector<int64_t>& in_sizes) {
  std::vector<int64_t> od;
  for (const Value& p : pos) od.push_back(p.shape().dims[0]);
  Value flat;
  for (int64_t a = 0; a < static_cast<int64_t>(pos.size()); ++a) {
    Value p = ir::BroadcastInDim(pos[a], od, {a});
    flat = flat ? Add(Mul(flat, S64(static_cast<double>(in_sizes[a]), od)), p) : p;
  }
  return flat;
}

std::vector<int64_t> InSizes(const PoolDims& g) {
  std::vector<int64_t> s;
  for (const PoolDim& d : g) s.push_back(d.in);
  return s;
}

// The flat index of window offset `off` for every output position, [o1, .., on].
Value OffsetIndex(const PoolDims& g, const std::vector<int64_t>& off) {
  std::vector<Value> pos;
  for (std::size_t a = 0; a < g.size(); ++a)
    pos.push_back(Add(WindowStart(g[a]), S64(static_cast<double>(off[a] * g[a].d), {g[a].out})));
  return FlatIndex(pos, InSizes(g));
}

// The flat index of the first in-bounds element of each window, [o1, .., on].
Value FirstValidIndex(const PoolDims& g) {
  std::vector<Value> first;
  for (const PoolDim& d : g) {
    std::vector<int64_t> n = {d.out};
    Value start = WindowStart(d);
    // start + d * ceil(max(0, -start) / d)
    Value before = ir::Binary(ir::op::kMaximum, ir::Unary(ir::op::kNegate, start), S64(0, n));
    Value steps = Div(Add(before, S64(static_cast<double>(d.d - 1), n)), S64(static_cast<double>(d.d), n));
    first.push_back(Add(start, Mul(steps, S64(static_cast<double>(d.d), n))));
  }
  return FlatIndex(first, InSizes(g));
}

double Lowest(ElementType t) {
  if (runtime::IsFloating(t)) return -std::numeric_limits<double>::infinity();
  if (runtime::IsUnsigned(t)) return 0;
  return -std::ldexp(1.0, static_cast<int>(runtime::ElementSize(t) * 8 - 1));
}

// avg_pool's divisor per output position, [o1, .., on] in `type`.
Value AvgDivisor(const PoolDims& g, bool count_include_pad, std::optional<int64_t> divisor_override,
                 ElementType type) {
  std::vector<int64_t> od = OutSizes(g);
  if (divisor_override) return Full(static_cast<double>(*divisor_override), type, od);
  Value prod;
  for (int64_t a = 0; a < static_cast<int64_t>(g.size()); ++a) {
    const PoolDim& d = g[a];
    std::vector<int64_t> n = {d.out};
    Value start = WindowStart(d);
    Value end = ir::Binary(ir::op::kMinimum, Add(start, S64(static_cast<double>(d.k), n)),
                           S64(static_cast<double>(d.in + d.p), n));
    Value count;
    if (count_include_pad) {
      count = Sub(end, start);
    } else {
      Value s = ir::Binary(ir::op::kMaximum, start, S64(0, n));
      Value e = ir::Binary(ir::op::kMinimum, end, S64(static_cast<double>(d.in), n));
      count = Sub(e, s);
    }
    Value c = ir::BroadcastInDim(count, od, {a});
    prod = prod ? Mul(prod, c) : c;
  }
  return ir::Convert(prod, type);
}

void CheckAvgArgs(const char* op, std::optional<int64_t> divisor_override) {
  TORCH_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor must be not zero");
}

// grad_output (and indices, when given) of a pool's backward: the input's size with the
// pooled output sizes, the input's floating type.
void CheckPoolGrad(const char* op, const at::Tensor& grad_output, const at::Tensor& self,
                   const std::vector<int64_t>& od, const at::Tensor* indices) {
  TORCH_CHECK(grad_output.sizes().vec() == od && (!indices || indices->sizes().vec() == od), op,
              ": expected grad_output", indices ? " and indices" : "", " of size ", SizesString(od), " for input ",
              DescribeTensor(self), ", got grad_output ", DescribeTensor(grad_output),
              indices ? " and indices " + DescribeTensor(*indices) : std::string());
  TORCH_CHECK(!indices || indices->scalar_type() == at::kLong, op, ": expected indices of dtype Long, got ",
              DescribeTensor(*indices));
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && at::isFloatingType(self.scalar_type()), op,
              ": expected floating point grad_output and input of the same dtype, got ", DescribeTensor(grad_output),
              " and ", DescribeTensor(self));
}

// ---------------------------------------------------------------------------------
// adaptive pooling and one-hot selection

// Row o averages inputs [floor(o*in/out), ceil((o+1)*in/out)).
Value AdaptiveMatrix(int64_t in, int64_t out, ElementType type) {
  std::vector<int64_t> md = {out, in};
  Value o = ir::Iota(ir::Shape(ElementType::kS64, md), 0);
  Value i = ir::Iota(ir::Shape(ElementType::kS64, md), 1);
  Value start = Div(Mul(o, S64(static_cast<double>(in), md)), S64(static_cast<double>(out), md));
  Value end = Div(Add(Mul(Add(o, S64(1, md)), S64(static_cast<double>(in), md)), S64(static_cast<double>(out - 1), md)),
                  S64(static_cast<double>(out), md));
  Value inside = ir::Binary(ir::op::kAnd, Cmp(CompareDirection::kGe, i, start), Cmp(CompareDirection::kLt, i, end));
  Value weight = Div(Full(1, type, md), ir::Convert(Sub(end, start), type));
  return ir::Select(inside, weight, Full(0, type, md));
}

// x with dimension `dim` mapped by the [out, in] matrix a (or, `transposed`, by its
// transpose): one dot_general, and a transpose back unless `dim` is the last.
Value ApplyAlong(const Value& x, int64_t dim, const Value& a, bool transposed) {
  int64_t r = x.shape().rank();
  Value y = ir::DotGeneral(x, a, {}, {}, {dim}, {transposed ? 0 : 1}, x.shape().type);  // [.. without dim, n]
  if (dim == r - 1) return y;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < r; ++d) perm.push_back(d == dim ? r - 1 : (d < dim ? d : d - 1));
  return ir::Transpose(y, perm);
}

// out[.., o, ..] = sum_i (mask[o, i] ? x[.., i, ..] : 0) along dimension `dim`: a gather
// by a one-hot [out, in] mask, exact for every type (one term per row). A mask with
// leading dimensions ([.., out, in], those of x) selects per plane.
Value SelectSum(const Value& x, int64_t dim, const Value& mask) {
  const std::vector<int64_t>& dims = x.shape().dims;
  int64_t m = mask.shape().rank();
  int64_t out = mask.shape().dims[m - 2];
  std::vector<int64_t> wide, xdims;
  for (int64_t a = 0; a < x.shape().rank(); ++a) {
    if (a == dim) wide.push_back(out);
    xdims.push_back(static_cast<int64_t>(wide.size()));
    wide.push_back(dims[a]);
  }
  std::vector<int64_t> mdims;
  for (int64_t a = 0; a < m - 2; ++a) mdims.push_back(a);
  mdims.insert(mdims.end(), {dim, dim + 1});
  Value picked = ir::Select(ir::BroadcastInDim(mask, wide, mdims), ir::BroadcastInDim(x, wide, xdims),
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
  Value o = ir::Iota(ir::Shape(ElementType::kS64, n), 0);
  a.start = Div(Mul(o, S64(static_cast<double>(in), n)), S64(static_cast<double>(out), n));
  a.end = Div(Add(Mul(Add(o, S64(1, n)), S64(static_cast<double>(in), n)), S64(static_cast<double>(out - 1), n)),
              S64(static_cast<double>(out), n));
  return a;
}

// Position start + i of each window ([out], s64) and whether it lies inside the window.
std::pair<Value, Value> AdaptiveOffset(const AdaptiveDim& a, int64_t i) {
  std::vector<int64_t> n = {a.out};
  Value pos = Add(a.start, S64(static_cast<double>(i), n));
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

// Writes (kind kReplace) or adds (kAdd) each of `values` ([.., o1, .., on]) at its flat
// index into its plane of a zero [.., i1, .., in] array. XLA drops indices outside the
// plane (PyTorch raises; that would need the device data).
Value ScatterToPlanes(ir::ScatterKind kind, const Value& values, const Value& indices,
                      const std::vector<int64_t>& in_dims, int64_t n) {
  const std::vector<int64_t>& vd = values.shape().dims;
  int64_t planes = Product(std::vector<int64_t>(vd.begin(), vd.end() - n));
  int64_t per_value_plane = Product(LastN(vd, n));
  int64_t plane = Product(LastN(in_dims, n));
  std::vector<int64_t> id = {planes, per_value_plane};
  Value v = ir::Reshape(values, id);
  Value idx = ir::Reshape(indices, {planes, per_value_plane, 1});
  Value which = ir::Reshape(ir::Iota(ir::Shape(ElementType::kS64, id), 0), {planes, per_value_plane, 1});
  Value coords = ir::Concatenate({which, idx}, 2);
  Value zeros = Full(0, values.shape().type, {planes, plane});
  Value out = ir::Scatter(kind, zeros, coords, v, {}, {0, 1}, {0, 1}, 2);
  return ir::Reshape(out, in_dims);
}

// ---------------------------------------------------------------------------------
// the kernels, for any spatial rank n

std::tuple<at::Tensor, at::Tensor> MaxPoolWithIndices(const char* op, const at::Tensor& self, int64_t n,
                                                      at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                      at::IntArrayRef padding, at::IntArrayRef dilation,
                                                      bool ceil_mode) {
  TORCH_CHECK(self.scalar_type() != at::kBool && !at::isComplexType(self.scalar_type()), op,
              ": unsupported input dtype, got ", DescribeTensor(self));
  PoolDims g = PoolGeometry(op, self, n, kernel_size, stride, padding, dilation, ceil_mode);
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  bool floating = runtime::IsFloating(type);
  std::vector<int64_t> kernel = KernelSizes(g);
  int64_t offsets = Product(kernel);
  return Checked(op, [&] {
    std::vector<int64_t> od = OutDims(x->shape().dims, g);
    if (offsets > 1 && ir::HostMaxPoolAvailable(type)) {
      std::vector<int64_t> stride, padding, dilation;
      for (const PoolDim& d : g) {
        stride.push_back(d.s);
        padding.push_back(d.p);
        dilation.push_back(d.d);
      }
      auto [best, best_index] = ir::HostMaxPool(x->GetIrValue(), OutSizes(g), kernel, stride, padding, dilation);
      return std::make_tuple(AtenFromIr(best, x->device()), AtenFromIr(best_index, x->device()));
    }
    Value padded = PadForWindows(x->GetIrValue(), g, Lowest(type));
    Value best = Full(Lowest(type), type, od);
    Value best_index = ToLastN(FirstValidIndex(g), od);
    for (int64_t f = 0; f < offsets; ++f) {
      std::vector<int64_t> off = Unflatten(f, kernel);
      Value v = WindowSlice(padded, g, off);
      Value take = Cmp(CompareDirection::kGt, v, best);
      if (floating) take = ir::Binary(ir::op::kOr, take, Cmp(CompareDirection::kNe, v, v));
      best = ir::Select(take, v, best);
      best_index = ir::Select(take, ToLastN(OffsetIndex(g, off), od), best_index);
    }
    // Otherwise XLA fuses the whole running-argmax chain into every consumer of the
    // indices and recomputes it once per use (prod(k) times in the backward).
    if (offsets > 1) best_index = ir::Materialize(best_index);
    return std::make_tuple(AtenFromIr(best, x->device()), AtenFromIr(best_index, x->device()));
  });
}

at::Tensor MaxPoolWithIndicesBackward(const char* op, const at::Tensor& grad_output, const at::Tensor& self, int64_t n,
                                      at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                                      at::IntArrayRef dilation, bool ceil_mode, const at::Tensor& indices) {
  PoolDims g = PoolGeometry(op, self, n, kernel_size, stride, padding, dilation, ceil_mode);
  std::vector<int64_t> od = OutDims(self.sizes().vec(), g);
  CheckPoolGrad(op, grad_output, self, od, &indices);
  int device = CommonDevice({&grad_output, &self, &indices}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  Value idx = GetXlaTensor(indices, op)->GetIrValue();
  if (ir::HostMaxPoolAvailable(type)) {
    Value grad = GetXlaTensor(grad_output, op)->GetIrValue();
    return AtenFromIr(Checked(op, [&] { return ir::HostMaxPoolBackward(grad, idx, self.sizes().vec(), n); }), device);
  }
  ElementType acc = AccumulationType(type);
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  std::vector<int64_t> kernel = KernelSizes(g);
  int64_t offsets = Product(kernel);
  return AtenFromIr(Checked(op, [&] {
                      // Read once per window position: computed once (XLA would fuse the
                      // gradient's computation, batch norm's backward say, into each).
                      if (offsets > 1) dy = ir::Materialize(dy);
                      Value zero = Full(0, acc, od);
                      std::vector<Value> contribs;
                      for (int64_t f = 0; f < offsets; ++f) {
                        Value hit = Cmp(CompareDirection::kEq, idx, ToLastN(OffsetIndex(g, Unflatten(f, kernel)), od));
                        contribs.push_back(ir::Select(hit, dy, zero));
                      }
                      return ir::Convert(ScatterWindows(contribs, g, self.sizes().vec()), type);
                    }),
                    device);
}

at::Tensor AvgPool(const char* op, const at::Tensor& self, int64_t n, at::IntArrayRef kernel_size,
                   at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                   std::optional<int64_t> divisor_override) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kLong, op, ": \"", op,
              "\" not implemented for '", self.scalar_type(), "' (input ", DescribeTensor(self), ")");
  CheckAvgArgs(op, divisor_override);
  PoolDims g = PoolGeometry(op, self, n, kernel_size, stride, padding, {1}, ceil_mode);
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  ElementType acc = runtime::IsFloating(type) ? AccumulationType(type) : ElementType::kS64;
  std::vector<int64_t> kernel = KernelSizes(g);
  return AtenFromIr(Checked(op, [&] {
                      std::vector<int64_t> od = OutDims(x->shape().dims, g);
                      Value padded = PadForWindows(ir::Convert(x->GetIrValue(), acc), g, 0);
                      Value sum = Full(0, acc, od);
                      for (int64_t f = 0; f < Product(kernel); ++f)
                        sum = Add(sum, WindowSlice(padded, g, Unflatten(f, kernel)));
                      Value div = ToLastN(AvgDivisor(g, count_include_pad, divisor_override, acc), od);
                      return ir::Convert(Div(sum, div), type);
                    }),
                    x->device());
}

at::Tensor AvgPoolBackward(const char* op, const at::Tensor& grad_output, const at::Tensor& self, int64_t n,
                           at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                           bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  CheckAvgArgs(op, divisor_override);
  PoolDims g = PoolGeometry(op, self, n, kernel_size, stride, padding, {1}, ceil_mode);
  std::vector<int64_t> od = OutDims(self.sizes().vec(), g);
  CheckPoolGrad(op, grad_output, self, od, nullptr);
  int device = CommonDevice({&grad_output, &self}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  return AtenFromIr(Checked(op, [&] {
                      Value scaled = Div(dy, ToLastN(AvgDivisor(g, count_include_pad, divisor_override, acc), od));
                      std::vector<Value> contribs(Product(KernelSizes(g)), scaled);
                      return ir::Convert(ScatterWindows(contribs, g, self.sizes().vec()), type);
                    }),
                    device);
}

// Per-dimension values ([o_a], or [.., o_a] with the leading dimensions of `od`)
// broadcast to od at their dimension.
Value AtDim(const Value& v, const std::vector<int64_t>& od, int64_t dim) {
  int64_t vr = v.shape().rank();
  std::vector<int64_t> bdims;
  for (int64_t i = 0; i < vr - 1; ++i) bdims.push_back(i);
  bdims.push_back(dim);
  return ir::BroadcastInDim(v, od, bdims);
}

// The flat index of per-dimension positions (see AtDim), shaped od.
Value FlatIndexIn(const std::vector<Value>& pos, const std::vector<int64_t>& od,
                  const std::vector<int64_t>& in_sizes) {
  int64_t n = static_cast<int64_t>(pos.size()), r = static_cast<int64_t>(od.size());
  Value flat;
  for (int64_t a = 0; a < n; ++a) {
    Value p = AtDim(pos[a], od, r - n + a);
    flat = flat ? Add(Mul(flat, S64(static_cast<double>(in_sizes[a]), od)), p) : p;
  }
  return flat;
}

// One window offset along one dimension: its position in every window (see AtDim),
// whether that lies inside the window, and the one-hot [(..,) o, in] mask selecting it.
struct WindowTap {
  Value pos, valid, mask;
};

// Calls visit(elements, taps) for every offset tuple of windows given per dimension by
// their taps (windows[a]: one tap per offset along dimension a), `elements` being the
// element of every window at those taps ([.., o1, .., on]), gathered by SelectSum
// dimension by dimension (a prefix's gathers shared by its offsets). Row-major order:
// the last dimension's offset moves fastest, as in PyTorch's loops.
void ForEachTap(const Value& x, const std::vector<std::vector<WindowTap>>& windows,
                const std::function<void(const Value&, const std::vector<const WindowTap*>&)>& visit) {
  int64_t n = static_cast<int64_t>(windows.size()), r = x.shape().rank();
  std::vector<const WindowTap*> chosen(n);
  std::function<void(int64_t, const Value&)> walk = [&](int64_t a, const Value& partial) {
    if (a == n) return visit(partial, chosen);
    for (const WindowTap& t : windows[a]) {
      chosen[a] = &t;
      walk(a + 1, SelectSum(partial, r - n + a, t.mask));
    }
  };
  walk(0, x);
}

// The output dimensions of pooling x over `windows`.
std::vector<int64_t> TapOutDims(const Value& x, const std::vector<std::vector<WindowTap>>& windows) {
  int64_t n = static_cast<int64_t>(windows.size()), r = x.shape().rank();
  std::vector<int64_t> od = x.shape().dims;
  for (int64_t a = 0; a < n; ++a) od[r - n + a] = windows[a][0].pos.shape().dims.back();
  return od;
}

// Whether all the chosen taps lie inside their windows, shaped od.
Value TapsValid(const std::vector<const WindowTap*>& chosen, const std::vector<int64_t>& od) {
  int64_t n = static_cast<int64_t>(chosen.size()), r = static_cast<int64_t>(od.size());
  Value valid;
  for (int64_t b = 0; b < n; ++b) {
    Value ok = AtDim(chosen[b]->valid, od, r - n + b);
    valid = valid ? ir::Binary(ir::op::kAnd, valid, ok) : ok;
  }
  return valid;
}

// The running maximum and its flat index over the windows' taps: the first maximum
// wins, a NaN always wins. The index starts at the windows' `first` positions.
std::pair<Value, Value> MaxOverTaps(const Value& x, const std::vector<std::vector<WindowTap>>& windows,
                                    const std::vector<Value>& first) {
  std::vector<int64_t> od = TapOutDims(x, windows);
  std::vector<int64_t> in_sizes = LastN(x.shape().dims, static_cast<int64_t>(windows.size()));
  Value best = Full(-std::numeric_limits<double>::infinity(), x.shape().type, od);
  Value best_index = FlatIndexIn(first, od, in_sizes);
  ForEachTap(x, windows, [&](const Value& v, const std::vector<const WindowTap*>& chosen) {
    std::vector<Value> pos;
    for (const WindowTap* t : chosen) pos.push_back(t->pos);
    Value take = ir::Binary(ir::op::kOr, Cmp(CompareDirection::kGt, v, best), Cmp(CompareDirection::kNe, v, v));
    take = ir::Binary(ir::op::kAnd, take, TapsValid(chosen, od));
    best = ir::Select(take, v, best);
    best_index = ir::Select(take, FlatIndexIn(pos, od, in_sizes), best_index);
  });
  return {best, best_index};
}

// The taps of adaptive pooling windows: windows[a][i] is offset i of every window of
// dimension a.
std::vector<std::vector<WindowTap>> AdaptiveTaps(const at::Tensor& self, at::IntArrayRef output_size, int64_t n,
                                                 std::vector<Value>* first) {
  int64_t r = self.dim();
  std::vector<std::vector<WindowTap>> windows(n);
  for (int64_t a = 0; a < n; ++a) {
    AdaptiveDim ad = AdaptiveWindows(self.size(r - n + a), output_size[a]);
    if (first) first->push_back(ad.start);
    for (int64_t i = 0; i < ad.kmax; ++i) {
      auto [pos, valid] = AdaptiveOffset(ad, i);
      windows[a].push_back({pos, valid, PositionMask(pos, valid, ad.in)});
    }
  }
  return windows;
}

// adaptive_avg_pool3d in bf16/f16 as PyTorch's CPU kernel computes it: the window's
// sum accumulated in the input's type, tap by tap, then divided by the window's extent
// along each dimension in turn, rounding after each operation (an f32 sum differs by
// up to a few bf16 ulps).
Value AdaptiveAvgPoolRounded(const at::Tensor& self, const Value& x, at::IntArrayRef output_size, int64_t n) {
  ElementType type = x.shape().type;
  const ElementType f = ElementType::kF32;
  auto rounded = [&](const Value& v) { return ir::Convert(ir::Convert(v, type), f); };
  std::vector<std::vector<WindowTap>> windows = AdaptiveTaps(self, output_size, n, nullptr);
  Value xf = ir::Convert(x, f);
  std::vector<int64_t> od = TapOutDims(xf, windows);
  Value zero = Full(0, f, od);
  Value sum = zero;
  ForEachTap(xf, windows, [&](const Value& v, const std::vector<const WindowTap*>& chosen) {
    sum = rounded(Add(sum, ir::Select(TapsValid(chosen, od), v, zero)));
  });
  int64_t r = self.dim();
  for (int64_t a = 0; a < n; ++a) {
    AdaptiveDim ad = AdaptiveWindows(self.size(r - n + a), output_size[a]);
    sum = rounded(Div(sum, AtDim(ir::Convert(Sub(ad.end, ad.start), f), od, r - n + a)));
  }
  return ir::Convert(sum, type);
}

at::Tensor AdaptiveAvgPool(const char* op, const at::Tensor& self, int64_t n, at::IntArrayRef output_size) {
  TORCH_CHECK(static_cast<int64_t>(output_size.size()) == n, op, ": output_size must be ", n, ", got ",
              SizesString(output_size));
  for (int64_t s : output_size)
    TORCH_CHECK(s >= 0, op, ": elements of output_size must be greater than or equal to 0 but received ",
                SizesString(output_size));
  CheckPoolInput(op, self, n);
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(self));
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  ElementType acc = AccumulationType(type);
  int64_t r = self.dim();
  return AtenFromIr(Checked(op, [&] {
                      if (n == 3 && acc != type) return AdaptiveAvgPoolRounded(self, x->GetIrValue(), output_size, n);
                      Value v = ir::Convert(x->GetIrValue(), acc);
                      // the last dimension first: its dot needs no transpose
                      for (int64_t a = n - 1; a >= 0; --a)
                        v = ApplyAlong(v, r - n + a, AdaptiveMatrix(self.size(r - n + a), output_size[a], acc), false);
                      return ir::Convert(v, type);
                    }),
                    x->device());
}

at::Tensor AdaptiveAvgPoolBackward(const char* op, const at::Tensor& grad_output, const at::Tensor& self, int64_t n) {
  CheckPoolInput(op, self, n);
  TORCH_CHECK(grad_output.dim() == self.dim(), op, ": expected grad_output of ", self.dim(), " dimensions, got ",
              DescribeTensor(grad_output), " for input ", DescribeTensor(self));
  for (int64_t i = 0; i < self.dim() - n; ++i)
    TORCH_CHECK(grad_output.size(i) == self.size(i), op, ": grad_output ", DescribeTensor(grad_output),
                " does not match input ", DescribeTensor(self), " outside the pooled dimensions");
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && at::isFloatingType(self.scalar_type()), op,
              ": expected floating point grad_output and input of the same dtype, got ", DescribeTensor(grad_output),
              " and ", DescribeTensor(self));
  int device = CommonDevice({&grad_output, &self}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  int64_t r = self.dim();
  return AtenFromIr(Checked(op, [&] {
                      Value v = dy;
                      for (int64_t a = n - 1; a >= 0; --a)
                        v = ApplyAlong(v, r - n + a, AdaptiveMatrix(self.size(r - n + a), grad_output.size(r - n + a), acc),
                                       true);
                      return ir::Convert(v, type);
                    }),
                    device);
}

std::tuple<at::Tensor, at::Tensor> AdaptiveMaxPool(const char* op, const at::Tensor& self, int64_t n,
                                                   at::IntArrayRef output_size) {
  TORCH_CHECK(static_cast<int64_t>(output_size.size()) == n, op, ": internal error: output_size.size() must be ", n,
              ", got ", SizesString(output_size));
  CheckPoolInput(op, self, n);
  for (int64_t s : output_size)
    TORCH_CHECK(s > 0, op, ": elements of output_size must be greater than 0, got ", SizesString(output_size));
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": \"", op, "\" not implemented for '",
              self.scalar_type(), "' (input ", DescribeTensor(self), ")");
  XlaTensorPtr x = GetXlaTensor(self, op);
  int64_t r = self.dim();
  return Checked(op, [&] {
    std::vector<Value> first;
    std::vector<std::vector<WindowTap>> windows = AdaptiveTaps(self, output_size, n, &first);
    int64_t taps = 1;
    for (const auto& w : windows) taps *= static_cast<int64_t>(w.size());
    auto [best, best_index] = MaxOverTaps(x->GetIrValue(), windows, first);
    // computed once, not fused into (and recomputed by) each consumer of the indices
    if (taps > 1) best_index = ir::Materialize(best_index);
    return std::make_tuple(AtenFromIr(best, x->device()), AtenFromIr(best_index, x->device()));
  });
}

// The backward of the max pools whose windows are not a regular grid (adaptive 3-d,
// fractional): each gradient added at its index.
at::Tensor ScatterAddBackward(const char* op, const at::Tensor& grad_output, const at::Tensor& self, int64_t n,
                              const at::Tensor& indices) {
  CheckPoolInput(op, self, n);
  TORCH_CHECK(grad_output.dim() == self.dim() && grad_output.sizes() == indices.sizes(), op,
              ": expected grad_output and indices of the same size with the input's rank, got grad_output ",
              DescribeTensor(grad_output), ", indices ", DescribeTensor(indices), " for input ", DescribeTensor(self));
  for (int64_t i = 0; i < self.dim() - n; ++i)
    TORCH_CHECK(grad_output.size(i) == self.size(i), op, ": grad_output ", DescribeTensor(grad_output),
                " does not match input ", DescribeTensor(self), " outside the pooled dimensions");
  CheckPoolGrad(op, grad_output, self, grad_output.sizes().vec(), &indices);
  int device = CommonDevice({&grad_output, &self, &indices}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  Value idx = GetXlaTensor(indices, op)->GetIrValue();
  return AtenFromIr(Checked(op, [&] {
                      return ir::Convert(ScatterToPlanes(ir::ScatterKind::kAdd, dy, idx, self.sizes().vec(), n), type);
                    }),
                    device);
}

// fractional_max_pool{2,3}d: the windows of dimension a start at PyTorch's
// generate_intervals of the plane's sample u (computed in the input's type, as PyTorch
// does): start[o] = int((o + u) * alpha) - int(u * alpha) with
// alpha = (in - k) / (out - 1), and in - k for the last o. The samples of a plane list
// the dimensions in the order `sample_of` gives.
std::tuple<at::Tensor, at::Tensor> FractionalMaxPool(const char* op, const at::Tensor& self, int64_t n,
                                                     at::IntArrayRef kernel_size, at::IntArrayRef output_size,
                                                     const at::Tensor& random_samples,
                                                     const std::vector<int64_t>& sample_of) {
  TORCH_CHECK(static_cast<int64_t>(kernel_size.size()) == n && static_cast<int64_t>(output_size.size()) == n, op,
              ": expected ", n, " kernel sizes and output sizes, got kernel_size=", SizesString(kernel_size),
              " and output_size=", SizesString(output_size));
  CheckPoolInput(op, self, n);
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": \"", op, "\" not implemented for '",
              self.scalar_type(), "' (input ", DescribeTensor(self), ")");
  int64_t r = self.dim();
  std::vector<int64_t> lead(self.sizes().begin(), self.sizes().end() - n);
  int64_t planes = Product(lead);
  for (int64_t a = 0; a < n; ++a) {
    int64_t in = self.size(r - n + a);
    TORCH_CHECK(kernel_size[a] > 0 && output_size[a] > 0 && output_size[a] + kernel_size[a] - 1 <= in, op,
                ": out(", output_size[a], ") + pool(", kernel_size[a], ") - 1 must be at most the input size ", in,
                " of dimension ", r - n + a, " (input ", DescribeTensor(self), ")");
  }
  TORCH_CHECK(random_samples.numel() == planes * n && random_samples.scalar_type() == self.scalar_type(), op,
              ": expected random_samples of ", planes * n, " elements (", n, " per plane) of the input's dtype, got ",
              DescribeTensor(random_samples), " for input ", DescribeTensor(self));
  int device = CommonDevice({&self, &random_samples}, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  const ElementType f = ElementType::kF32;
  // f32 arithmetic rounded to the input's type after each operation, as scalar_t does
  auto rounded = [&](const Value& v) { return ir::Convert(ir::Convert(v, type), f); };
  return Checked(op, [&] {
    std::vector<int64_t> with_n = lead;
    with_n.push_back(n);
    Value samples = rounded(ir::Convert(ir::Reshape(GetXlaTensor(random_samples, op)->GetIrValue(), with_n), f));
    std::vector<std::vector<WindowTap>> windows(n);
    std::vector<Value> first;
    int64_t l = static_cast<int64_t>(lead.size());
    for (int64_t a = 0; a < n; ++a) {
      int64_t in = self.size(r - n + a), out = output_size[a], k = kernel_size[a];
      std::vector<int64_t> od = lead, md = lead;
      od.push_back(out);
      md.insert(md.end(), {out, in});
      std::vector<int64_t> start_idx(l + 1, 0), limit = with_n, strides(l + 1, 1);
      start_idx[l] = sample_of[a];
      limit[l] = sample_of[a] + 1;
      Value u = ir::Reshape(ir::Slice(samples, start_idx, limit, strides), lead);
      Value ub = ir::BroadcastInDim(u, od, [&] {
        std::vector<int64_t> d;
        for (int64_t i = 0; i < l; ++i) d.push_back(i);
        return d;
      }());
      Value o = ir::Iota(ir::Shape(ElementType::kS64, od), l);
      Value start;
      if (out > 1) {
        float alpha = static_cast<float>(in - k) / static_cast<float>(out - 1);
        Value al = rounded(Full(alpha, f, od));
        Value hi = ir::Convert(rounded(Mul(rounded(Add(ir::Convert(o, f), ub)), al)), ElementType::kS64);
        Value lo = ir::Convert(rounded(Mul(ub, al)), ElementType::kS64);
        start = ir::Select(Cmp(CompareDirection::kLt, o, S64(static_cast<double>(out - 1), od)), Sub(hi, lo),
                           S64(static_cast<double>(in - k), od));
      } else {
        start = S64(static_cast<double>(in - k), od);
      }
      first.push_back(start);
      Value col = ir::Iota(ir::Shape(ElementType::kS64, md), l + 1);
      std::vector<int64_t> to_md;
      for (int64_t i = 0; i <= l; ++i) to_md.push_back(i);
      Value all = ir::Constant(1, ir::Shape(ElementType::kPred, od));
      for (int64_t i = 0; i < k; ++i) {
        Value pos = Add(start, S64(static_cast<double>(i), od));
        windows[a].push_back({pos, all, Cmp(CompareDirection::kEq, col, ir::BroadcastInDim(pos, md, to_md))});
      }
    }
    auto [best, best_index] = MaxOverTaps(x->GetIrValue(), windows, first);
    if (Product(std::vector<int64_t>(kernel_size.begin(), kernel_size.end())) > 1)
      best_index = ir::Materialize(best_index);
    return std::make_tuple(AtenFromIr(best, device), AtenFromIr(best_index, device));
  });
}

}  // namespace

// ---------------------------------------------------------------------------------
// 2-d and 3-d entry points

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::max_pool2d_with_indices(const at::Tensor& self,
                                                                               at::IntArrayRef kernel_size,
                                                                               at::IntArrayRef stride,
                                                                               at::IntArrayRef padding,
                                                                               at::IntArrayRef dilation,
                                                                               bool ceil_mode) {
  XLA_COUNT("max_pool2d_with_indices");
  return MaxPoolWithIndices("max_pool2d", self, 2, kernel_size, stride, padding, dilation, ceil_mode);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::max_pool3d_with_indices(const at::Tensor& self,
                                                                               at::IntArrayRef kernel_size,
                                                                               at::IntArrayRef stride,
                                                                               at::IntArrayRef padding,
                                                                               at::IntArrayRef dilation,
                                                                               bool ceil_mode) {
  XLA_COUNT("max_pool3d_with_indices");
  return MaxPoolWithIndices("max_pool3d", self, 3, kernel_size, stride, padding, dilation, ceil_mode);
}

at::Tensor XLANativeFunctions::max_pool2d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                                at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                                at::IntArrayRef padding, at::IntArrayRef dilation,
                                                                bool ceil_mode, const at::Tensor& indices) {
  XLA_COUNT("max_pool2d_with_indices_backward");
  return MaxPoolWithIndicesBackward("max_pool2d_with_indices_backward", grad_output, self, 2, kernel_size, stride,
                                    padding, dilation, ceil_mode, indices);
}

at::Tensor XLANativeFunctions::max_pool3d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                                at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                                at::IntArrayRef padding, at::IntArrayRef dilation,
                                                                bool ceil_mode, const at::Tensor& indices) {
  XLA_COUNT("max_pool3d_with_indices_backward");
  return MaxPoolWithIndicesBackward("max_pool3d_with_indices_backward", grad_output, self, 3, kernel_size, stride,
                                    padding, dilation, ceil_mode, indices);
}

at::Tensor XLANativeFunctions::avg_pool2d(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                          at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                          std::optional<int64_t> divisor_override) {
  XLA_COUNT("avg_pool2d");
  return AvgPool("avg_pool2d", self, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}

at::Tensor XLANativeFunctions::avg_pool3d(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                          at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                          std::optional<int64_t> divisor_override) {
  XLA_COUNT("avg_pool3d");
  return AvgPool("avg_pool3d", self, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}

at::Tensor XLANativeFunctions::avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                   at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                   at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                                   std::optional<int64_t> divisor_override) {
  XLA_COUNT("avg_pool2d_backward");
  return AvgPoolBackward("avg_pool2d_backward", grad_output, self, 2, kernel_size, stride, padding, ceil_mode,
                         count_include_pad, divisor_override);
}

at::Tensor XLANativeFunctions::avg_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                   at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                   at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                                   std::optional<int64_t> divisor_override) {
  XLA_COUNT("avg_pool3d_backward");
  return AvgPoolBackward("avg_pool3d_backward", grad_output, self, 3, kernel_size, stride, padding, ceil_mode,
                         count_include_pad, divisor_override);
}

at::Tensor XLANativeFunctions::_adaptive_avg_pool2d(const at::Tensor& self, at::IntArrayRef output_size) {
  XLA_COUNT("_adaptive_avg_pool2d");
  return AdaptiveAvgPool("adaptive_avg_pool2d", self, 2, output_size);
}

at::Tensor XLANativeFunctions::_adaptive_avg_pool3d(const at::Tensor& self, at::IntArrayRef output_size) {
  XLA_COUNT("_adaptive_avg_pool3d");
  return AdaptiveAvgPool("adaptive_avg_pool3d", self, 3, output_size);
}

at::Tensor XLANativeFunctions::_adaptive_avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  XLA_COUNT("_adaptive_avg_pool2d_backward");
  return AdaptiveAvgPoolBackward("adaptive_avg_pool2d_backward", grad_output, self, 2);
}

at::Tensor XLANativeFunctions::_adaptive_avg_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  XLA_COUNT("_adaptive_avg_pool3d_backward");
  return AdaptiveAvgPoolBackward("adaptive_avg_pool3d_backward", grad_output, self, 3);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::adaptive_max_pool2d(const at::Tensor& self,
                                                                           at::IntArrayRef output_size) {
  XLA_COUNT("adaptive_max_pool2d");
  return AdaptiveMaxPool("adaptive_max_pool2d", self, 2, output_size);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::adaptive_max_pool3d(const at::Tensor& self,
                                                                           at::IntArrayRef output_size) {
  XLA_COUNT("adaptive_max_pool3d");
  return AdaptiveMaxPool("adaptive_max_pool3d", self, 3, output_size);
}

// The 2-d backward gathers back through the transposed one-hot selects (no scatter).
at::Tensor XLANativeFunctions::adaptive_max_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                            const at::Tensor& indices) {
  XLA_COUNT("adaptive_max_pool2d_backward");
  const char* op = "adaptive_max_pool2d_backward";
  CheckPoolInput(op, self, 2);
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
                          Value hit = ir::Binary(ir::op::kAnd, Cmp(CompareDirection::kEq, idx, ToLastN(flat, od)),
                                                 ToLastN(valid, od));
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

at::Tensor XLANativeFunctions::adaptive_max_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                            const at::Tensor& indices) {
  XLA_COUNT("adaptive_max_pool3d_backward");
  return ScatterAddBackward("adaptive_max_pool3d_backward", grad_output, self, 3, indices);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::fractional_max_pool2d(const at::Tensor& self,
                                                                             at::IntArrayRef kernel_size,
                                                                             at::IntArrayRef output_size,
                                                                             const at::Tensor& random_samples) {
  XLA_COUNT("fractional_max_pool2d");
  // a plane's samples are (w, h)
  return FractionalMaxPool("fractional_max_pool2d", self, 2, kernel_size, output_size, random_samples, {1, 0});
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::fractional_max_pool3d(const at::Tensor& self,
                                                                             at::IntArrayRef kernel_size,
                                                                             at::IntArrayRef output_size,
                                                                             const at::Tensor& random_samples) {
  XLA_COUNT("fractional_max_pool3d");
  // a plane's samples are (t, h, w)
  return FractionalMaxPool("fractional_max_pool3d", self, 3, kernel_size, output_size, random_samples, {0, 1, 2});
}

at::Tensor XLANativeFunctions::fractional_max_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                              at::IntArrayRef kernel_size,
                                                              at::IntArrayRef output_size,
                                                              const at::Tensor& indices) {
  XLA_COUNT("fractional_max_pool2d_backward");
  return ScatterAddBackward("fractional_max_pool2d_backward", grad_output, self, 2, indices);
}

at::Tensor XLANativeFunctions::fractional_max_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                              at::IntArrayRef kernel_size,
                                                              at::IntArrayRef output_size,
                                                              const at::Tensor& indices) {
  XLA_COUNT("fractional_max_pool3d_backward");
  return ScatterAddBackward("fractional_max_pool3d_backward", grad_output, self, 3, indices);
}

// Each value goes to its flat index (d*H + h)*W + w in a zero [.., oD, oH, oW] volume.
// Its gradient is a gather at the same indices, which autograd builds from lowered ops.
at::Tensor XLANativeFunctions::max_unpool3d(const at::Tensor& self, const at::Tensor& indices,
                                            at::IntArrayRef output_size, at::IntArrayRef stride,
                                            at::IntArrayRef padding) {
  XLA_COUNT("max_unpool3d");
  const char* op = "max_unpool3d";
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), "\"max_unpool3d\" not implemented for '",
                              self.scalar_type(), "'");
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": elements in indices should be type int64 but got: ",
              indices.scalar_type());
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, op, ": Input to max_unpooling3d should be a 4d or 5d Tensor, but "
              "got a tensor with ", self.dim(), " dimensions.");
  TORCH_CHECK(output_size.size() == 3, op, ": There should be exactly three elements (depth, height, width) in "
              "output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(stride.size() == 3 && padding.size() == 3, op, ": There should be exactly three elements in stride "
              "and padding, but got stride=", SizesString(stride), " and padding=", SizesString(padding));
  for (int64_t s : stride)
    TORCH_CHECK(s > 0, op, ": strides should be greater than zero, but got stride: ", SizesString(stride));
  TORCH_CHECK(self.sizes() == indices.sizes(), op, ": Expected shape of indices to be same as that of the input "
              "tensor (", self.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, op, ": Expected input to have non-zero size for non-batch dimensions, but got ",
                DescribeTensor(self));
  for (int64_t s : output_size)
    TORCH_CHECK(s >= 0, op, ": output_size must be non-negative, got ", SizesString(output_size));
  int device = CommonDevice({&self, &indices}, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  std::vector<int64_t> out = WithLastN(self.sizes().vec(), output_size.vec());
  return AtenFromIr(Checked(op, [&] {
                      return ScatterToPlanes(ir::ScatterKind::kReplace, x->GetIrValue(),
                                             GetXlaTensor(indices, op)->GetIrValue(), out, 3);
                    }),
                    device);
}

// ---------------------------------------------------------------------------------
// im2col / col2im

namespace {

// The sliding-block geometry of unfold/fold over an [H, W] image, with PyTorch's checks.
PoolDims BlockGeometry(const char* op, int64_t height, int64_t width, at::IntArrayRef kernel_size,
                                     at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  for (auto [name, v] : {std::pair<const char*, at::IntArrayRef>{"kernel_size", kernel_size}, {"dilation", dilation},
                         {"padding", padding}, {"stride", stride}})
    TORCH_CHECK(v.size() == 2, op, ": It is expected ", name, " equals to 2, but got size ", v.size());
  TORCH_CHECK(kernel_size[0] > 0 && kernel_size[1] > 0, op,
              ": kernel size should be greater than zero, but got kernel_size=", SizesString(kernel_size));
  TORCH_CHECK(dilation[0] > 0 && dilation[1] > 0, op, ": dilation should be greater than zero, but got dilation=",
              SizesString(dilation));
  TORCH_CHECK(padding[0] >= 0 && padding[1] >= 0, op, ": padding should be non-negative, but got padding=",
              SizesString(padding));
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0, op, ": stride should be greater than zero, but got stride=",
              SizesString(stride));
  PoolDims g(2);
  int64_t size[2] = {height, width};
  for (int64_t a = 0; a < 2; ++a) {
    PoolDim& d = g[a];
    d = PoolDim{size[a], kernel_size[a], stride[a], padding[a], dilation[a], 0};
    int64_t span = d.in + 2 * d.p - (d.d * (d.k - 1) + 1);
    d.out = span >= 0 ? span / d.s + 1 : 0;
  }
  TORCH_CHECK(g[0].out >= 1 && g[1].out >= 1, op, ": Given input with spatial size (", height, ", ", width,
              "), kernel_size=", SizesString(kernel_size), ", dilation=", SizesString(dilation), ", padding=",
              SizesString(padding), ", calculated shape of the array of sliding blocks as (", g[0].out, ", ",
              g[1].out, "), but its components must be at least one.");
  return g;
}

}  // namespace

at::Tensor XLANativeFunctions::im2col(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef dilation,
                                      at::IntArrayRef padding, at::IntArrayRef stride) {
  XLA_COUNT("im2col");
  const char* op = "im2col";
  // as in eager, a 4-D input may have an empty batch
  TORCH_CHECK((self.dim() == 3 || self.dim() == 4) && self.size(-1) > 0 && self.size(-2) > 0 && self.size(-3) > 0,
              op, ": Expected non-empty 3D or 4D input tensor, but got ", DescribeTensor(self));
  // PyTorch's CPU kernel takes floating types and bool only
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kBool,
                              "\"im2col\" not implemented for '", self.scalar_type(), "'");
  auto g = BlockGeometry(op, self.size(-2), self.size(-1), kernel_size, dilation, padding, stride);
  XlaTensorPtr x = GetXlaTensor(self, op);
  return AtenFromIr(Checked(op, [&] {
                      if (self.numel() == 0) {  // the empty result, without slicing an empty array
                        std::vector<int64_t> cols = {self.size(0), self.size(1) * g[0].k * g[1].k,
                                                     g[0].out * g[1].out};
                        return Full(0, x->shape().type, cols);
                      }
                      std::vector<int64_t> dims = x->shape().dims;
                      int64_t r = static_cast<int64_t>(dims.size());
                      Value padded = PadForWindows(x->GetIrValue(), g, 0);
                      // each offset's [.., C, oh, ow] slice becomes [.., C, 1, oh, ow]
                      std::vector<int64_t> one_offset(dims.begin(), dims.end() - 2);
                      one_offset.insert(one_offset.end(), {1, g[0].out, g[1].out});
                      std::vector<Value> offsets;
                      for (int64_t i = 0; i < g[0].k; ++i)
                        for (int64_t j = 0; j < g[1].k; ++j)
                          offsets.push_back(ir::Reshape(WindowSlice(padded, g, {i, j}), one_offset));
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
              ": output_size should be greater than zero, but got output_size=", SizesString(output_size));
  // as in eager, a 3-D input may have an empty batch
  TORCH_CHECK((self.dim() == 2 || self.dim() == 3) && self.size(-1) > 0 && self.size(-2) > 0, op,
              ": Expected non-empty 2D or 3D input tensor, but got ", DescribeTensor(self));
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kBool,
                              "\"col2im\" not implemented for '", self.scalar_type(), "'");
  auto g = BlockGeometry(op, output_size[0], output_size[1], kernel_size, dilation, padding, stride);
  int64_t blocks = g[0].k * g[1].k;
  TORCH_CHECK(self.size(-2) % blocks == 0, op, ": Expected size of input's dimension ", self.dim() - 2,
              " to be divisible by the product of kernel_size, but got input.size(", self.dim() - 2, ")=",
              self.size(-2), " and kernel_size=", SizesString(kernel_size));
  TORCH_CHECK(self.size(-1) == g[0].out * g[1].out, op, ": Given output_size=", SizesString(output_size),
              ", kernel_size=", SizesString(kernel_size), ", dilation=", SizesString(dilation), ", padding=",
              SizesString(padding), ", stride=", SizesString(stride), ", expected size of input's dimension ",
              self.dim() - 1, " to match the calculated number of sliding blocks ", g[0].out, " * ", g[1].out, " = ",
              g[0].out * g[1].out, ", but got input.size(", self.dim() - 1, ")=", self.size(-1));
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  // bool blocks sum as integers: an element is true where any block holding it is
  ElementType acc = type == ElementType::kPred ? ElementType::kS32 : AccumulationType(type);
  return AtenFromIr(Checked(op, [&] {
                      std::vector<int64_t> lead(self.sizes().begin(), self.sizes().end() - 2);
                      int64_t channels = self.size(-2) / blocks;
                      if (self.numel() == 0) {  // the empty result, without slicing an empty array
                        std::vector<int64_t> image = lead;
                        image.insert(image.end(), {channels, output_size[0], output_size[1]});
                        return ir::Constant(0, ir::Shape(type, image));
                      }
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
