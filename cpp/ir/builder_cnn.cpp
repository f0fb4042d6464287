#include "ir/builder_cnn.h"

#include "runtime/pass_through_kernel.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

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
  Attrs attrs;
  attrs.ints = window;
  attrs.ints.insert(attrs.ints.end(), strides.begin(), strides.end());
  return Value(MakeNode(OpKind::Get("xla::reduce_window_max"), std::vector<Value>{v}, Shape(in.type, out),
                        std::move(attrs)));
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
  if (runtime::PassThroughKernelAvailable()) return Value(MakeNode(kPassThrough, std::vector<Value>{v}, v.shape()));
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

}  // namespace torch_xla::ir
