#include "ir/shape.h"

namespace torch_xla::ir {

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string Shape::ToMlir() const {
  std::string s = "tensor<";
  for (int64_t d : dims) {
    s += std::to_string(d);
    s += 'x';
  }
  s += runtime::MlirTypeName(type);
  s += '>';
  return s;
}

std::string Shape::ToString() const { return std::string(runtime::MlirTypeName(type)) + DimsToString(dims); }

}  // namespace torch_xla::ir
