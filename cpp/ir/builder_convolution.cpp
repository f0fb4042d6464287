// The convolution constructors and their shape rules (see ir/builder_convolution.h).
#include "ir/builder_convolution.h"

#include <stdexcept>
#include <string>

#include "ir/attrs_reader.h"

namespace torch_xla::ir {
namespace {

const OpKind kConvolution = OpKind::Get("stablehlo.convolution");
const OpKind kHostConvolution = OpKind::Get("xla::host_convolution");
const OpKind kSingleChannelTaps = OpKind::Get("xla::single_channel_taps");

[[noreturn]] void Fail(const std::string& what) { throw std::invalid_argument("convolution: " + what); }

// Checks an input and a kernel of the same rank (3 to 5) and element type; returns
// "input <shape>, kernel <shape>" for the caller's further messages.
std::string CheckInputAndKernel(const Shape& input, const Shape& kernel) {
  std::string shapes = "input " + input.ToString() + ", kernel " + kernel.ToString();
  if (input.rank() < 3 || input.rank() > 5 || input.rank() != kernel.rank())
    Fail("expected input and kernel of equal rank 3 to 5, got " + shapes);
  if (input.type != kernel.type) Fail("input and kernel element types differ: " + shapes);
  return shapes;
}

}  // namespace

Value Convolution(const Value& lhs, const Value& rhs, const std::vector<int64_t>& window_strides,
                  const std::vector<int64_t>& padding_low, const std::vector<int64_t>& padding_high,
                  const std::vector<int64_t>& lhs_dilation, const std::vector<int64_t>& rhs_dilation,
                  int64_t feature_group_count, int64_t batch_group_count) {
  const Shape& a = lhs.shape();
  const Shape& b = rhs.shape();
  const std::string shapes = CheckInputAndKernel(a, b);
  const std::size_t n = static_cast<std::size_t>(a.rank() - 2);
  for (const auto* list : {&window_strides, &padding_low, &padding_high, &lhs_dilation, &rhs_dilation})
    if (list->size() != n)
      Fail("expected " + std::to_string(n) + " values per spatial attribute, got " + DimsToString(*list) +
           " for " + shapes);
  for (std::size_t i = 0; i < n; ++i)
    if (window_strides[i] < 1 || lhs_dilation[i] < 1 || rhs_dilation[i] < 1)
      Fail("strides and dilations must be positive, got strides " + DimsToString(window_strides) +
           ", lhs_dilation " + DimsToString(lhs_dilation) + ", rhs_dilation " + DimsToString(rhs_dilation));
  if (feature_group_count < 1 || batch_group_count < 1 || (feature_group_count > 1 && batch_group_count > 1))
    Fail("bad group counts: feature_group_count " + std::to_string(feature_group_count) + ", batch_group_count " +
         std::to_string(batch_group_count));
  const int64_t batch = a.dims[0], in_features = a.dims[1];
  const int64_t out_features = b.dims[0], kernel_in_features = b.dims[1];
  if (in_features != kernel_in_features * feature_group_count)
    Fail("input features " + std::to_string(in_features) + " != kernel input features " +
         std::to_string(kernel_in_features) + " * feature_group_count " + std::to_string(feature_group_count) +
         " (" + shapes + ")");
  if (out_features % feature_group_count != 0 || out_features % batch_group_count != 0)
    Fail("kernel output features " + std::to_string(out_features) + " not divisible by the group count (" +
         shapes + ")");
  if (batch % batch_group_count != 0)
    Fail("batch " + std::to_string(batch) + " not divisible by batch_group_count " +
         std::to_string(batch_group_count) + " (" + shapes + ")");

  std::vector<int64_t> dims = {batch / batch_group_count, out_features};
  for (std::size_t i = 0; i < n; ++i) {
    int64_t in = a.dims[i + 2], k = b.dims[i + 2];
    int64_t dilated_in = in == 0 ? 0 : (in - 1) * lhs_dilation[i] + 1;
    int64_t padded = dilated_in + padding_low[i] + padding_high[i];
    int64_t window = k == 0 ? 0 : (k - 1) * rhs_dilation[i] + 1;
    if (padded < 0 || k == 0 || padded < window)
      Fail("window of size " + std::to_string(window) + " does not fit padded input of size " +
           std::to_string(padded) + " in spatial dimension " + std::to_string(i) + " (" + shapes + ")");
    dims.push_back((padded - window) / window_strides[i] + 1);
  }

  const ConvolutionAttrs attrs{window_strides, padding_low, padding_high, lhs_dilation, rhs_dilation,
                               feature_group_count, batch_group_count};
  return Value(MakeNode(kConvolution, std::vector<Value>{lhs, rhs}, Shape(a.type, std::move(dims)), attrs.ToAttrs()));
}

Value HostConvolution(HostConvolutionResult what, const Value& a, const Value& b, const std::vector<int64_t>& result,
                      const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                      const std::vector<int64_t>& dilation, const std::vector<int64_t>& output_padding,
                      bool transposed, int64_t groups) {
  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  const std::string shapes = "operands " + sa.ToString() + ", " + sb.ToString() + ", result " + DimsToString(result);
  if (sa.rank() < 3 || sa.rank() > 5 || sa.rank() != sb.rank() || static_cast<int64_t>(result.size()) != sa.rank())
    Fail("expected operands and result of equal rank 3 to 5, got " + shapes);
  if (sa.type != sb.type) Fail("operand element types differ: " + shapes);
  const std::size_t n = static_cast<std::size_t>(sa.rank() - 2);
  for (const auto* list : {&stride, &padding, &dilation, &output_padding})
    if (list->size() != n) Fail("expected " + std::to_string(n) + " values per spatial attribute, got " +
                                DimsToString(*list) + " for " + shapes);
  Attrs attrs;
  attrs.ints = host::ConvolutionConfig{what, stride, padding, dilation, output_padding, transposed, groups}.ToInts();
  return Value(MakeNode(kHostConvolution, std::vector<Value>{a, b}, Shape(sa.type, result), std::move(attrs)));
}

Value SingleChannelTaps(const Value& x, const Value& w, const std::vector<int64_t>& stride,
                        const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
  const Shape& sx = x.shape();
  const Shape& sw = w.shape();
  const std::string shapes = CheckInputAndKernel(sx, sw);
  if (sx.dims[1] != 1 || sw.dims[1] != 1) Fail("single-channel taps need one input channel, got " + shapes);
  const std::size_t n = static_cast<std::size_t>(sx.rank() - 2);
  for (const auto* list : {&stride, &padding, &dilation})
    if (list->size() != n)
      Fail("expected " + std::to_string(n) + " values per spatial attribute, got " + DimsToString(*list) + " for " +
           shapes);
  std::vector<int64_t> out = {sx.dims[0], sw.dims[0]};
  for (std::size_t i = 0; i < n; ++i) {
    if (stride[i] < 1 || dilation[i] < 1 || padding[i] < 0 || sw.dims[i + 2] < 1)
      Fail("bad stride " + DimsToString(stride) + ", padding " + DimsToString(padding) + " or dilation " +
           DimsToString(dilation) + " for " + shapes);
    const int64_t span = (sw.dims[i + 2] - 1) * dilation[i] + 1;
    const int64_t padded = sx.dims[i + 2] + 2 * padding[i];
    if (padded < span) Fail("the kernel's extent exceeds the padded input: " + shapes);
    out.push_back((padded - span) / stride[i] + 1);
  }
  return Value(MakeNode(kSingleChannelTaps, std::vector<Value>{x, w}, Shape(sx.type, std::move(out)),
                        SingleChannelTapsAttrs{stride, padding, dilation}.ToAttrs()));
}

// [n, window_strides (n), padding_low (n), padding_high (n), lhs_dilation (n),
//  rhs_dilation (n), feature_group_count, batch_group_count]
Attrs ConvolutionAttrs::ToAttrs() const {
  const std::size_t n = window_strides.size();
  Attrs attrs;
  attrs.ints.push_back(static_cast<int64_t>(n));
  for (const auto* list : {&window_strides, &padding_low, &padding_high, &lhs_dilation, &rhs_dilation}) {
    if (list->size() != n) Fail("the spatial attributes differ in length");
    AppendInts(attrs.ints, *list);
  }
  attrs.ints.push_back(feature_group_count);
  attrs.ints.push_back(batch_group_count);
  return attrs;
}

ConvolutionAttrs ConvolutionAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "convolution");
  const int64_t n = r.Next();
  ConvolutionAttrs a;
  for (auto* list : {&a.window_strides, &a.padding_low, &a.padding_high, &a.lhs_dilation, &a.rhs_dilation})
    *list = r.Take(n);
  a.feature_group_count = r.Next();
  a.batch_group_count = r.Next();
  r.Finish();
  return a;
}

// [n, stride (n), padding (n), dilation (n)]
Attrs SingleChannelTapsAttrs::ToAttrs() const {
  const std::size_t n = stride.size();
  Attrs attrs;
  attrs.ints.push_back(static_cast<int64_t>(n));
  for (const auto* list : {&stride, &padding, &dilation}) {
    if (list->size() != n) Fail("the spatial attributes differ in length");
    AppendInts(attrs.ints, *list);
  }
  return attrs;
}

SingleChannelTapsAttrs SingleChannelTapsAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "single-channel taps");
  const int64_t n = r.Next();
  SingleChannelTapsAttrs a;
  for (auto* list : {&a.stride, &a.padding, &a.dilation}) *list = r.Take(n);
  r.Finish();
  return a;
}

}  // namespace torch_xla::ir
