#include "ops/indexing_util.h"

#include <ATen/ATen.h>

#include "ops/reduce_util.h"

namespace torch_xla::indexing_util {

using ir::Shape;
using runtime::ElementType;

void CheckIndexType(const at::Tensor& index, const char* op, bool allow_int32) {
  at::ScalarType t = index.scalar_type();
  TORCH_CHECK(t == at::kLong || (allow_int32 && t == at::kInt), op, "(): Expected dtype int64",
              allow_int32 ? " or int32" : "", " for index, got ", DescribeTensor(index));
}

Value IndexValue(const at::Tensor& index, int64_t size, const char* op) {
  Value v = ir::Convert(GetXlaTensor(index, op)->GetIrValue(), ElementType::kS64);
  return reduce_util::WrapIndex(v, size);
}

std::vector<int64_t> Range(int64_t begin, int64_t end) {
  std::vector<int64_t> r;
  for (int64_t i = begin; i < end; ++i) r.push_back(i);
  return r;
}

Value Coordinates(const Value& index, int64_t dim) {
  const auto& dims = index.shape().dims;
  int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> one = dims;
  one.push_back(1);
  std::vector<Value> parts;
  for (int64_t i = 0; i < rank; ++i) {
    Value c = i == dim ? index : ir::Iota(Shape(ElementType::kS64, dims), i);
    parts.push_back(ir::Reshape(c, one));
  }
  return ir::Concatenate(parts, rank);
}

}  // namespace torch_xla::indexing_util
