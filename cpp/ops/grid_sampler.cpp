// Grid sampling (grid_sampler_2d / 3d) and its backward: a gather of input rows per tap
// tuple, weighted and summed; the backward scatter-adds (see the section's comment).
// Bicubic sampling uses the cubic convolution weights of upsampling
// (ops/upsample_util.h). Low-precision floats interpolate in f32.
#include <ATen/ATen.h>

#include <array>
#include <functional>
#include <limits>

#include "XLANativeFunctions.h"
#include "ir/builder_indexing.h"
#include "ops/kernel_util.h"
#include "ops/upsample_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;
using namespace upsample_util;

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

}  // namespace

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
