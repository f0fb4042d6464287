#pragma once
// Helpers shared by the indexing kernels (ops/indexing.cpp, ops/scatter_gather.cpp,
// ops/embedding.cpp, ops/max_unpooling.cpp, ops/segment_reduce.cpp); defined in
// indexing_util.cpp.
#include <ATen/core/Tensor.h>

#include <vector>

#include "ops/kernel_util.h"

namespace torch_xla::indexing_util {

using ir::Value;

// Raises "<op>(): Expected dtype int64 [or int32] for index, got <index>" unless `index`
// has one of those types.
void CheckIndexType(const at::Tensor& index, const char* op, bool allow_int32);

// The index values as s64 with negative ones wrapped for a dimension of `size`.
Value IndexValue(const at::Tensor& index, int64_t size, const char* op);

// begin, begin + 1, ..., end - 1.
std::vector<int64_t> Range(int64_t begin, int64_t end);

// Full coordinates for gather/scatter along `dim`: [*index.shape, rank], with the
// (wrapped) index at `dim` and the position itself elsewhere.
Value Coordinates(const Value& index, int64_t dim);

}  // namespace torch_xla::indexing_util
