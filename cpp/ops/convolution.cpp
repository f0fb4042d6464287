// Convolution kernels: convolution_overrideable (forward, plain and transposed, 1-D to
// 3-D) and convolution_backward_overrideable. PyTorch routes convolution on backends
// other than CPU/CUDA to these two ops. Everything is expressed with ir::Convolution
// in the layouts input [N, C, spatial...], weight [O, I, spatial...]:
//   forward           conv(x, w, stride, padding, dilation, feature groups)
//   grad_input        conv(dy lhs-dilated by stride, w reversed with in/out swapped)
//   grad_weight       conv(x^T, dy^T) with window strides = dilation, rhs dilation =
//                     stride and batch_group_count = groups
//   transposed conv   the grad_input of the plain convolution with the same weight.
// On the CPU device most of them run as host kernels instead, PyTorch's CPU convolution
// inside the graph (host/convolution.h says which).
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ir/builder_convolution.h"
#include "ops/host_convolution.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::Value;
using runtime::ElementType;

struct ConvParams {
  std::size_t n = 0;  // spatial rank
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
};

// A per-spatial-dimension list: one entry per spatial dimension, or one entry for all.
std::vector<int64_t> Expand(at::IntArrayRef v, std::size_t n, const char* name, const char* op) {
  TORCH_CHECK(v.size() == n || v.size() == 1, op, ": expected ", name, " to be a single integer value or a list of ",
              n, " values to match the convolution dimensions, but got ", name, "=", SizesString(v));
  return v.size() == n ? v.vec() : std::vector<int64_t>(n, v[0]);
}

// The checks PyTorch's convolution makes, with its messages; nothing malformed reaches
// the IR. `op` names the ATen op.
ConvParams Validate(const char* op, const at::Tensor& input, const at::Tensor& weight, const at::Tensor* bias,
                    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                    at::IntArrayRef output_padding, int64_t groups) {
  TORCH_CHECK(input.dim() >= 3 && input.dim() <= 5, op, ": expected a 3-D, 4-D or 5-D input (batched 1-D, 2-D or 3-D "
              "convolution), got input ", DescribeTensor(input));
  TORCH_CHECK(weight.dim() == input.dim(), op, ": expected weight to be ", input.dim(), "-D for input ",
              DescribeTensor(input), ", but got weight of size ", DescribeTensor(weight));
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), op, ": Input type (", input.scalar_type(),
              ") and weight type (", weight.scalar_type(), ") should be the same (input ", DescribeTensor(input),
              ", weight ", DescribeTensor(weight), ")");
  TORCH_CHECK(at::isFloatingType(input.scalar_type()) || at::isIntegralType(input.scalar_type(), false), op,
              ": expected a floating point or integer input, got ", DescribeTensor(input));
  ConvParams p;
  p.n = static_cast<std::size_t>(input.dim() - 2);
  p.stride = Expand(stride, p.n, "stride", op);
  p.padding = Expand(padding, p.n, "padding", op);
  p.dilation = Expand(dilation, p.n, "dilation", op);
  p.output_padding = output_padding.empty() ? std::vector<int64_t>(p.n, 0)
                                            : Expand(output_padding, p.n, "output_padding", op);
  p.transposed = transposed;
  p.groups = groups;
  TORCH_CHECK(groups > 0, op, ": non-positive groups is not supported, got groups=", groups);
  for (std::size_t i = 0; i < p.n; ++i) {
    TORCH_CHECK(p.stride[i] > 0, op, ": non-positive stride is not supported, got stride=", SizesString(p.stride));
    TORCH_CHECK(p.dilation[i] > 0, op, ": dilation should be greater than zero, got dilation=",
                SizesString(p.dilation));
    TORCH_CHECK(p.padding[i] >= 0, op, ": negative padding is not supported, got padding=", SizesString(p.padding));
    TORCH_CHECK(p.output_padding[i] >= 0, op, ": negative output_padding is not supported, got output_padding=",
                SizesString(p.output_padding));
    TORCH_CHECK(transposed ? p.output_padding[i] < std::max(p.stride[i], p.dilation[i]) : p.output_padding[i] == 0,
                op, ": output padding must be smaller than either stride or dilation, got output_padding=",
                SizesString(p.output_padding), ", stride=", SizesString(p.stride), ", dilation=",
                SizesString(p.dilation));
    TORCH_CHECK(weight.size(i + 2) > 0, op, ": kernel size must be positive, got weight of size ",
                DescribeTensor(weight));
  }
  int64_t out_channels;
  if (!transposed) {
    TORCH_CHECK(weight.size(0) >= groups && weight.size(0) % groups == 0, op, ": Given groups=", groups,
                ", expected weight to be divisible by ", groups, " at dimension 0, but got weight of size ",
                DescribeTensor(weight), " instead");
    TORCH_CHECK(input.size(1) == weight.size(1) * groups, op, ": Given groups=", groups, ", weight of size ",
                DescribeTensor(weight), ", expected input", DescribeTensor(input), " to have ", weight.size(1) * groups,
                " channels, but got ", input.size(1), " channels instead");
    out_channels = weight.size(0);
    for (std::size_t i = 0; i < p.n; ++i) {
      int64_t padded = input.size(i + 2) + 2 * p.padding[i];
      int64_t window = (weight.size(i + 2) - 1) * p.dilation[i] + 1;
      TORCH_CHECK(padded >= window, op, ": Calculated padded input size per channel: ", padded,
                  " in spatial dimension ", i, ". Kernel size (dilated): ", window,
                  ". Kernel size can't be greater than actual input size (input ", DescribeTensor(input),
                  ", weight ", DescribeTensor(weight), ", padding=", SizesString(p.padding), ", dilation=",
                  SizesString(p.dilation), ")");
    }
  } else {
    TORCH_CHECK(input.size(1) == weight.size(0), op, ": Given transposed=1, weight of size ", DescribeTensor(weight),
                ", expected input", DescribeTensor(input), " to have ", weight.size(0), " channels, but got ",
                input.size(1), " channels instead");
    TORCH_CHECK(input.size(1) % groups == 0, op, ": Given groups=", groups, " and transposed=1, expected the ",
                input.size(1), " input channels of weight ", DescribeTensor(weight), " to be divisible by ", groups);
    out_channels = weight.size(1) * groups;
    for (std::size_t i = 0; i < p.n; ++i) {
      int64_t out = (input.size(i + 2) - 1) * p.stride[i] - 2 * p.padding[i] +
                    (weight.size(i + 2) - 1) * p.dilation[i] + p.output_padding[i] + 1;
      TORCH_CHECK(input.size(i + 2) > 0 && out > 0, op, ": transposed convolution of input ", DescribeTensor(input),
                  " with weight ", DescribeTensor(weight), ", stride=", SizesString(p.stride), ", padding=",
                  SizesString(p.padding), ", dilation=", SizesString(p.dilation),
                  " gives a non-positive output size ", out, " in spatial dimension ", i);
    }
  }
  if (bias != nullptr && bias->defined()) {
    TORCH_CHECK(bias->dim() == 1 && bias->size(0) == out_channels, op, ": Given weight of size ",
                DescribeTensor(weight), ", expected bias to be 1-dimensional with ", out_channels,
                " elements, but got bias of size ", DescribeTensor(*bias), " instead");
    TORCH_CHECK(bias->scalar_type() == input.scalar_type(), op, ": Input type (", input.scalar_type(),
                ") and bias type (", bias->scalar_type(), ") should be the same");
  }
  return p;
}

std::vector<int64_t> Ones(std::size_t n) { return std::vector<int64_t>(n, 1); }

// [1, 0, 2, 3, ...] for rank n + 2.
std::vector<int64_t> SwapFirstTwo(std::size_t n) {
  std::vector<int64_t> perm = {1, 0};
  for (std::size_t i = 0; i < n; ++i) perm.push_back(static_cast<int64_t>(i + 2));
  return perm;
}

// Weight [G*A, B, k...] -> [G*B, A, k...] with the spatial dimensions reversed: the kernel
// that maps a convolution's output back onto its input.
Value SwapKernel(const Value& w, int64_t groups, std::size_t n) {
  const auto& d = w.shape().dims;
  std::vector<int64_t> grouped = {groups, d[0] / groups, d[1]};
  std::vector<int64_t> perm = {0, 2, 1};
  std::vector<int64_t> swapped = {groups * d[1], d[0] / groups};
  std::vector<int64_t> spatial;
  for (std::size_t i = 0; i < n; ++i) {
    grouped.push_back(d[i + 2]);
    perm.push_back(static_cast<int64_t>(i + 3));
    swapped.push_back(d[i + 2]);
    spatial.push_back(static_cast<int64_t>(i + 2));
  }
  Value v = groups == 1 ? ir::Transpose(w, SwapFirstTwo(n))
                        : ir::Reshape(ir::Transpose(ir::Reshape(w, grouped), perm), swapped);
  return ir::Reverse(v, spatial);
}

// Overlap-add along the last two dimensions of v [..., k, l]: out[..., x * stride +
// j * dilation] sums v[..., j, x], for out positions 0 .. (l - 1) * stride + (k - 1) *
// dilation. Done without a scatter: each row j is padded (stride - 1 zeros between its
// elements, then zeros up to length full + dilation), the rows are laid end to end, and
// read back as rows of length `full`, which shifts row j by j * dilation; a sum over
// the rows adds the shifted rows up.
Value OverlapAdd(const Value& v, int64_t stride, int64_t dilation) {
  std::vector<int64_t> dims = v.shape().dims;
  const std::size_t r = dims.size();
  const int64_t k = dims[r - 2], l = dims[r - 1];
  const int64_t spread = (l - 1) * stride + 1, full = spread + (k - 1) * dilation, row = full + dilation;
  std::vector<int64_t> lo(r, 0), hi(r, 0), interior(r, 0);
  hi[r - 1] = row - spread;
  interior[r - 1] = stride - 1;
  Value padded = ir::Pad(v, ir::Constant(0, ir::Shape(v.shape().type, {})), lo, hi, interior);
  std::vector<int64_t> flat(dims.begin(), dims.end() - 2);
  flat.push_back(k * row);
  std::vector<int64_t> start(r - 1, 0), limit = flat, strides(r - 1, 1);
  limit.back() = k * full;
  std::vector<int64_t> grid(dims.begin(), dims.end() - 2);
  grid.push_back(k);
  grid.push_back(full);
  Value shifted = ir::Reshape(ir::Slice(ir::Reshape(padded, flat), start, limit, strides), grid);
  return ir::Reduce(ir::ReduceKind::kSum, shifted, {static_cast<int64_t>(r - 2)});
}

// Whether InputGrad goes through OverlapAddInputGrad: on the CPU device, for one group,
// stride 1, and an input at least 1.5 times the output (a kernel large for its feature
// map, as in unpadded convolutions on small maps), where XLA's full correlation over
// the padded gradient does most of its work on padding. Measured (XLA's convolution ->
// overlap-add): 20 -> 10 channels 5x5 on 12x12 (MNIST), 3.5 -> 1.7 ms; 64 -> 64 5x5 on
// 7x7, 4.2 -> 0.5 ms; 64 -> 32 3x3 on 8x8, 2.0 -> 1.1 ms. With the input the size of
// the output ("same" padding) the product's columns are as large as the correlation's
// work and it loses (64 -> 64 3x3 on 56x56: 12 -> 29 ms), so those keep XLA's.
bool UseOverlapAddInputGrad(const Value& dy, const Value& w, const std::vector<int64_t>& in_spatial,
                            const ConvParams& p) {
  constexpr int64_t kMaxColumns = int64_t{1} << 24;  // elements of the product's result
  if (p.groups != 1) return false;
  double in = 1, out = 1;
  int64_t columns = dy.shape().dims[0] * w.shape().dims[1];
  for (std::size_t i = 0; i < p.n; ++i) {
    if (p.stride[i] != 1) return false;
    in *= static_cast<double>(in_spatial[i]);
    out *= static_cast<double>(dy.shape().dims[i + 2]);
    columns *= dy.shape().dims[i + 2] * w.shape().dims[i + 2];
  }
  return in >= 1.5 * out && columns <= kMaxColumns && runtime::Client::Get().LowersForCpu();
}

// The input gradient of a convolution with one group, as one matrix product and an
// overlap-add per spatial dimension: cols[n, o..., c, k...] = sum_f dy[n, f, o...] *
// w[f, c, k...], then each output position o adds its taps k into input positions
// o * stride + k * dilation - padding.
Value OverlapAddInputGrad(const Value& dy, const Value& w, const std::vector<int64_t>& in_spatial,
                          const ConvParams& p) {
  ElementType type = dy.shape().type, acc_type = AccumulationType(type);
  const int64_t n = static_cast<int64_t>(p.n);
  Value v = ir::DotGeneral(ir::Convert(dy, acc_type), ir::Convert(w, acc_type), {}, {}, {1}, {0}, acc_type);
  // Before spatial dimension i, v is [N, o_i .. o_{n-1}, C, k_i .. k_{n-1}, x_0 .. x_{i-1}]:
  // o_i at 1 and k_i at n - i + 2 go to the end (k_i, o_i), the overlap-add turns them
  // into x_i, so after the last dimension v is [N, C, x...].
  for (int64_t i = 0; i < n; ++i) {
    const int64_t rank = static_cast<int64_t>(v.shape().dims.size()), out_pos = 1, tap_pos = n - i + 2;
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d)
      if (d != out_pos && d != tap_pos) perm.push_back(d);
    perm.push_back(tap_pos);
    perm.push_back(out_pos);
    v = OverlapAdd(ir::Transpose(v, perm), p.stride[i], p.dilation[i]);
    // Full positions start at -padding; the forward conv may not have reached the end.
    std::vector<int64_t> lo(rank - 1, 0), hi(rank - 1, 0), interior(rank - 1, 0);
    lo.back() = -p.padding[i];
    hi.back() = in_spatial[i] + p.padding[i] - v.shape().dims.back();
    v = ir::Pad(v, ir::Constant(0, ir::Shape(acc_type, {})), lo, hi, interior);
  }
  return ir::Convert(v, type);
}

// The gradient with respect to the input x (spatial sizes `in_spatial`) of
// dy = conv(x, w, stride, padding, dilation, groups).
Value InputGrad(const Value& dy, const Value& w, const std::vector<int64_t>& in_spatial, const ConvParams& p) {
  if (UseOverlapAddInputGrad(dy, w, in_spatial, p)) return OverlapAddInputGrad(dy, w, in_spatial, p);
  std::vector<int64_t> lo(p.n), hi(p.n);
  for (std::size_t i = 0; i < p.n; ++i) {
    int64_t k = w.shape().dims[i + 2], out = dy.shape().dims[i + 2];
    lo[i] = p.dilation[i] * (k - 1) - p.padding[i];
    hi[i] = in_spatial[i] + p.padding[i] - 1 - (out - 1) * p.stride[i];
  }
  return ir::Convolution(dy, SwapKernel(w, p.groups, p.n), Ones(p.n), lo, hi, p.stride, p.dilation, p.groups, 1);
}

// The gradient with respect to w (spatial sizes `k_spatial`) of
// dy = conv(x, w, stride, padding, dilation, groups).
Value WeightGrad(const Value& x, const Value& dy, const std::vector<int64_t>& k_spatial, const ConvParams& p) {
  std::vector<int64_t> lo(p.n), hi(p.n);
  for (std::size_t i = 0; i < p.n; ++i) {
    int64_t in = x.shape().dims[i + 2], out = dy.shape().dims[i + 2];
    lo[i] = p.padding[i];
    hi[i] = (k_spatial[i] - 1) * p.dilation[i] + (out - 1) * p.stride[i] + 1 - in - p.padding[i];
  }
  std::vector<int64_t> perm = SwapFirstTwo(p.n);
  Value g = ir::Convolution(ir::Transpose(x, perm), ir::Transpose(dy, perm), p.dilation, lo, hi, Ones(p.n), p.stride,
                            1, p.groups);
  return ir::Transpose(g, perm);
}

std::vector<int64_t> Spatial(const Value& v) {
  return std::vector<int64_t>(v.shape().dims.begin() + 2, v.shape().dims.end());
}

std::vector<int64_t> NonFeatureDims(std::size_t n) {
  std::vector<int64_t> dims = {0};
  for (std::size_t i = 0; i < n; ++i) dims.push_back(static_cast<int64_t>(i + 2));
  return dims;
}


int64_t OutChannels(const at::Tensor& weight, const ConvParams& p) {
  return p.transposed ? weight.size(1) * p.groups : weight.size(0);
}

// The size of the output of the convolution of `input` with `weight`.
std::vector<int64_t> ForwardSizes(const at::Tensor& input, const at::Tensor& weight, const ConvParams& p) {
  std::vector<int64_t> sizes = {input.size(0), OutChannels(weight, p)};
  for (std::size_t i = 0; i < p.n; ++i) {
    int64_t in = input.size(i + 2), k = weight.size(i + 2);
    sizes.push_back(p.transposed ? (in - 1) * p.stride[i] - 2 * p.padding[i] + (k - 1) * p.dilation[i] +
                                       p.output_padding[i] + 1
                                 : (in + 2 * p.padding[i] - (k - 1) * p.dilation[i] - 1) / p.stride[i] + 1);
  }
  return sizes;
}

// Crops a result whose spatial sizes exceed `spatial` (only when output_padding >= stride).
Value CropTo(const Value& v, const std::vector<int64_t>& spatial) {
  std::vector<int64_t> start(v.shape().dims.size(), 0), limit = v.shape().dims, strides(limit.size(), 1);
  for (std::size_t i = 0; i < spatial.size(); ++i) limit[i + 2] = std::min(limit[i + 2], spatial[i]);
  return ir::Slice(v, start, limit, strides);
}

// Whether the forward convolution goes through SingleChannelConvolution: on the CPU
// device, for a plain convolution of one input channel with a small kernel (a network's
// first layer on grayscale data). XLA's CPU convolution packs image patches for a matrix
// product, which for one channel is mostly packing: MNIST's first layer (1 -> 10
// channels, 5x5, batch 128) took 2.6-3.4 ms that way and 1.0-1.6 ms as taps.
bool UseSingleChannelTaps(const Value& x, const Value& w, const ConvParams& p) {
  constexpr int64_t kMaxTaps = 49;
  if (p.transposed || p.groups != 1 || w.shape().dims[1] != 1) return false;
  int64_t taps = 1;
  for (std::size_t i = 0; i < p.n; ++i) taps *= w.shape().dims[i + 2];
  return taps <= kMaxTaps && runtime::Client::Get().LowersForCpu();
}

// conv(x, w) for x [N, 1, s...], w [F, 1, k...] as a sum over the kernel taps of a
// strided window of x times that tap's F weights (ir::SingleChannelTaps: one node when
// tracing, one element-wise fusion in XLA).
Value SingleChannelConvolution(const Value& x, const Value& w, const ConvParams& p) {
  // Computed once: XLA would otherwise fuse the whole sum into each consumer (a
  // max-pool reads every element several times).
  return ir::Materialize(ir::SingleChannelTaps(x, w, p.stride, p.padding, p.dilation));
}

}  // namespace

at::Tensor XLANativeFunctions::convolution_overrideable(const at::Tensor& input, const at::Tensor& weight,
                                                        const std::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                                        at::IntArrayRef padding, at::IntArrayRef dilation,
                                                        bool transposed, at::IntArrayRef output_padding,
                                                        int64_t groups) {
  XLA_COUNT("convolution_overrideable");
  const char* op = "convolution";
  const at::Tensor* b = bias.has_value() && bias->defined() ? &*bias : nullptr;
  ConvParams p = Validate(op, input, weight, b, stride, padding, dilation, transposed, output_padding, groups);
  int device = b ? CommonDevice({&input, &weight, b}, op) : CommonDevice({&input, &weight}, op);
  const int64_t in_channels = input.size(1), out_channels = OutChannels(weight, p);
  Value x = GetXlaTensor(input, op)->GetIrValue();
  Value w = GetXlaTensor(weight, op)->GetIrValue();
  Value out = Checked(op, [&] {
    // Taps fuse with what follows and measured as fast as the host kernel.
    if (UseSingleChannelTaps(x, w, p) && GetHostConvolutionMode() != HostConvolutionMode::kAlways)
      return SingleChannelConvolution(x, w, p);
    if (UseHostConvolution(ir::HostConvolutionResult::kForward, input.scalar_type(), in_channels, out_channels,
                           p.groups))
      return ir::HostConvolution(ir::HostConvolutionResult::kForward, x, w, ForwardSizes(input, weight, p), p.stride,
                                 p.padding, p.dilation, p.output_padding, p.transposed, p.groups);
    if (!p.transposed) return ir::Convolution(x, w, p.stride, p.padding, p.padding, Ones(p.n), p.dilation, p.groups, 1);
    std::vector<int64_t> out_spatial(p.n);
    for (std::size_t i = 0; i < p.n; ++i)
      out_spatial[i] = (x.shape().dims[i + 2] - 1) * p.stride[i] - 2 * p.padding[i] +
                       (w.shape().dims[i + 2] - 1) * p.dilation[i] + p.output_padding[i] + 1;
    return InputGrad(x, w, out_spatial, p);
  });
  if (b) {
    Value bv = GetXlaTensor(*b, op)->GetIrValue();
    out = Checked(op, [&] {
      return ir::Binary(ir::op::kAdd, out, ir::BroadcastInDim(bv, out.shape().dims, {1}));
    });
  }
  return AtenFromIr(out, device);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::convolution_backward_overrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  XLA_COUNT("convolution_backward_overrideable");
  const char* op = "convolution_backward";
  ConvParams p = Validate(op, input, weight, nullptr, stride, padding, dilation, transposed, output_padding, groups);
  int device = CommonDevice({&grad_output, &input, &weight}, op);
  const int64_t in_channels = input.size(1), out_channels = OutChannels(weight, p);
  // The forward output's shape, which grad_output must have.
  std::vector<int64_t> expected = ForwardSizes(input, weight, p);
  TORCH_CHECK(grad_output.sizes().vec() == expected, op, ": expected grad_output of size ", SizesString(expected),
              " for input ", DescribeTensor(input), " and weight ", DescribeTensor(weight), ", but got ",
              DescribeTensor(grad_output));
  TORCH_CHECK(grad_output.scalar_type() == input.scalar_type(), op, ": grad_output type (",
              grad_output.scalar_type(), ") and input type (", input.scalar_type(), ") should be the same");
  Value dy = GetXlaTensor(grad_output, op)->GetIrValue();
  Value x = GetXlaTensor(input, op)->GetIrValue();
  Value w = GetXlaTensor(weight, op)->GetIrValue();
  at::Tensor grad_input, grad_weight, grad_bias;
  // A gradient that UseHostConvolution gives to the host: PyTorch's kernel in the graph.
  auto host = [&](ir::HostConvolutionResult what, const Value& b, const at::Tensor& like) {
    return ir::HostConvolution(what, dy, b, like.sizes().vec(), p.stride, p.padding, p.dilation, p.output_padding,
                               p.transposed, p.groups);
  };
  if (output_mask[0]) {
    Value gi = Checked(op, [&] {
      if (UseHostConvolution(ir::HostConvolutionResult::kGradInput, input.scalar_type(), in_channels, out_channels,
                             p.groups))
        return host(ir::HostConvolutionResult::kGradInput, w, input);
      if (!p.transposed) return InputGrad(dy, w, Spatial(x), p);
      Value g = ir::Convolution(dy, w, p.stride, p.padding, p.padding, Ones(p.n), p.dilation, p.groups, 1);
      return CropTo(g, Spatial(x));
    });
    grad_input = AtenFromIr(gi, device);
  }
  if (output_mask[1]) {
    Value gw = Checked(op, [&] {
      if (UseHostConvolution(ir::HostConvolutionResult::kGradWeight, input.scalar_type(), in_channels, out_channels,
                             p.groups))
        return host(ir::HostConvolutionResult::kGradWeight, x, weight);
      return p.transposed ? WeightGrad(dy, x, Spatial(w), p) : WeightGrad(x, dy, Spatial(w), p);
    });
    grad_weight = AtenFromIr(gw, device);
  }
  if (output_mask[2]) {
    ElementType type = dy.shape().type;
    Value gb = Checked(op, [&] {
      Value acc = ir::Convert(dy, AccumulationType(type));
      return ir::Convert(ir::Reduce(ir::ReduceKind::kSum, acc, NonFeatureDims(p.n)), type);
    });
    grad_bias = AtenFromIr(gb, device);
  }
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace torch_xla
