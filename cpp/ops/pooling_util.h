#pragma once
// Helpers shared by the pooling kernels (ops/max_pooling.cpp, ops/avg_pooling.cpp,
// ops/adaptive_pooling.cpp, ops/fractional_max_pooling.cpp, ops/max_unpooling.cpp,
// ops/im2col.cpp), over the trailing n (2 or 3) spatial dimensions of [N, C, *] or
// [C, *] inputs; defined in pooling_util.cpp. The n-d windows are products of
// per-dimension windows (PoolDim).
//
//   max_pool / avg_pool / im2col   for each of the prod(k) window offsets, a strided slice
//                                  of the padded input (PadForWindows, WindowSlice); the
//                                  backward scatters each offset's values back and sums
//                                  them, phase by phase of the stride (ScatterWindows).
//   adaptive / fractional max pool   the element at start + offset of every window,
//                                  gathered by one-hot selects dimension by dimension
//                                  (WindowTap, ForEachTap, SelectSum), feeds a running
//                                  argmax (MaxOverTaps); the backward scatter-adds at the
//                                  indices (ScatterToPlanes, ScatterAddBackward).
#include <ATen/core/Tensor.h>

#include <functional>
#include <utility>
#include <vector>

#include "ir/builder_indexing.h"
#include "ops/kernel_util.h"

namespace torch_xla::pooling_util {

using ir::Value;
using runtime::ElementType;

// ---- shapes and checks ---------------------------------------------------------------

// An s64 constant of `dims`.
inline Value S64(double v, const std::vector<int64_t>& dims) { return Full(v, ElementType::kS64, dims); }

// "two" or "three" (spatial dimensions), for messages.
inline const char* CountWord(int64_t n) { return n == 2 ? "two" : "three"; }

// The last n entries of `dims`.
std::vector<int64_t> LastN(const std::vector<int64_t>& dims, int64_t n);

// `dims` with its last n entries replaced by `tail`.
std::vector<int64_t> WithLastN(std::vector<int64_t> dims, const std::vector<int64_t>& tail);

// Broadcasts a value of the spatial output shape to `dims` (its last dimensions).
Value ToLastN(const Value& v, const std::vector<int64_t>& dims);

// An (n + 1)-D or (n + 2)-D input with non-empty pooled dimensions, with PyTorch's message.
void CheckPoolInput(const char* op, const at::Tensor& self, int64_t n);

// grad_output (and indices, when given) of a pool's backward: the input's size with the
// pooled output sizes, the input's floating type.
void CheckPoolGrad(const char* op, const at::Tensor& grad_output, const at::Tensor& self,
                   const std::vector<int64_t>& od, const at::Tensor* indices);

// ---- max_pool / avg_pool windows -----------------------------------------------------

// One dimension's window geometry: input size, kernel size, stride, padding, dilation and
// output size.
struct PoolDim {
  int64_t in, k, s, p, d, out;
};
using PoolDims = std::vector<PoolDim>;

// v[i], or v[0] for a single value.
inline int64_t PickDim(at::IntArrayRef v, int64_t i) { return v.size() == 1 ? v[0] : v[i]; }

// The output sizes (kernel sizes) of the geometry.
std::vector<int64_t> OutSizes(const PoolDims& g);
std::vector<int64_t> KernelSizes(const PoolDims& g);

// The pooling geometry of the last n dimensions, with PyTorch's checks and messages.
PoolDims PoolGeometry(const char* op, const at::Tensor& self, int64_t n, at::IntArrayRef kernel_size,
                      at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode);

// The input's dims `in` with the pooled output sizes.
inline std::vector<int64_t> OutDims(const std::vector<int64_t>& in, const PoolDims& g) {
  return WithLastN(in, OutSizes(g));
}

// The input padded with `fill` so that every window offset's strided slice fits.
Value PadForWindows(const Value& x, const PoolDims& g, double fill);

// The [.., o1, .., on] elements at window offset `off` of every window.
Value WindowSlice(const Value& padded, const PoolDims& g, const std::vector<int64_t>& off);

// Scatters the [.., o1, .., on] values of every window offset (contribs, row-major over
// the offsets) back onto the [.., i1, .., in] input and sums them. Input position
// h = (i*d - p) + s*o. Split by phase h mod s: within a phase an offset's values land
// on a contiguous, shifted range, so each phase is a sum of plainly padded (or cropped)
// arrays, and the phases are interleaved by concatenates + one reshape. This touches
// each output element once per offset instead of each input element once per offset.
Value ScatterWindows(const std::vector<Value>& contribs, const PoolDims& g, const std::vector<int64_t>& in_dims);

// Per output position of one dimension, the first input position of its window
// ([out], s64): o*s - p (may be negative).
Value WindowStart(const PoolDim& d);

// ---- one-hot selection of window taps --------------------------------------------------

// out[.., o, ..] = sum_i (mask[o, i] ? x[.., i, ..] : 0) along dimension `dim`: a gather
// by a one-hot [out, in] mask, exact for every type (one term per row). A mask with
// leading dimensions ([.., out, in], those of x) selects per plane.
Value SelectSum(const Value& x, int64_t dim, const Value& mask);

// Writes (kind kReplace) or adds (kAdd) each of `values` ([.., o1, .., on]) at its flat
// index into its plane of a zero [.., i1, .., in] array. XLA drops indices outside the
// plane (PyTorch raises; that would need the device data).
Value ScatterToPlanes(ir::ScatterKind kind, const Value& values, const Value& indices,
                      const std::vector<int64_t>& in_dims, int64_t n);

// Per-dimension values ([o_a], or [.., o_a] with the leading dimensions of `od`)
// broadcast to od at their dimension.
Value AtDim(const Value& v, const std::vector<int64_t>& od, int64_t dim);

// The flat index of per-dimension positions (see AtDim), shaped od.
Value FlatIndexIn(const std::vector<Value>& pos, const std::vector<int64_t>& od,
                  const std::vector<int64_t>& in_sizes);

// One window offset along one dimension: its position in every window (see AtDim),
// whether that lies inside the window, and the one-hot [(..,) o, in] mask selecting it.
struct WindowTap {
  Value pos, valid, mask;
};

// Calls visit(elements, taps) for every offset tuple of windows given per dimension by
// their taps (windows[a]: one tap per offset along dimension a), `elements` being the
// element of every window at those taps ([.., o1, .., on]), gathered by SelectSum
// dimension by dimension (a prefix's gathers shared by its offsets). Row-major order:
// the last dimension's offset moves fastest, as in PyTorch's loops.
void ForEachTap(const Value& x, const std::vector<std::vector<WindowTap>>& windows,
                const std::function<void(const Value&, const std::vector<const WindowTap*>&)>& visit);

// The output dimensions of pooling x over `windows`.
std::vector<int64_t> TapOutDims(const Value& x, const std::vector<std::vector<WindowTap>>& windows);

// Whether all the chosen taps lie inside their windows, shaped od.
Value TapsValid(const std::vector<const WindowTap*>& chosen, const std::vector<int64_t>& od);

// The running maximum and its flat index over the windows' taps: the first maximum
// wins, a NaN always wins. The index starts at the windows' `first` positions.
std::pair<Value, Value> MaxOverTaps(const Value& x, const std::vector<std::vector<WindowTap>>& windows,
                                    const std::vector<Value>& first);

// The backward of the max pools whose windows are not a regular grid (adaptive 3-d,
// fractional): each gradient added at its index.
at::Tensor ScatterAddBackward(const char* op, const at::Tensor& grad_output, const at::Tensor& self, int64_t n,
                              const at::Tensor& indices);

}  // namespace torch_xla::pooling_util
