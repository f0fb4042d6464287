#include "host/row_sum_kernel.h"

#include <algorithm>
#include <stdexcept>

#include "host/host_kernel.h"

namespace torch_xla::host {
namespace {

constexpr int kLanes = 16;
// Elements a part takes at least (one part per thread beyond that).
constexpr int64_t kMinPartElements = 64 * 1024;

template <typename T>
void SumRows(const T* x, T* out, int64_t cols, int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const T* row = x + r * cols;
    T lanes[kLanes] = {};
    int64_t c = 0;
    for (; c + kLanes <= cols; c += kLanes)
      for (int l = 0; l < kLanes; ++l) lanes[l] += row[c + l];
    T tail = 0;
    for (; c < cols; ++c) tail += row[c];
    for (int width = kLanes / 2; width > 0; width /= 2)
      for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
    out[r] = lanes[0] + tail;
  }
}

void RowSum(const HostKernelCall& call) {
  if (call.operands.size() != 1 || call.results.size() != 1 || call.operands[0].dims.size() != 2 ||
      call.results[0].dims != std::vector<int64_t>{call.operands[0].dims[0]} ||
      call.operands[0].type != call.results[0].type ||
      (call.operands[0].type != runtime::ElementType::kF32 && call.operands[0].type != runtime::ElementType::kF64))
    throw std::invalid_argument("row sum kernel: expected a float matrix and a result of its row count");
  const int64_t rows = call.operands[0].dims[0], cols = call.operands[0].dims[1];
  const int64_t parts =
      std::max<int64_t>(1, std::min({call.parallel.thread_count(), rows, rows * cols / kMinPartElements}));
  call.parallel.For(parts, [&](int64_t part) {
    const int64_t begin = rows * part / parts, end = rows * (part + 1) / parts;
    if (call.operands[0].type == runtime::ElementType::kF32) {
      SumRows(static_cast<const float*>(call.operands[0].data), static_cast<float*>(call.results[0].data), cols,
              begin, end);
    } else {
      SumRows(static_cast<const double*>(call.operands[0].data), static_cast<double*>(call.results[0].data), cols,
              begin, end);
    }
  });
}

}  // namespace

bool RowSumKernelAvailable() {
  static const bool available = RegisterCpuHostKernel(kRowSumTarget, HostKernelHandler<RowSum>);
  return available;
}

}  // namespace torch_xla::host
