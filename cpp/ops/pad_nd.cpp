// Padding kernels: constant_pad_nd, and reflection and replication padding (1-d to 3-d)
// with their backward formulas, built from slices, reversals, broadcasts and
// concatenation: each padded dimension is handled in turn, the last `k` dimensions for a
// k-d pad. Replication padding may be negative, as in eager:
// output[i] = input[clamp(i - low, 0, n - 1)], so a negative side crops; the positive
// sides are padded first and the negative ones cropped after (the backward zero-pads the
// cropped sides back, then folds the positive ones).
#include <ATen/ATen.h>

#include <algorithm>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::Value;
using runtime::ElementType;

Value SliceAlong(const Value& v, int64_t dim, int64_t start, int64_t end) {
  std::vector<int64_t> lo(v.shape().rank(), 0), hi = v.shape().dims, st(v.shape().rank(), 1);
  lo[dim] = start;
  hi[dim] = end;
  return ir::Slice(v, lo, hi, st);
}

Value PadAlong(const Value& v, int64_t dim, int64_t low, int64_t high) {
  int64_t rank = v.shape().rank();
  std::vector<int64_t> lo(rank, 0), hi(rank, 0), in(rank, 0);
  lo[dim] = low;
  hi[dim] = high;
  return ir::Pad(v, ir::Constant(0, ir::Shape(v.shape().type, {})), lo, hi, in);
}

enum class Mode { kReflect, kReplicate };

// Checks the input of a k-d pad and returns, per padded dimension (outermost first),
// the dimension index and its (low, high) padding.
struct PadDim {
  int64_t dim, low, high;
};

std::vector<PadDim> PadDims(const at::Tensor& self, at::IntArrayRef padding, int64_t k, Mode mode, const char* op) {
  TORCH_CHECK(static_cast<int64_t>(padding.size()) == 2 * k, op, ": expected padding of length ", 2 * k, ", got ",
              padding);
  TORCH_CHECK(self.dim() == k + 1 || self.dim() == k + 2, op, ": expected ", k + 1, "D or ", k + 2,
              "D input, got ", DescribeTensor(self));
  std::vector<PadDim> dims;
  for (int64_t i = 0; i < k; ++i) {
    // padding lists the last dimension first.
    int64_t d = self.dim() - 1 - i;
    int64_t low = padding[2 * i], high = padding[2 * i + 1], n = self.size(d);
    if (mode == Mode::kReflect) {
      TORCH_CHECK(low >= 0 && high >= 0, op, ": negative padding ", padding, " is not supported on the XLA device");
      TORCH_CHECK(low < n && high < n, op, ": padding size should be less than the corresponding input dimension, but "
                  "got: padding (", low, ", ", high, ") at dimension ", d, " of input ", DescribeTensor(self));
    } else {
      TORCH_CHECK(n > 0 || (low == 0 && high == 0), op, ": cannot pad an empty dimension ", d, " of input ",
                  DescribeTensor(self));
      TORCH_CHECK(n + low + high > 0 || n == 0, op, ": input ", DescribeTensor(self), " is too small at dimension ", d,
                  " for padding (", low, ", ", high, "): calculated output size ", n + low + high);
    }
    dims.push_back(PadDim{d, low, high});
  }
  return dims;
}

Value PadForward(Value v, const std::vector<PadDim>& dims, Mode mode) {
  for (const PadDim& signed_pad : dims) {
    PadDim p{signed_pad.dim, std::max<int64_t>(signed_pad.low, 0), std::max<int64_t>(signed_pad.high, 0)};
    int64_t n = v.shape().dims[p.dim];
    std::vector<Value> parts;
    if (p.low > 0) {
      if (mode == Mode::kReflect) {
        parts.push_back(ir::Reverse(SliceAlong(v, p.dim, 1, p.low + 1), {p.dim}));
      } else {
        std::vector<int64_t> dims_out = v.shape().dims;
        dims_out[p.dim] = p.low;
        parts.push_back(ir::Broadcast(SliceAlong(v, p.dim, 0, 1), dims_out));
      }
    }
    parts.push_back(v);
    if (p.high > 0) {
      if (mode == Mode::kReflect) {
        parts.push_back(ir::Reverse(SliceAlong(v, p.dim, n - 1 - p.high, n - 1), {p.dim}));
      } else {
        std::vector<int64_t> dims_out = v.shape().dims;
        dims_out[p.dim] = p.high;
        parts.push_back(ir::Broadcast(SliceAlong(v, p.dim, n - 1, n), dims_out));
      }
    }
    v = parts.size() == 1 ? v : ir::Concatenate(parts, p.dim);
    int64_t crop_low = std::max<int64_t>(-signed_pad.low, 0), crop_high = std::max<int64_t>(-signed_pad.high, 0);
    if (crop_low > 0 || crop_high > 0) v = SliceAlong(v, p.dim, crop_low, v.shape().dims[p.dim] - crop_high);
  }
  return v;
}

// The adjoint of PadForward: the padded borders fold back onto the positions they copied.
Value PadBackward(Value g, const std::vector<PadDim>& dims, Mode mode) {
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    int64_t crop_low = std::max<int64_t>(-it->low, 0), crop_high = std::max<int64_t>(-it->high, 0);
    if (crop_low > 0 || crop_high > 0) g = PadAlong(g, it->dim, crop_low, crop_high);
    PadDim p{it->dim, std::max<int64_t>(it->low, 0), std::max<int64_t>(it->high, 0)};
    int64_t total = g.shape().dims[p.dim], n = total - p.low - p.high;
    Value r = SliceAlong(g, p.dim, p.low, p.low + n);
    if (p.low > 0) {
      Value left = SliceAlong(g, p.dim, 0, p.low);
      if (mode == Mode::kReflect)
        r = ir::Binary(ir::op::kAdd, r, PadAlong(ir::Reverse(left, {p.dim}), p.dim, 1, n - 1 - p.low));
      else
        r = ir::Binary(ir::op::kAdd, r, PadAlong(ir::Reshape(ir::Reduce(ir::ReduceKind::kSum, left, {p.dim}),
                                                             KeepDims(left.shape().dims, {p.dim})),
                                                 p.dim, 0, n - 1));
    }
    if (p.high > 0) {
      Value right = SliceAlong(g, p.dim, p.low + n, total);
      if (mode == Mode::kReflect)
        r = ir::Binary(ir::op::kAdd, r, PadAlong(ir::Reverse(right, {p.dim}), p.dim, n - 1 - p.high, 1));
      else
        r = ir::Binary(ir::op::kAdd, r, PadAlong(ir::Reshape(ir::Reduce(ir::ReduceKind::kSum, right, {p.dim}),
                                                             KeepDims(right.shape().dims, {p.dim})),
                                                 p.dim, n - 1, 0));
    }
    g = r;
  }
  return g;
}

at::Tensor Forward(const at::Tensor& self, at::IntArrayRef padding, int64_t k, Mode mode, const char* op) {
  std::vector<PadDim> dims = PadDims(self, padding, k, mode, op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  return AtenFromIr(Checked(op, [&] { return PadForward(x->GetIrValue(), dims, mode); }), x->device());
}

at::Tensor Backward(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef padding, int64_t k, Mode mode,
                    const char* op) {
  std::vector<PadDim> dims = PadDims(self, padding, k, mode, op);
  std::vector<int64_t> expected(self.sizes().begin(), self.sizes().end());
  for (const PadDim& p : dims) expected[p.dim] += p.low + p.high;
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(expected), op, ": grad_output ", DescribeTensor(grad_output),
              " does not match the padded input size ", at::IntArrayRef(expected));
  XlaTensorPtr g = GetXlaTensor(grad_output, op);
  return AtenFromIr(Checked(op, [&] { return PadBackward(g->GetIrValue(), dims, mode); }), g->device());
}

}  // namespace

#define XLA_PAD(name, k, mode)                                                                            \
  at::Tensor XLANativeFunctions::name(const at::Tensor& self, at::IntArrayRef padding) {                  \
    XLA_COUNT(#name);                                                                                     \
    return Forward(self, padding, k, mode, #name);                                                        \
  }                                                                                                       \
  at::Tensor XLANativeFunctions::name##_backward(const at::Tensor& grad_output, const at::Tensor& self,   \
                                                 at::IntArrayRef padding) {                               \
    XLA_COUNT(#name "_backward");                                                                         \
    return Backward(grad_output, self, padding, k, mode, #name "_backward");                              \
  }
XLA_PAD(reflection_pad1d, 1, Mode::kReflect)
XLA_PAD(reflection_pad2d, 2, Mode::kReflect)
XLA_PAD(reflection_pad3d, 3, Mode::kReflect)
XLA_PAD(replication_pad1d, 1, Mode::kReplicate)
XLA_PAD(replication_pad2d, 2, Mode::kReplicate)
XLA_PAD(replication_pad3d, 3, Mode::kReplicate)
#undef XLA_PAD

at::Tensor XLANativeFunctions::constant_pad_nd(const at::Tensor& self, at::IntArrayRef pad, const at::Scalar& value) {
  XLA_COUNT("constant_pad_nd");
  TORCH_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals ", pad.size());
  int64_t rank = self.dim();
  TORCH_CHECK(static_cast<int64_t>(pad.size()) / 2 <= rank, "Length of pad should be no more than twice the number of "
              "dimensions of the input. Pad length is ", pad.size(), " while the input has ", rank, " dimensions.");
  IrInput in = GetIrInput(self, "constant_pad_nd");
  std::vector<int64_t> low(rank, 0), high(rank, 0), interior(rank, 0);
  for (std::size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t d = rank - 1 - static_cast<int64_t>(i);
    low[d] = pad[2 * i];
    high[d] = pad[2 * i + 1];
    int64_t out = in.v.shape().dims[d] + low[d] + high[d];
    TORCH_CHECK(out >= 0, "The input size ", in.v.shape().dims[d], ", plus negative padding ", low[d], " and ", high[d],
                " resulted in a negative output size, which is invalid. Check dimension ", d, " of your input.");
  }
  ElementType type = in.v.shape().type;
  return AtenFromIr(Checked("constant_pad_nd", [&] { return ir::Pad(in.v, IrScalar(value, type), low, high, interior); }),
                    in.device);
}

}  // namespace torch_xla
