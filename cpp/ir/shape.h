#pragma once
// The static type of an IR value: element type and dimensions (always dense, row-major).
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/dims_text.h"
#include "runtime/element_type.h"

namespace torch_xla::ir {

using runtime::ElementType;

struct Shape {
  ElementType type = ElementType::kF32;
  std::vector<int64_t> dims;

  Shape() = default;
  Shape(ElementType t, std::vector<int64_t> d) : type(t), dims(std::move(d)) {}

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t numel() const;
  // "tensor<2x3xf32>", "tensor<f32>" for a scalar.
  std::string ToMlir() const;
  // "f32[2,3]", for error messages.
  std::string ToString() const;
  bool operator==(const Shape& other) const { return type == other.type && dims == other.dims; }
  bool operator!=(const Shape& other) const { return !(*this == other); }
};

using runtime::DimsToString;

}  // namespace torch_xla::ir
