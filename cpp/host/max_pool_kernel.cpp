#include "host/max_pool_kernel.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/dims_text.h"
#include "host/host_kernel.h"

namespace torch_xla::host {
namespace {

// Elements of the input a part takes at least (one part per thread beyond that).
constexpr int64_t kMinPartElements = 32 * 1024;

// The taps of one output position along one dimension that fall inside the input:
// positions first, first + dilation, .. (count of them).
struct Taps {
  int64_t first = 0;
  int64_t count = 0;
};

// The window geometry with the spatial dimensions padded to three (depth, height,
// width): 2-D pooling has a depth of 1.
struct Geometry {
  int64_t planes = 1;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  // Along the row (width): the kernel, stride and padding, and the outputs
  // [inside_begin, inside_end) whose windows lie wholly inside the input.
  int64_t kernel_w = 1, stride_w = 1, padding_w = 0;
  int64_t inside_begin = 0, inside_end = 0;
  int64_t window = 1;  // taps per window (the product of the kernel sizes)
  // taps[a][o]: the valid taps of output o along dimension a.
  std::vector<Taps> taps[3];

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
};

[[noreturn]] void Fail(const char* kernel, const std::string& what) {
  throw std::invalid_argument(std::string(kernel) + " kernel: " + what);
}

// The spatial rank n (2 or 3), checked against the operand's rank.
int64_t SpatialRank(const char* kernel, const HostKernelCall& call, int64_t n) {
  if (n != 2 && n != 3) Fail(kernel, "expected a spatial rank of 2 or 3 as the first config value");
  if (call.operands[0].dims.size() < static_cast<std::size_t>(n))
    Fail(kernel, "expected an operand of rank at least " + std::to_string(n) + ", got " +
                     runtime::DimsToString(call.operands[0].dims));
  return n;
}

// The geometry of `input` dims (the operand's or the result's) and `output` dims, whose
// leading dimensions must agree.
Geometry MakeGeometry(const char* kernel, int64_t n, const std::vector<int64_t>& input,
                      const std::vector<int64_t>& output) {
  if (input.size() != output.size() ||
      !std::equal(input.begin(), input.end() - n, output.begin()))
    Fail(kernel, "expected input " + runtime::DimsToString(input) + " and output " + runtime::DimsToString(output) +
                     " to share leading dimensions");
  Geometry g;
  for (std::size_t a = 0; a + n < input.size(); ++a) g.planes *= input[a];
  for (int64_t a = 0; a < n; ++a) {
    g.in[3 - n + a] = input[input.size() - n + a];
    g.out[3 - n + a] = output[output.size() - n + a];
  }
  return g;
}

void SetTaps(Geometry& g, const MaxPoolConfig& config) {
  const int64_t n = static_cast<int64_t>(config.kernel.size());
  for (int64_t a = 0; a < n; ++a) {
    const int64_t k = config.kernel[a], s = config.stride[a], p = config.padding[a], d = config.dilation[a];
    if (k < 1 || s < 1 || p < 0 || d < 1)
      Fail("max pool", "expected a positive kernel, stride and dilation, and padding >= 0");
    const int64_t dim = 3 - n + a;
    g.dilation[dim] = d;
    for (int64_t o = 0; o < g.out[dim]; ++o) {
      const int64_t start = o * s - p;
      // First tap at or after position 0, last before position in.
      int64_t lo = start < 0 ? (-start + d - 1) / d : 0;
      int64_t hi = start > g.in[dim] - 1 ? 0 : std::min(k, (g.in[dim] - 1 - start) / d + 1);
      Taps t;
      if (hi > lo) t = {start + lo * d, hi - lo};
      g.taps[dim].push_back(t);
    }
  }
  for (int64_t dim = 0; dim < 3 - n; ++dim) g.taps[dim].push_back({0, 1});
  for (int64_t a = 0; a < n; ++a) g.window *= config.kernel[a];
  g.kernel_w = config.kernel.back();
  g.stride_w = config.stride.back();
  g.padding_w = config.padding.back();
  const std::vector<Taps>& row = g.taps[2];
  int64_t begin = 0, end = static_cast<int64_t>(row.size());
  auto inside = [&](int64_t o) { return row[o].count == g.kernel_w && row[o].first == o * g.stride_w - g.padding_w; };
  while (begin < end && !inside(begin)) ++begin;
  while (end > begin && !inside(end - 1)) --end;
  for (int64_t o = begin; o < end; ++o)
    if (!inside(o)) {  // not one range (the windows move monotonically, so never)
      end = begin;
      break;
    }
  g.inside_begin = begin;
  g.inside_end = end;
}

// The unsigned integer of T's size.
template <typename T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

// A tap's number in a window, of T's width (windows have fewer than 2^31 taps).
template <typename T>
using TapNumber = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;

// The maxima and indices of one row of outputs, whose windows cover the input rows
// starting at offsets rows[0 .. row_count) of the plane; taps[ox] are output ox's taps
// along the row (dilation dx).
template <typename T>
void PoolRow(const T* __restrict x, const int64_t* rows, int64_t row_count, const Taps* __restrict taps,
             int64_t width, int64_t dx, T* __restrict values, int64_t* __restrict indices) {
  for (int64_t ox = 0; ox < width; ++ox) {
    const int64_t first = taps[ox].first, count = taps[ox].count;
    if (count == 0) {  // no tap inside the input (PyTorch's checks exclude such windows)
      values[ox] = -std::numeric_limits<T>::infinity();
      indices[ox] = 0;
      continue;
    }
    int64_t best_index = rows[0] + first;
    T best = x[best_index];
    for (int64_t r = 0; r < row_count; ++r) {
      const int64_t row = rows[r] + first;
      for (int64_t ix = 0; ix < count; ++ix) {
        const int64_t at = row + ix * dx;
        const T v = x[at];
        // Branch-free: the compiler turns a conditional select of floats into a
        // branch, mispredicted half the time on data whose maxima fall anywhere.
        const Bits<T> take = Bits<T>(0) - static_cast<Bits<T>>((v > best) | (v != v));
        best = std::bit_cast<T>((std::bit_cast<Bits<T>>(v) & take) | (std::bit_cast<Bits<T>>(best) & ~take));
        const int64_t take_index = -static_cast<int64_t>(take & 1);
        best_index = (at & take_index) | (best_index & ~take_index);
      }
    }
    values[ox] = best;
    indices[ox] = best_index;
  }
}

// PoolRow for outputs [0, n) of a row whose windows lie inside the input along the row:
// output ox's taps are at start + ox * stride + ix * dx (ix < kw) of each row. The taps
// are taken in PoolRow's order, each over all n outputs, in loops the compiler
// vectorizes: each output keeps the number of its winning tap (the same number for
// every output of a pass, so the loop selects between values of one width), and the
// indices follow from the numbers at the end. Stride: the stride when known at compile
// time, else 0 and `stride` holds it. `tap_of` has room for n numbers, `tap_offset` for
// row_count * kw.
template <typename T, int Stride>
void PoolRowInside(const T* __restrict x, const int64_t* rows, int64_t row_count, int64_t start, int64_t kw,
                   int64_t dx, int64_t stride, int64_t n, T* __restrict values, int64_t* __restrict indices,
                   TapNumber<T>* __restrict tap_of, int64_t* __restrict tap_offset) {
  using Tap = TapNumber<T>;
  const int64_t s = Stride != 0 ? Stride : stride;
  const T* first = x + rows[0] + start;
  for (int64_t ox = 0; ox < n; ++ox) {
    values[ox] = first[ox * s];
    tap_of[ox] = 0;
  }
  Tap tap = 0;
  for (int64_t r = 0; r < row_count; ++r) {
    for (int64_t ix = 0; ix < kw; ++ix, ++tap) {
      if (tap == 0) continue;
      const T* in = x + rows[r] + start + ix * dx;
      for (int64_t ox = 0; ox < n; ++ox) {
        const T v = in[ox * s];
        const bool take = (v > values[ox]) | (v != v);
        values[ox] = take ? v : values[ox];
        tap_of[ox] = take ? tap : tap_of[ox];
      }
    }
  }
  for (int64_t r = 0; r < row_count; ++r)
    for (int64_t ix = 0; ix < kw; ++ix) tap_offset[r * kw + ix] = rows[r] + start + ix * dx;
  for (int64_t ox = 0; ox < n; ++ox) indices[ox] = tap_offset[tap_of[ox]] + ox * s;
}

// All outputs of one row: PoolRowInside between the row's edges, PoolRow at them.
template <typename T>
void PoolFullRow(const Geometry& g, const T* x, const int64_t* rows, int64_t row_count, T* values,
                 int64_t* indices, TapNumber<T>* tap_of, int64_t* tap_offset) {
  const Taps* taps = g.taps[2].data();
  const int64_t dx = g.dilation[2], begin = g.inside_begin, end = g.inside_end, width = g.out[2];
  PoolRow(x, rows, row_count, taps, begin, dx, values, indices);
  const int64_t start = begin * g.stride_w - g.padding_w, n = end - begin;
  T* inside_values = values + begin;
  int64_t* inside_indices = indices + begin;
  if (g.stride_w == 1) {
    PoolRowInside<T, 1>(x, rows, row_count, start, g.kernel_w, dx, 1, n, inside_values, inside_indices, tap_of,
                        tap_offset);
  } else if (g.stride_w == 2) {
    PoolRowInside<T, 2>(x, rows, row_count, start, g.kernel_w, dx, 2, n, inside_values, inside_indices, tap_of,
                        tap_offset);
  } else {
    PoolRowInside<T, 0>(x, rows, row_count, start, g.kernel_w, dx, g.stride_w, n, inside_values, inside_indices,
                        tap_of, tap_offset);
  }
  PoolRow(x, rows, row_count, taps + end, width - end, dx, values + end, indices + end);
}

// Maxima and indices of planes [begin, end).
template <typename T>
void PoolPlanes(const Geometry& g, const T* x, T* values, int64_t* indices, int64_t begin, int64_t end) {
  const int64_t H = g.in[1], W = g.in[2], out_w = g.out[2];
  const int64_t dz = g.dilation[0], dy = g.dilation[1];
  const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
  std::vector<int64_t> rows;
  std::vector<TapNumber<T>> tap_of(out_w);
  std::vector<int64_t> tap_offset(g.window);
  for (int64_t plane = begin; plane < end; ++plane) {
    const T* xp = x + plane * in_plane;
    T* vp = values + plane * out_plane;
    int64_t* ip = indices + plane * out_plane;
    for (int64_t oz = 0; oz < g.out[0]; ++oz) {
      const Taps tz = g.taps[0][oz];
      for (int64_t oy = 0; oy < g.out[1]; ++oy, vp += out_w, ip += out_w) {
        const Taps ty = g.taps[1][oy];
        rows.clear();
        for (int64_t iz = 0; iz < tz.count; ++iz)
          for (int64_t iy = 0; iy < ty.count; ++iy)
            rows.push_back(((tz.first + iz * dz) * H + ty.first + iy * dy) * W);
        if (rows.empty()) {  // no tap inside the input (PyTorch's checks exclude such windows)
          std::fill(vp, vp + out_w, -std::numeric_limits<T>::infinity());
          std::fill(ip, ip + out_w, 0);
          continue;
        }
        PoolFullRow(g, xp, rows.data(), static_cast<int64_t>(rows.size()), vp, ip, tap_of.data(),
                    tap_offset.data());
      }
    }
  }
}

// Whether every window is 2x2 at stride 2 wholly inside a 2-D input (kernel 2, stride
// 2, no padding, no dilation: the common pooling of CNNs), from the taps SetTaps laid
// out. Its outputs are few per row (MNIST's first pool: 12), so PoolPlanes' work per
// row (the window rows, the edges, the tap offsets) cost more than the windows
// themselves.
bool IsTwoByTwo(const Geometry& g) {
  if (g.in[0] != 1 || g.out[0] != 1 || g.taps[0][0].first != 0 || g.taps[0][0].count != 1 || g.dilation[1] != 1 ||
      g.dilation[2] != 1)
    return false;
  for (int64_t dim = 1; dim < 3; ++dim) {
    for (int64_t o = 0; o < g.out[dim]; ++o) {
      if (g.taps[dim][o].first != 2 * o || g.taps[dim][o].count != 2) return false;
    }
  }
  return true;
}

// PoolPlanes for IsTwoByTwo windows: the taps (0, 0), (0, 1), (1, 0), (1, 1) in
// PyTorch's order. Each output row goes through two loops the compiler vectorizes: the
// running maximum with the number of its tap (selected branch-free, as in PoolRow, at
// the float's width), then the indices from the numbers.
template <typename T>
void PoolPlanesTwoByTwo(const Geometry& g, const T* x, T* values, int64_t* indices, int64_t begin, int64_t end) {
  using Tap = Bits<T>;
  const int64_t W = g.in[2], out_h = g.out[1], out_w = g.out[2];
  const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
  std::vector<Tap> taps(out_w);
  Tap* __restrict tap_of = taps.data();
  for (int64_t plane = begin; plane < end; ++plane) {
    for (int64_t oy = 0; oy < out_h; ++oy) {
      const int64_t top = 2 * oy * W;
      const T* __restrict r0 = x + plane * in_plane + top;
      const T* __restrict r1 = r0 + W;
      T* __restrict v = values + plane * out_plane + oy * out_w;
      int64_t* __restrict idx = indices + plane * out_plane + oy * out_w;
      for (int64_t ox = 0; ox < out_w; ++ox) {
        Tap best = std::bit_cast<Tap>(r0[2 * ox]);
        Tap number = 0;
        const T candidates[3] = {r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1]};
        for (Tap t = 0; t < 3; ++t) {
          const T c = candidates[t];
          const Tap take = Tap(0) - static_cast<Tap>((c > std::bit_cast<T>(best)) | (c != c));
          best = (std::bit_cast<Tap>(c) & take) | (best & ~take);
          number = ((t + 1) & take) | (number & ~take);
        }
        v[ox] = std::bit_cast<T>(best);
        tap_of[ox] = number;
      }
      for (int64_t ox = 0; ox < out_w; ++ox) {
        const int64_t number = static_cast<int64_t>(tap_of[ox]);
        idx[ox] = top + 2 * ox + (number & 1) + (number >> 1) * W;
      }
    }
  }
}

// grad_input of planes [begin, end): zero, plus each gradient at its index.
template <typename T>
void ScatterPlanes(const Geometry& g, const T* grad, const int64_t* indices, T* grad_input, int64_t begin,
                   int64_t end) {
  const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
  for (int64_t plane = begin; plane < end; ++plane) {
    T* dst = grad_input + plane * in_plane;
    std::memset(dst, 0, sizeof(T) * static_cast<std::size_t>(in_plane));
    const T* src = grad + plane * out_plane;
    const int64_t* idx = indices + plane * out_plane;
    for (int64_t o = 0; o < out_plane; ++o)
      if (idx[o] >= 0 && idx[o] < in_plane) dst[idx[o]] += src[o];
  }
}

bool IsFloat(runtime::ElementType type) { return type == runtime::ElementType::kF32 || type == runtime::ElementType::kF64; }

// Runs fn(T(), begin, end) over ranges of g's planes, one per part, T the C++ type of
// `type` (float or double).
template <typename Fn>
void ForPlanes(const HostKernelCall& call, const Geometry& g, runtime::ElementType type, Fn fn) {
  const int64_t elements = g.planes * std::max(g.in_plane(), g.out_plane());
  const int64_t parts =
      std::max<int64_t>(1, std::min({call.parallel.thread_count(), g.planes, elements / kMinPartElements}));
  call.parallel.For(parts, [&](int64_t part) {
    const int64_t begin = g.planes * part / parts, end = g.planes * (part + 1) / parts;
    if (type == runtime::ElementType::kF32) {
      fn(float(), begin, end);
    } else {
      fn(double(), begin, end);
    }
  });
}

void MaxPool(const HostKernelCall& call) {
  constexpr const char* kName = "max pool";
  if (call.operands.size() != 1 || call.results.size() != 2) Fail(kName, "expected one operand and two results");
  const HostBuffer& x = call.operands[0];
  const HostBuffer& values = call.results[0];
  const HostBuffer& indices = call.results[1];
  const MaxPoolConfig config = MaxPoolConfig::FromInts(call.config);
  const int64_t n = SpatialRank(kName, call, static_cast<int64_t>(config.kernel.size()));
  if (!IsFloat(x.type) || values.type != x.type || indices.type != runtime::ElementType::kS64 || values.dims != indices.dims)
    Fail(kName, "expected a float32 or float64 operand, maxima of its type and s64 indices of one shape");
  Geometry g = MakeGeometry(kName, n, x.dims, values.dims);
  SetTaps(g, config);
  if (g.planes == 0 || g.out_plane() == 0) return;
  const bool two_by_two = IsTwoByTwo(g);
  ForPlanes(call, g, x.type, [&](auto zero, int64_t begin, int64_t end) {
    using T = decltype(zero);
    const T* in = static_cast<const T*>(x.data);
    T* maxima = static_cast<T*>(values.data);
    int64_t* at = static_cast<int64_t*>(indices.data);
    if (two_by_two) {
      PoolPlanesTwoByTwo(g, in, maxima, at, begin, end);
    } else {
      PoolPlanes(g, in, maxima, at, begin, end);
    }
  });
}

void MaxPoolBackward(const HostKernelCall& call) {
  constexpr const char* kName = "max pool backward";
  if (call.operands.size() != 2 || call.results.size() != 1) Fail(kName, "expected two operands and one result");
  const HostBuffer& grad = call.operands[0];
  const HostBuffer& indices = call.operands[1];
  const HostBuffer& grad_input = call.results[0];
  if (call.config.size() != 1)
    Fail(kName, "expected 1 config value, got " + std::to_string(call.config.size()));
  const int64_t n = SpatialRank(kName, call, call.config[0]);
  if (!IsFloat(grad.type) || grad_input.type != grad.type || indices.type != runtime::ElementType::kS64 ||
      indices.dims != grad.dims)
    Fail(kName, "expected a float32 or float64 gradient, s64 indices of its shape and a result of its type");
  const Geometry g = MakeGeometry(kName, n, grad_input.dims, grad.dims);
  if (g.planes == 0 || g.in_plane() == 0) return;
  ForPlanes(call, g, grad.type, [&](auto zero, int64_t begin, int64_t end) {
    using T = decltype(zero);
    ScatterPlanes(g, static_cast<const T*>(grad.data), static_cast<const int64_t*>(indices.data),
                  static_cast<T*>(grad_input.data), begin, end);
  });
}

}  // namespace

std::vector<int64_t> MaxPoolConfig::ToInts() const {
  const std::size_t n = kernel.size();
  if (stride.size() != n || padding.size() != n || dilation.size() != n)
    Fail("max pool", "kernel, stride, padding and dilation need one value per spatial dimension");
  std::vector<int64_t> ints{static_cast<int64_t>(n)};
  for (const std::vector<int64_t>* list : {&kernel, &stride, &padding, &dilation})
    ints.insert(ints.end(), list->begin(), list->end());
  return ints;
}

MaxPoolConfig MaxPoolConfig::FromInts(std::span<const int64_t> ints) {
  if (ints.empty() || (ints[0] != 2 && ints[0] != 3))
    Fail("max pool", "expected a spatial rank of 2 or 3 as the first config value");
  const std::size_t n = static_cast<std::size_t>(ints[0]);
  if (ints.size() != 4 * n + 1)
    Fail("max pool", "expected " + std::to_string(4 * n + 1) + " config values, got " + std::to_string(ints.size()));
  auto list = [&](std::size_t which) {
    return std::vector<int64_t>(ints.begin() + 1 + which * n, ints.begin() + 1 + (which + 1) * n);
  };
  return {list(0), list(1), list(2), list(3)};
}

bool MaxPoolKernelsAvailable() {
  static const bool available = RegisterCpuHostKernel(kMaxPoolTarget, HostKernelHandler<MaxPool>) &&
                                RegisterCpuHostKernel(kMaxPoolBackwardTarget, HostKernelHandler<MaxPoolBackward>);
  return available;
}

}  // namespace torch_xla::host
