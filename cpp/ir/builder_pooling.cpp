#include "ir/builder_pooling.h"

#include "host/max_pool_kernel.h"
#include "host/pass_through_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "ir/attrs_reader.h"

namespace torch_xla::ir {

Value ReduceWindowMax(const Value& v, const std::vector<int64_t>& window, const std::vector<int64_t>& strides) {
  const Shape& in = v.shape();
  if (static_cast<int64_t>(window.size()) != in.rank() || static_cast<int64_t>(strides.size()) != in.rank())
    throw std::invalid_argument("reduce_window: window " + DimsToString(window) + " / strides " +
                                DimsToString(strides) + " do not match " + in.ToString());
  std::vector<int64_t> out(in.rank());
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (window[i] < 1 || strides[i] < 1 || window[i] > in.dims[i])
      throw std::invalid_argument("reduce_window: window " + DimsToString(window) + " / strides " +
                                  DimsToString(strides) + " do not fit " + in.ToString());
    out[i] = (in.dims[i] - window[i]) / strides[i] + 1;
  }
  return Value(MakeNode(OpKind::Get("xla::reduce_window_max"), std::vector<Value>{v}, Shape(in.type, out),
                        ReduceWindowMaxAttrs{window, strides}.ToAttrs()));
}

// [window..., strides...]
Attrs ReduceWindowMaxAttrs::ToAttrs() const {
  if (window.size() != strides.size())
    throw std::invalid_argument("reduce_window: window " + DimsToString(window) + " and strides " +
                                DimsToString(strides) + " differ in length");
  Attrs attrs;
  AppendInts(attrs.ints, window);
  AppendInts(attrs.ints, strides);
  return attrs;
}

ReduceWindowMaxAttrs ReduceWindowMaxAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "reduce_window");
  if (r.left() % 2 != 0) r.Malformed();
  const int64_t rank = static_cast<int64_t>(r.left() / 2);
  ReduceWindowMaxAttrs a;
  a.window = r.Take(rank);
  a.strides = r.Take(rank);
  return a;
}

namespace {

double Lowest(ElementType type) {
  if (runtime::IsFloating(type)) return -std::numeric_limits<double>::infinity();
  if (type == ElementType::kPred || runtime::IsUnsigned(type)) return 0;
  return -std::ldexp(1.0, static_cast<int>(runtime::ElementSize(type) * 8 - 1));
}

}  // namespace

Value Materialize(const Value& v) {
  static const OpKind kPassThrough = OpKind::Get("xla::pass_through");
  if (host::PassThroughKernelAvailable()) return Value(MakeNode(kPassThrough, std::vector<Value>{v}, v.shape()));
  std::vector<int64_t> dims = v.shape().dims;
  std::vector<int64_t> one = dims, two = dims, window(dims.size() + 1, 1), strides(dims.size() + 1, 1);
  one.push_back(1);
  two.push_back(2);
  window.back() = 2;
  // max(v, lowest) == v; a pair of two copies of v would be simplified away by XLA.
  Value col = Reshape(v, one);
  Value pair = Concatenate({col, Constant(Lowest(v.shape().type), Shape(v.shape().type, one))},
                           static_cast<int64_t>(dims.size()));
  return Reshape(ReduceWindowMax(pair, window, strides), dims);
}

bool HostMaxPoolAvailable(ElementType type) {
  return (type == ElementType::kF32 || type == ElementType::kF64) && host::MaxPoolKernelsAvailable();
}

std::pair<Value, Value> HostMaxPool(const Value& x, const std::vector<int64_t>& out,
                                    const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                                    const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
  static const OpKind kHostMaxPool = OpKind::Get("xla::host_max_pool");
  const Shape& in = x.shape();
  const int64_t n = static_cast<int64_t>(kernel.size());
  if ((n != 2 && n != 3) || in.rank() < n || static_cast<int64_t>(out.size()) != n || stride.size() != kernel.size() ||
      padding.size() != kernel.size() || dilation.size() != kernel.size())
    throw std::invalid_argument("host max pool: expected 2 or 3 spatial dimensions of " + in.ToString() +
                                ", got kernel " + DimsToString(kernel) + " and output " + DimsToString(out));
  std::vector<int64_t> dims(in.dims.begin(), in.dims.end() - n);
  dims.insert(dims.end(), out.begin(), out.end());
  Attrs attrs;
  attrs.ints = host::MaxPoolConfig{kernel, stride, padding, dilation}.ToInts();
  NodePtr node = MakeNode(kHostMaxPool, std::vector<Value>{x},
                          std::vector<Shape>{Shape(in.type, dims), Shape(ElementType::kS64, dims)}, std::move(attrs));
  return {Value(node, 0), Value(node, 1)};
}

Value HostMaxPoolBackward(const Value& grad, const Value& indices, const std::vector<int64_t>& input, int64_t n) {
  static const OpKind kHostMaxPoolBackward = OpKind::Get("xla::host_max_pool_backward");
  const Shape& g = grad.shape();
  if ((n != 2 && n != 3) || indices.shape().dims != g.dims || indices.shape().type != ElementType::kS64 ||
      g.rank() != static_cast<int64_t>(input.size()) || g.rank() < n ||
      !std::equal(input.begin(), input.end() - n, g.dims.begin()))
    throw std::invalid_argument("host max pool backward: expected s64 indices of the gradient's shape " +
                                g.ToString() + " and an input of its leading dimensions, got " +
                                indices.shape().ToString() + " and " + DimsToString(input));
  Attrs attrs;
  attrs.ints = {n};
  return Value(MakeNode(kHostMaxPoolBackward, std::vector<Value>{grad, indices}, Shape(g.type, input),
                        std::move(attrs)));
}

}  // namespace torch_xla::ir
