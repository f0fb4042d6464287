// Dimensions as error messages show them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace torch_xla::runtime {

// "[2, 3]"; "[]" for a scalar.
std::string DimsToString(const std::vector<int64_t>& dims);

}  // namespace torch_xla::runtime
