#include "host/column_sum_kernel.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "host/host_kernel.h"

namespace torch_xla::host {
namespace {

constexpr int64_t kBlockRows = 64;
// Columns a part takes at least (one part per thread beyond that).
constexpr int64_t kMinPartColumns = 64;

template <typename T>
void SumColumns(const T* x, T* out, int64_t rows, int64_t cols, int64_t begin, int64_t end) {
  const int64_t width = end - begin;
  std::vector<T> block(width), total(width, T(0));
  for (int64_t r0 = 0; r0 < rows; r0 += kBlockRows) {
    std::fill(block.begin(), block.end(), T(0));
    const int64_t r1 = std::min(rows, r0 + kBlockRows);
    for (int64_t r = r0; r < r1; ++r) {
      const T* row = x + r * cols + begin;
      T* acc = block.data();
      for (int64_t j = 0; j < width; ++j) acc[j] += row[j];
    }
    for (int64_t j = 0; j < width; ++j) total[j] += block[j];
  }
  std::copy(total.begin(), total.end(), out + begin);
}

void ColumnSum(const HostKernelCall& call) {
  if (call.operands.size() != 1 || call.results.size() != 1 || call.operands[0].dims.size() != 2 ||
      call.results[0].dims != std::vector<int64_t>{call.operands[0].dims[1]} ||
      call.operands[0].type != call.results[0].type ||
      (call.operands[0].type != runtime::ElementType::kF32 && call.operands[0].type != runtime::ElementType::kF64))
    throw std::invalid_argument("column sum kernel: expected a float matrix and a result of its column count");
  const int64_t rows = call.operands[0].dims[0], cols = call.operands[0].dims[1];
  const int64_t parts = std::max<int64_t>(1, std::min(call.parallel.thread_count(), cols / kMinPartColumns));
  call.parallel.For(parts, [&](int64_t part) {
    // Part boundaries on multiples of 16 columns (whole cache lines of float32).
    auto boundary = [&](int64_t p) { return p == parts ? cols : cols * p / parts / 16 * 16; };
    const int64_t begin = boundary(part), end = boundary(part + 1);
    if (call.operands[0].type == runtime::ElementType::kF32) {
      SumColumns(static_cast<const float*>(call.operands[0].data), static_cast<float*>(call.results[0].data), rows,
                 cols, begin, end);
    } else {
      SumColumns(static_cast<const double*>(call.operands[0].data), static_cast<double*>(call.results[0].data), rows,
                 cols, begin, end);
    }
  });
}

}  // namespace

bool ColumnSumKernelAvailable() {
  static const bool available = RegisterCpuHostKernel(kColumnSumTarget, HostKernelHandler<ColumnSum>);
  return available;
}

}  // namespace torch_xla::host
