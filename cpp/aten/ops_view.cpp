// Shape kernels. Functionalization turns PyTorch's views into these *_copy ops (and
// writes through views into *_scatter ops), so each one simply computes a new value.
// For XLA tensors functionalization also runs every view, and every in-place op, on meta
// tensors first (a reference for eager's strides; shape errors such as `x.add_(bigger)`).
// PyTorch can switch that off ($TORCH_DISABLE_FUNCTIONALIZATION_META_REFERENCE=1), but
// the same switch drops the in-place shape checks: `ones(3).add_(ones(2, 3))` would
// silently grow the tensor. So it stays on; `view`, the most frequent view (reshape and
// flatten reach it), has a Functionalize kernel of its own without the meta detour
// (functionalize_view.cpp).
#include <ATen/ATen.h>
#include <ATen/InferSize.h>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"

namespace torch_xla {
namespace {

using ir::Value;

std::vector<int64_t> Vec(at::IntArrayRef a) { return std::vector<int64_t>(a.begin(), a.end()); }

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

Value SliceDim(const Value& v, int64_t dim, int64_t start, int64_t end, int64_t step) {
  std::vector<int64_t> lo(v.shape().rank(), 0), hi = v.shape().dims, st(v.shape().rank(), 1);
  lo[dim] = start;
  hi[dim] = end;
  st[dim] = step;
  return ir::Slice(v, lo, hi, st);
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
  return AtenFromIr(SliceDim(in.v, d, s, e, step), in.device);
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

}  // namespace torch_xla
