#include "runtime/dims_text.h"

namespace torch_xla::runtime {

std::string DimsToString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

}  // namespace torch_xla::runtime
