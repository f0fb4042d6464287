// View kernels. Functionalization turns PyTorch's views into these *_copy ops (and
// writes through views into *_scatter ops), so each one simply computes a new value.
// For XLA tensors functionalization also runs every view, and every in-place op, on meta
// tensors first (a reference for eager's strides; shape errors such as `x.add_(bigger)`).
// PyTorch can switch that off ($TORCH_DISABLE_FUNCTIONALIZATION_META_REFERENCE=1), but
// the same switch drops the in-place shape checks: `ones(3).add_(ones(2, 3))` would
// silently grow the tensor. So it stays on; `view`, the most frequent view (reshape and
// flatten reach it), has a Functionalize kernel of its own without the meta detour
// (aten/functionalize_view.cpp). The strided views (as_strided and its scatter) and
// dtype views (view_copy with a dtype) are here too.
#include <ATen/ATen.h>
#include <ATen/InferSize.h>

#include <algorithm>

#include "XLANativeFunctions.h"
#include "aten/xla_tensor_impl.h"
#include "ir/builder_indexing.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::Value;
using runtime::ElementType;

std::vector<int64_t> Vec(at::IntArrayRef a) { return std::vector<int64_t>(a.begin(), a.end()); }

// Where `t` lies in the storage it shares as an eager view would
// (XlaTensorImpl::storage_base): the tensor a chain of slices and as_strided views was
// cut from (or `t` itself, contiguous), with t's strides and offset in its elements.
struct StorageView {
  const at::Tensor* base;
  std::vector<int64_t> strides;
  int64_t offset;
};

StorageView StorageOf(const at::Tensor& t) {
  auto* impl = dynamic_cast<XlaTensorImpl*>(t.unsafeGetTensorImpl());
  if (impl != nullptr && impl->storage_base().defined())
    return {&impl->storage_base(), impl->storage_strides(), impl->storage_offset_in_base()};
  std::vector<int64_t> strides(t.dim());
  int64_t step = 1;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    strides[d] = step;
    step *= std::max<int64_t>(t.size(d), 1);
  }
  return {&t, std::move(strides), 0};
}

// Marks `view` as lying in `storage` with these strides and offset.
at::Tensor InStorage(at::Tensor view, const StorageView& storage, std::vector<int64_t> strides, int64_t offset) {
  if (auto* impl = dynamic_cast<XlaTensorImpl*>(view.unsafeGetTensorImpl()))
    impl->set_storage_base(*storage.base, std::move(strides), offset);
  return view;
}

// PyTorch's slice bounds: clamp start/end into [0, size] after wrapping negatives.
void NormalizeSlice(int64_t size, std::optional<int64_t> start_opt, std::optional<int64_t> end_opt, int64_t* start,
                    int64_t* end) {
  int64_t s = start_opt.value_or(0), e = end_opt.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::min(std::max<int64_t>(s, 0), size);
  e = std::min(std::max<int64_t>(e, s), size);
  *start = s;
  *end = e;
}

// Writes `src` into positions start, start+step, ... of `base` along `dim`. Into zeros
// (the backward of slice and select) the padding alone is the result.
Value ScatterSlice(const Value& base, const Value& src, int64_t dim, int64_t start, int64_t step) {
  int64_t rank = base.shape().rank();
  std::vector<int64_t> low(rank, 0), high(rank, 0), interior(rank, 0);
  int64_t n = src.shape().dims[dim];
  low[dim] = start;
  interior[dim] = step - 1;
  high[dim] = base.shape().dims[dim] - (start + (n > 0 ? (n - 1) * step + 1 : 0));
  Value src_c = ir::Convert(src, base.shape().type);
  Value padded = ir::Pad(src_c, ir::Constant(0, ir::Shape(base.shape().type, {})), low, high, interior);
  if (ir::IsZeroConstant(base)) return padded;
  Value mask = ir::Pad(ir::Constant(1, ir::Shape(runtime::ElementType::kPred, src.shape().dims)),
                       ir::Constant(0, ir::Shape(runtime::ElementType::kPred, {})), low, high, interior);
  return ir::Select(mask, padded, base);
}

}  // namespace

at::Tensor XLANativeFunctions::view_copy(const at::Tensor& self, at::IntArrayRef size) {
  XLA_COUNT("view_copy");
  IrInput in = GetIrInput(self, "view");
  std::vector<int64_t> dims = at::infer_size(size, in.v.shape().numel());
  return AtenFromIr(Checked("view", [&] { return ir::Reshape(in.v, dims); }), in.device);
}

// `view` reaches the XLA kernel only with functionalization excluded: from inside
// composite kernels that build a fresh result and reshape it (embedding, for one).
// Users' views go through functionalization to view_copy. XLA tensors have no shared
// storage, so the result is a reshaped value, not an alias; the CPU fallback could not
// alias device data either.
at::Tensor XLANativeFunctions::view(const at::Tensor& self, at::IntArrayRef size) {
  XLA_COUNT("view");
  IrInput in = GetIrInput(self, "view");
  std::vector<int64_t> dims = at::infer_size(size, in.v.shape().numel());
  return AtenFromIr(Checked("view", [&] { return ir::Reshape(in.v, dims); }), in.device);
}

at::Tensor XLANativeFunctions::_unsafe_view(const at::Tensor& self, at::IntArrayRef size) {
  XLA_COUNT("_unsafe_view");
  return view_copy(self, size);
}

at::Tensor XLANativeFunctions::permute_copy(const at::Tensor& self, at::IntArrayRef dims) {
  XLA_COUNT("permute_copy");
  IrInput in = GetIrInput(self, "permute");
  int64_t rank = in.v.shape().rank();
  TORCH_CHECK(static_cast<int64_t>(dims.size()) == rank, "permute(sparse_coo): number of dimensions in the tensor input "
              "does not match the length of the desired ordering of dimensions i.e. input.dim() = ", rank,
              " is not equal to len(dims) = ", dims.size());
  std::vector<int64_t> perm;
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    int64_t w = WrapDim(d, rank, "permute");
    TORCH_CHECK(!seen[w], "permute(): duplicate dims are not allowed.");
    seen[w] = true;
    perm.push_back(w);
  }
  return AtenFromIr(ir::Transpose(in.v, perm), in.device);
}

at::Tensor XLANativeFunctions::transpose_copy(const at::Tensor& self, int64_t dim0, int64_t dim1) {
  XLA_COUNT("transpose_copy");
  IrInput in = GetIrInput(self, "transpose");
  int64_t rank = in.v.shape().rank();
  if (rank == 0) return AtenFromIr(in.v, in.device);
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[WrapDim(dim0, rank, "transpose")], perm[WrapDim(dim1, rank, "transpose")]);
  return AtenFromIr(ir::Transpose(in.v, perm), in.device);
}

at::Tensor XLANativeFunctions::t_copy(const at::Tensor& self) {
  XLA_COUNT("t_copy");
  TORCH_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return transpose_copy(self, 0, self.dim() < 2 ? 0 : 1);
}

at::Tensor XLANativeFunctions::expand_copy(const at::Tensor& self, at::IntArrayRef size, bool implicit) {
  XLA_COUNT("expand_copy");
  IrInput in = GetIrInput(self, "expand");
  const auto& dims = in.v.shape().dims;
  TORCH_CHECK(size.size() >= dims.size(), "expand: the number of sizes provided (", size.size(),
              ") must be greater or equal to the number of dimensions in the tensor (", dims.size(), ")");
  std::vector<int64_t> target(size.begin(), size.end());
  std::size_t offset = target.size() - dims.size();
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      TORCH_CHECK(i >= offset, "expand: -1 is not allowed in a leading, non-existing dimension");
      target[i] = dims[i - offset];
    }
    TORCH_CHECK(i < offset || dims[i - offset] == target[i] || dims[i - offset] == 1, "The expanded size of the tensor (",
                target[i], ") must match the existing size (", dims[i - offset], ") at non-singleton dimension ", i,
                ".  Target sizes: ", size, ".  Tensor sizes: ", self.sizes());
  }
  return AtenFromIr(ir::Broadcast(in.v, target), in.device);
}

at::Tensor XLANativeFunctions::slice_copy(const at::Tensor& self, int64_t dim, std::optional<int64_t> start,
                                          std::optional<int64_t> end, int64_t step) {
  XLA_COUNT("slice_copy");
  IrInput in = GetIrInput(self, "slice");
  TORCH_CHECK(step > 0, "slice step must be positive");
  int64_t d = WrapDim(dim, in.v.shape().rank(), "slice");
  int64_t s, e;
  NormalizeSlice(in.v.shape().dims[d], start, end, &s, &e);
  StorageView storage = StorageOf(self);
  std::vector<int64_t> strides = storage.strides;
  int64_t offset = storage.offset + s * strides[d];
  strides[d] *= step;
  return InStorage(AtenFromIr(SliceDim(in.v, d, s, e, step), in.device), storage, std::move(strides), offset);
}

at::Tensor XLANativeFunctions::select_copy(const at::Tensor& self, int64_t dim, int64_t index) {
  XLA_COUNT("select_copy");
  IrInput in = GetIrInput(self, "select");
  TORCH_CHECK(in.v.shape().rank() > 0, "select() cannot be applied to a 0-dim tensor.");
  int64_t d = WrapDim(dim, in.v.shape().rank(), "select");
  int64_t size = in.v.shape().dims[d];
  TORCH_CHECK(index >= -size && index < size, "select(): index ", index, " out of range for tensor of size ",
              self.sizes(), " at dimension ", dim);
  if (index < 0) index += size;
  std::vector<int64_t> out = in.v.shape().dims;
  out.erase(out.begin() + d);
  return AtenFromIr(ir::Reshape(SliceDim(in.v, d, index, index + 1, 1), out), in.device);
}

at::Tensor XLANativeFunctions::unsqueeze_copy(const at::Tensor& self, int64_t dim) {
  XLA_COUNT("unsqueeze_copy");
  IrInput in = GetIrInput(self, "unsqueeze");
  std::vector<int64_t> dims = in.v.shape().dims;
  int64_t d = WrapDim(dim, static_cast<int64_t>(dims.size()) + 1, "unsqueeze");
  dims.insert(dims.begin() + d, 1);
  return AtenFromIr(ir::Reshape(in.v, dims), in.device);
}

at::Tensor XLANativeFunctions::squeeze_copy(const at::Tensor& self) {
  XLA_COUNT("squeeze_copy");
  IrInput in = GetIrInput(self, "squeeze");
  std::vector<int64_t> dims;
  for (int64_t d : in.v.shape().dims)
    if (d != 1) dims.push_back(d);
  return AtenFromIr(ir::Reshape(in.v, dims), in.device);
}

at::Tensor XLANativeFunctions::squeeze_copy(const at::Tensor& self, int64_t dim) {
  return squeeze_copy(self, at::IntArrayRef({dim}));
}

at::Tensor XLANativeFunctions::squeeze_copy(const at::Tensor& self, at::IntArrayRef dim) {
  XLA_COUNT("squeeze_copy");
  IrInput in = GetIrInput(self, "squeeze");
  const auto& in_dims = in.v.shape().dims;
  int64_t rank = static_cast<int64_t>(in_dims.size());
  std::vector<bool> drop(rank, false);
  for (int64_t d : dim) {
    if (rank == 0) continue;
    int64_t w = WrapDim(d, rank, "squeeze");
    drop[w] = in_dims[w] == 1;
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i]) dims.push_back(in_dims[i]);
  return AtenFromIr(ir::Reshape(in.v, dims), in.device);
}

at::Tensor XLANativeFunctions::alias_copy(const at::Tensor& self) {
  XLA_COUNT("alias_copy");
  IrInput in = GetIrInput(self, "alias");
  return AtenFromIr(in.v, in.device);
}

at::Tensor XLANativeFunctions::detach_copy(const at::Tensor& self) {
  XLA_COUNT("detach_copy");
  IrInput in = GetIrInput(self, "detach");
  return AtenFromIr(in.v, in.device);
}

at::Tensor XLANativeFunctions::slice_scatter(const at::Tensor& self, const at::Tensor& src, int64_t dim,
                                             std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  XLA_COUNT("slice_scatter");
  IrInput base = GetIrInput(self, "slice_scatter");
  IrInput s = GetIrInput(src, "slice_scatter");
  int64_t d = WrapDim(dim, base.v.shape().rank(), "slice_scatter");
  int64_t st, en;
  NormalizeSlice(base.v.shape().dims[d], start, end, &st, &en);
  std::vector<int64_t> expected = base.v.shape().dims;
  expected[d] = (en - st + step - 1) / step;
  TORCH_CHECK(s.v.shape().dims == expected, "slice_scatter: expected src to have a size equal to the slice of self. "
              "src size = ", src.sizes(), ", slice size = ", at::IntArrayRef(expected));
  return AtenFromIr(Checked("slice_scatter", [&] { return ScatterSlice(base.v, s.v, d, st, step); }), base.device);
}

at::Tensor XLANativeFunctions::slice_backward(const at::Tensor& grad_output, at::IntArrayRef input_sizes, int64_t dim,
                                              int64_t start, int64_t end, int64_t step) {
  XLA_COUNT("slice_backward");
  // PyTorch's own kernel writes into a view of zeros, which cannot work below
  // functionalization; scatter the gradient into zeros instead.
  IrInput g = GetIrInput(grad_output, "slice_backward");
  int64_t d = WrapDim(dim, static_cast<int64_t>(input_sizes.size()), "slice_backward");
  int64_t s, e;
  NormalizeSlice(input_sizes[d], start, end, &s, &e);
  Value zeros = ir::Constant(0, ir::Shape(g.v.shape().type, Vec(input_sizes)));
  return AtenFromIr(Checked("slice_backward", [&] { return ScatterSlice(zeros, g.v, d, s, step); }), g.device);
}

at::Tensor XLANativeFunctions::select_backward(const at::Tensor& grad_output, at::IntArrayRef input_sizes, int64_t dim,
                                               int64_t index) {
  XLA_COUNT("select_backward");
  IrInput g = GetIrInput(grad_output, "select_backward");
  int64_t d = WrapDim(dim, static_cast<int64_t>(input_sizes.size()), "select_backward");
  if (index < 0) index += input_sizes[d];
  std::vector<int64_t> expanded = Vec(input_sizes);
  expanded[d] = 1;
  Value zeros = ir::Constant(0, ir::Shape(g.v.shape().type, Vec(input_sizes)));
  return AtenFromIr(Checked("select_backward", [&] {
                      return ScatterSlice(zeros, ir::Reshape(g.v, expanded), d, index, 1);
                    }),
                    g.device);
}

at::Tensor XLANativeFunctions::select_scatter(const at::Tensor& self, const at::Tensor& src, int64_t dim, int64_t index) {
  XLA_COUNT("select_scatter");
  IrInput base = GetIrInput(self, "select_scatter");
  IrInput s = GetIrInput(src, "select_scatter");
  int64_t d = WrapDim(dim, base.v.shape().rank(), "select_scatter");
  int64_t size = base.v.shape().dims[d];
  TORCH_CHECK(index >= -size && index < size, "select_scatter(): index ", index, " out of range for tensor of size ",
              self.sizes(), " at dimension ", dim);
  if (index < 0) index += size;
  std::vector<int64_t> expanded = base.v.shape().dims;
  expanded[d] = 1;
  return AtenFromIr(Checked("select_scatter", [&] {
                      return ScatterSlice(base.v, ir::Reshape(s.v, expanded), d, index, 1);
                    }),
                    base.device);
}

// ---- as_strided, view_copy with a dtype ----------------------------------------------------

namespace {
// An overlapping or irregular strided view (the overlapping frames of stft, say):
// element i of the result is flat[offset + sum_d i_d * stride_d], one gather whose
// indices are computed from iotas on the device.
Value StridedGather(const Value& flat, const std::vector<int64_t>& size, at::IntArrayRef stride, int64_t offset) {
  int64_t rank = static_cast<int64_t>(size.size());
  ir::Shape index_shape(ElementType::kS64, size);
  Value index = ir::Constant(static_cast<double>(offset), index_shape);
  for (int64_t d = 0; d < rank; ++d)
    if (size[d] > 1 && stride[d] != 0)
      index = Add(index, Mul(ir::Iota(index_shape, d), ir::Constant(static_cast<double>(stride[d]), index_shape)));
  std::vector<int64_t> index_dims = size;
  index_dims.push_back(1);
  return ir::Gather(flat, ir::Reshape(index, index_dims), {}, {0}, {0}, rank, {1});
}
}  // namespace

namespace {
// as_strided of `self` (a contiguous tensor: its elements are its storage).
at::Tensor AsStridedOf(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride,
                       std::optional<int64_t> storage_offset) {
  IrInput in = GetIrInput(self, "as_strided_copy");
  int64_t numel = in.v.shape().numel();
  int64_t offset = storage_offset.value_or(0);
  TORCH_CHECK(offset >= 0, "as_strided_copy: negative storage offset ", offset);
  std::vector<int64_t> out_dims(size.begin(), size.end());
  int64_t out_numel = 1, max_index = offset;
  for (std::size_t i = 0; i < size.size(); ++i) {
    TORCH_CHECK(size[i] >= 0, "as_strided_copy: negative size ", size[i], " in ", size);
    TORCH_CHECK(stride[i] >= 0, "as_strided_copy: negative stride ", stride[i], " in ", stride);
    out_numel *= size[i];
    if (size[i] > 0) max_index += (size[i] - 1) * stride[i];
  }
  ElementType type = in.v.shape().type;
  if (out_numel == 0) return AtenFromIr(ir::Constant(0, ir::Shape(type, out_dims)), in.device);
  TORCH_CHECK(max_index < numel, "as_strided_copy: size ", size, " and stride ", stride, " with storage offset ", offset,
              " reach element ", max_index, ", out of bounds for a storage of ", numel, " elements (",
              DescribeTensor(self), ")");
  // The dimensions that move (size > 1, stride > 0), by decreasing stride. When each
  // stride is a whole multiple of the next one and leaves room for that dimension's
  // extent, the view is a reshape + slice of a contiguous run of the storage; other
  // views (overlapping, irregular) are a gather.
  std::vector<int64_t> moving;
  for (std::size_t i = 0; i < size.size(); ++i)
    if (size[i] > 1 && stride[i] > 0) moving.push_back(static_cast<int64_t>(i));
  std::stable_sort(moving.begin(), moving.end(), [&](int64_t a, int64_t b) { return stride[a] > stride[b]; });
  bool regular = true;
  for (std::size_t j = 0; j + 1 < moving.size(); ++j) {
    int64_t outer = stride[moving[j]], inner = stride[moving[j + 1]];
    regular = regular && outer % inner == 0 && outer / inner >= size[moving[j + 1]];
  }
  Value flat = ir::Reshape(in.v, {numel});
  if (!regular)
    return AtenFromIr(Checked("as_strided_copy", [&] { return StridedGather(flat, out_dims, stride, offset); }),
                      in.device);
  Value picked;
  std::vector<int64_t> picked_dims;  // sizes of `moving`, outermost first
  if (moving.empty()) {
    picked = ir::Reshape(SliceDim(flat, 0, offset, offset + 1), {});
  } else {
    int64_t s_last = stride[moving.back()];
    int64_t length = size[moving[0]] * stride[moving[0]];
    // Pad the run past the storage's end; the padding is never picked.
    if (offset + length > numel)
      flat = ir::Pad(flat, ir::Constant(0, ir::Shape(type, {})), {0}, {offset + length - numel}, {0});
    Value run = SliceDim(flat, 0, offset, offset + length);
    std::vector<int64_t> grid = {size[moving[0]]};
    for (std::size_t j = 0; j + 1 < moving.size(); ++j) grid.push_back(stride[moving[j]] / stride[moving[j + 1]]);
    grid.push_back(s_last);
    Value g = ir::Reshape(run, grid);
    std::vector<int64_t> lo(grid.size(), 0), hi = grid, st(grid.size(), 1);
    for (std::size_t j = 1; j < moving.size(); ++j) hi[j] = size[moving[j]];
    hi.back() = 1;
    for (int64_t m : moving) picked_dims.push_back(size[m]);
    picked = ir::Reshape(ir::Slice(g, lo, hi, st), picked_dims);
  }
  // Put the moving dimensions back in output order, then broadcast into the output
  // shape (size-1 and stride-0 dimensions).
  std::vector<int64_t> order = moving;
  std::sort(order.begin(), order.end());
  std::vector<int64_t> perm;
  for (int64_t o : order) perm.push_back(std::find(moving.begin(), moving.end(), o) - moving.begin());
  Value t = ir::Transpose(picked, perm);
  return AtenFromIr(ir::BroadcastInDim(t, out_dims, order), in.device);
}
}  // namespace

at::Tensor XLANativeFunctions::as_strided_copy(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride,
                                               std::optional<int64_t> storage_offset) {
  XLA_COUNT("as_strided_copy");
  TORCH_CHECK(size.size() == stride.size(), "as_strided_copy: mismatch in length of strides and shape (", size,
              " vs ", stride, ")");
  // Eager's as_strided indexes the storage its input shares with the tensor it was cut
  // from (a[:, ::2].as_strided(a.shape, a.stride()) is a again), from the input's own
  // storage offset unless one is given.
  StorageView storage = StorageOf(self);
  if (storage.base->scalar_type() != self.scalar_type()) storage = StorageView{&self, {}, 0};
  int64_t offset = storage_offset.value_or(storage.offset);
  return InStorage(AsStridedOf(*storage.base, size, stride, offset), storage,
                   std::vector<int64_t>(stride.begin(), stride.end()), offset);
}

at::Tensor XLANativeFunctions::as_strided_scatter(const at::Tensor& self, const at::Tensor& src, at::IntArrayRef size,
                                                  at::IntArrayRef stride, std::optional<int64_t> storage_offset) {
  XLA_COUNT("as_strided_scatter");
  TORCH_CHECK(size.size() == stride.size(), "as_strided_scatter: mismatch in length of strides and shape (", size,
              " vs ", stride, ")");
  TORCH_CHECK(src.sizes() == size, "as_strided_scatter: expected src to have size ", size, ", got ", src.sizes());
  IrInput base = GetIrInput(self, "as_strided_scatter");
  IrInput s = GetIrInput(src, "as_strided_scatter");
  int64_t numel = base.v.shape().numel();
  int64_t offset = storage_offset.value_or(0);
  ElementType type = base.v.shape().type;
  int64_t out_numel = 1, max_index = offset;
  for (std::size_t i = 0; i < size.size(); ++i) {
    TORCH_CHECK(stride[i] >= 0 && (stride[i] > 0 || size[i] <= 1), "as_strided_scatter: stride ", stride,
                " for size ", size, " writes one element several times, which is not supported");
    out_numel *= size[i];
    if (size[i] > 0) max_index += (size[i] - 1) * stride[i];
  }
  if (out_numel == 0) return AtenFromIr(base.v, base.device);
  TORCH_CHECK(offset >= 0 && max_index < numel, "as_strided_scatter: size ", size, " and stride ", stride,
              " with storage offset ", offset, " reach element ", max_index, ", out of bounds for a storage of ", numel,
              " elements (", DescribeTensor(self), ")");
  std::vector<int64_t> moving;
  for (std::size_t i = 0; i < size.size(); ++i)
    if (size[i] > 1) moving.push_back(static_cast<int64_t>(i));
  std::stable_sort(moving.begin(), moving.end(), [&](int64_t a, int64_t b) { return stride[a] > stride[b]; });
  for (std::size_t j = 0; j + 1 < moving.size(); ++j) {
    int64_t outer = stride[moving[j]], inner = stride[moving[j + 1]];
    TORCH_CHECK(outer % inner == 0 && outer / inner >= size[moving[j + 1]], "as_strided_scatter: size ", size,
                " and stride ", stride, " describe an overlapping or irregular view, which the XLA device supports "
                "only through a contiguous reshape/slice/transpose pattern");
  }
  // src in `moving` order, then spread onto the contiguous run of the storage it covers.
  std::vector<int64_t> picked_dims;
  for (int64_t m : moving) picked_dims.push_back(size[m]);
  auto spread = [&](const Value& v, ElementType t) -> Value {
    Value zero = ir::Constant(0, ir::Shape(t, {}));
    Value run;
    int64_t length;
    if (moving.empty()) {
      run = ir::Reshape(v, {1});
      length = 1;
    } else {
      std::vector<int64_t> grid = {size[moving[0]]};
      for (std::size_t j = 0; j + 1 < moving.size(); ++j) grid.push_back(stride[moving[j]] / stride[moving[j + 1]]);
      grid.push_back(stride[moving.back()]);
      std::vector<int64_t> small = picked_dims;
      small.push_back(1);
      std::vector<int64_t> lo(grid.size(), 0), hi(grid.size(), 0), in(grid.size(), 0);
      for (std::size_t j = 0; j < grid.size(); ++j) hi[j] = grid[j] - small[j];
      run = ir::Reshape(ir::Pad(ir::Reshape(v, small), zero, lo, hi, in), {ir::Shape(t, grid).numel()});
      length = ir::Shape(t, grid).numel();
    }
    // May cut the run's tail past the storage end (negative high padding).
    Value flat = ir::Pad(run, zero, {offset}, {numel - offset - length}, {0});
    return ir::Reshape(flat, base.v.shape().dims);
  };
  return AtenFromIr(Checked("as_strided_scatter", [&] {
                      std::vector<int64_t> order = moving;
                      std::sort(order.begin(), order.end());
                      // src without its size-1 dims, in output order, then permuted to `moving` order.
                      std::vector<int64_t> squeezed;
                      for (int64_t o : order) squeezed.push_back(size[o]);
                      Value sv = ir::Reshape(ir::Convert(s.v, type), squeezed);
                      std::vector<int64_t> perm;
                      for (int64_t m : moving) perm.push_back(std::find(order.begin(), order.end(), m) - order.begin());
                      sv = ir::Transpose(sv, perm);
                      Value mask = spread(ir::Constant(1, ir::Shape(ElementType::kPred, sv.shape().dims)),
                                          ElementType::kPred);
                      return ir::Select(mask, spread(sv, type), base.v);
                    }),
                    base.device);
}

at::Tensor XLANativeFunctions::view_copy(const at::Tensor& self, at::ScalarType dtype) {
  XLA_COUNT("view_copy");
  IrInput in = GetIrInput(self, "view");
  ElementType from = in.v.shape().type, to = ElementTypeOf(dtype);
  if (from == to) return AtenFromIr(in.v, in.device);
  int64_t fs = c10::elementSize(self.scalar_type()), ts = c10::elementSize(dtype);
  TORCH_CHECK(self.scalar_type() != at::kBool && dtype != at::kBool && !at::isComplexType(self.scalar_type()) &&
                  !at::isComplexType(dtype),
              "view(dtype): viewing ", DescribeTensor(self), " as ", dtype, " is not supported on the XLA device");
  static const ir::OpKind kBitcast = ir::OpKind::Get("stablehlo.bitcast_convert");
  std::vector<int64_t> dims = in.v.shape().dims;
  if (fs == ts) return AtenFromIr(Value(ir::MakeNode(kBitcast, std::vector<Value>{in.v}, ir::Shape(to, dims))), in.device);
  TORCH_CHECK(self.dim() > 0, "self.dim() cannot be 0 to view ", self.scalar_type(), " as ", dtype,
              " (different element sizes)");
  if (fs > ts) {
    // Each element becomes fs / ts elements of the last dimension.
    std::vector<int64_t> wide = dims;
    wide.push_back(fs / ts);
    Value v = Value(ir::MakeNode(kBitcast, std::vector<Value>{in.v}, ir::Shape(to, wide)));
    dims.back() *= fs / ts;
    return AtenFromIr(ir::Reshape(v, dims), in.device);
  }
  int64_t ratio = ts / fs;
  TORCH_CHECK(dims.back() % ratio == 0, "self.size(-1) must be divisible by ", ratio, " to view ", self.scalar_type(),
              " as ", dtype, " (different element sizes), but got ", dims.back());
  std::vector<int64_t> grouped = dims;
  grouped.back() /= ratio;
  grouped.push_back(ratio);
  dims.back() /= ratio;
  Value g = ir::Reshape(in.v, grouped);
  return AtenFromIr(Value(ir::MakeNode(kBitcast, std::vector<Value>{g}, ir::Shape(to, dims))), in.device);
}

// as_strided itself reaches the device only below functionalization, from composite
// kernels that build views of intermediate values (unsqueeze in conv1d's 2-d path,
// block_diag, the slices of pack_padded_sequence, ...) and read them; the result is a
// new value, like the CPU fallback's. Those kernels compute the geometry from the
// tensor's own sizes, strides and storage offset, which an XLA tensor reports as those
// of a contiguous value of its own: the view indexes `self`'s elements, not the storage
// a user's view shares (as_strided_copy). A slice of a slice read its first slice's
// offset from there, 0, and got the wrong rows.
at::Tensor XLANativeFunctions::as_strided(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride,
                                          std::optional<int64_t> storage_offset) {
  XLA_COUNT("as_strided");
  TORCH_CHECK(size.size() == stride.size(), "as_strided: mismatch in length of strides and shape (", size, " vs ",
              stride, ")");
  return AsStridedOf(self, size, stride, storage_offset.value_or(0));
}

}  // namespace torch_xla
