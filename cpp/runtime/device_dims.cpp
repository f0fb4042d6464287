#include "runtime/device_dims.h"

#include "runtime/sharding.h"

namespace torch_xla::runtime {

namespace {
constexpr int64_t kShortLastDim = 16;
constexpr int64_t kMinElements = 4096;
}  // namespace

std::vector<int64_t> DeviceDims(ElementType type, const std::vector<int64_t>& dims) {
  if (dims.size() < 2 || !IsFloating(type) || dims.back() >= kShortLastDim) return dims;
  // SPMD arguments and results are split by their dimensions: they keep them.
  if (spmd::Enabled()) return dims;
  int64_t elements = 1;
  for (int64_t d : dims) elements *= d;
  if (elements < kMinElements) return dims;
  return {elements};
}

}  // namespace torch_xla::runtime
