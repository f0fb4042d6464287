// Shape kernels that build new values: concatenation (cat, stack, _chunk_cat,
// block_diag), splits (split, split_with_sizes, unbind, narrow), repeat, unfold and its
// backward, and diagonals (diagonal, its backward and scatter, diag_embed). Each is a
// composition of slices, pads, reshapes and selects (no gather needed).
#include <ATen/ATen.h>
#include <ATen/native/TypeProperties.h>

#include <algorithm>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::Value;
using runtime::ElementType;

// Pieces of `v` along `dim` with the given sizes (which sum to the dimension's size).
std::vector<at::Tensor> SplitSizes(const IrInput& in, const std::vector<int64_t>& sizes, int64_t dim) {
  std::vector<at::Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(AtenFromIr(SliceDim(in.v, dim, start, start + s), in.device));
    start += s;
  }
  return out;
}

}  // namespace

at::Tensor XLANativeFunctions::cat(const at::ITensorListRef& tensors, int64_t dim) {
  XLA_COUNT("cat");
  std::vector<at::Tensor> all;
  for (const at::Tensor& t : tensors) all.push_back(t);
  TORCH_CHECK(!all.empty(), "torch.cat(): expected a non-empty list of Tensors");
  at::ScalarType result = at::native::result_type(tensors);
  // PyTorch skips 1-d empty tensors (legacy behaviour); the others must agree in rank.
  std::vector<const at::Tensor*> used;
  for (std::size_t i = 0; i < all.size(); ++i) {
    TORCH_CHECK(all[i].dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
    if (!(all[i].dim() == 1 && all[i].size(0) == 0)) used.push_back(&all[i]);
  }
  int device = -1;
  for (const at::Tensor& t : all) {
    TORCH_CHECK(IsXlaTensor(t), "torch.cat(): expected all tensors on the XLA device, got a ", t.device(),
                " tensor ", DescribeTensor(t));
    TORCH_CHECK(device < 0 || t.device().index() == device,
                "torch.cat(): all input tensors must be on the same device, got xla:", device, " and ", t.device());
    device = t.device().index();
  }
  ElementType type = ElementTypeOf(result);
  if (used.empty()) return AtenFromIr(ir::Constant(0, ir::Shape(type, {0})), device);
  const at::Tensor& first = *used[0];
  int64_t d = WrapDim(dim, first.dim(), "torch.cat()");
  std::vector<Value> values;
  for (std::size_t i = 0; i < used.size(); ++i) {
    const at::Tensor& t = *used[i];
    TORCH_CHECK(t.dim() == first.dim(), "torch.cat(): Tensors must have same number of dimensions: got ", first.dim(),
                " and ", t.dim());
    for (int64_t k = 0; k < t.dim(); ++k)
      TORCH_CHECK(k == d || t.size(k) == first.size(k), "torch.cat(): Sizes of tensors must match except in dimension ",
                  d, ". Expected size ", first.size(k), " but got size ", t.size(k), " for tensor number ", i,
                  " in the list.");
    values.push_back(ir::Convert(GetXlaTensor(t, "cat")->GetIrValue(), type));
  }
  return AtenFromIr(Checked("cat", [&] { return ir::Concatenate(values, d); }), device);
}

std::vector<at::Tensor> XLANativeFunctions::split_copy(const at::Tensor& self, int64_t split_size, int64_t dim) {
  XLA_COUNT("split_copy");
  TORCH_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  TORCH_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size=", split_size);
  IrInput in = GetIrInput(self, "split");
  int64_t d = WrapDim(dim, self.dim(), "split");
  int64_t size = in.v.shape().dims[d];
  TORCH_CHECK(split_size > 0 || size == 0, "split_size can only be 0 if dimension size is 0, but got dimension size of ",
              size);
  std::vector<int64_t> sizes;
  if (split_size == 0) {
    sizes.push_back(0);
  } else {
    int64_t chunks = std::max<int64_t>((size + split_size - 1) / split_size, 1);
    for (int64_t i = 0; i < chunks; ++i) sizes.push_back(std::min(split_size, size - i * split_size));
  }
  return SplitSizes(in, sizes, d);
}

std::vector<at::Tensor> XLANativeFunctions::split_with_sizes_copy(const at::Tensor& self, at::IntArrayRef split_sizes,
                                                                  int64_t dim) {
  XLA_COUNT("split_with_sizes_copy");
  TORCH_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  IrInput in = GetIrInput(self, "split_with_sizes");
  int64_t d = WrapDim(dim, self.dim(), "split_with_sizes");
  int64_t size = in.v.shape().dims[d], total = 0;
  for (int64_t s : split_sizes) {
    TORCH_CHECK(s >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=",
                split_sizes);
    total += s;
  }
  TORCH_CHECK(total == size, "split_with_sizes expects split_sizes to sum exactly to ", size,
              " (input tensor's size at dimension ", d, "), but got split_sizes=", split_sizes);
  return SplitSizes(in, std::vector<int64_t>(split_sizes.begin(), split_sizes.end()), d);
}

std::vector<at::Tensor> XLANativeFunctions::unbind_copy(const at::Tensor& self, int64_t dim) {
  XLA_COUNT("unbind_copy");
  TORCH_CHECK(self.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  IrInput in = GetIrInput(self, "unbind");
  int64_t d = WrapDim(dim, self.dim(), "unbind");
  std::vector<int64_t> out_dims = in.v.shape().dims;
  out_dims.erase(out_dims.begin() + d);
  std::vector<at::Tensor> out;
  for (int64_t i = 0; i < in.v.shape().dims[d]; ++i)
    out.push_back(AtenFromIr(ir::Reshape(SliceDim(in.v, d, i, i + 1), out_dims), in.device));
  return out;
}

at::Tensor XLANativeFunctions::narrow_copy(const at::Tensor& self, int64_t dim, int64_t start, int64_t length) {
  XLA_COUNT("narrow_copy");
  TORCH_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  IrInput in = GetIrInput(self, "narrow");
  int64_t d = WrapDim(dim, self.dim(), "narrow");
  int64_t size = in.v.shape().dims[d];
  TORCH_CHECK(length >= 0, "narrow(): length must be non-negative.");
  TORCH_CHECK(start >= -size && start <= size, "start out of range (expected to be in range of [", -size, ", ", size,
              "], but got ", start, ")");
  if (start < 0) start += size;
  TORCH_CHECK(start <= size - length, "start (", start, ") + length (", length, ") exceeds dimension size (", size, ").");
  return AtenFromIr(SliceDim(in.v, d, start, start + length), in.device);
}

at::Tensor XLANativeFunctions::repeat(const at::Tensor& self, at::IntArrayRef repeats) {
  XLA_COUNT("repeat");
  TORCH_CHECK(static_cast<int64_t>(repeats.size()) >= self.dim(), "Number of dimensions of repeat dims can not be smaller "
              "than number of dimensions of tensor");
  for (int64_t r : repeats) TORCH_CHECK(r >= 0, "repeat: repeats must be non-negative, got ", repeats);
  IrInput in = GetIrInput(self, "repeat");
  std::size_t n = repeats.size();
  std::vector<int64_t> padded(n - in.v.shape().dims.size(), 1);
  padded.insert(padded.end(), in.v.shape().dims.begin(), in.v.shape().dims.end());
  // [r0, d0, r1, d1, ...] by broadcasting, then merged pairwise.
  std::vector<int64_t> big, bdims, out;
  for (std::size_t i = 0; i < n; ++i) {
    big.push_back(repeats[i]);
    big.push_back(padded[i]);
    bdims.push_back(static_cast<int64_t>(2 * i + 1));
    out.push_back(repeats[i] * padded[i]);
  }
  Value v = ir::BroadcastInDim(ir::Reshape(in.v, padded), big, bdims);
  return AtenFromIr(ir::Reshape(v, out), in.device);
}

at::Tensor XLANativeFunctions::diagonal_copy(const at::Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  XLA_COUNT("diagonal_copy");
  int64_t rank = self.dim();
  TORCH_CHECK(rank >= 2, "diagonal: expected a tensor with at least 2 dimensions, got ", DescribeTensor(self));
  int64_t d1 = WrapDim(dim1, rank, "diagonal"), d2 = WrapDim(dim2, rank, "diagonal");
  TORCH_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  IrInput in = GetIrInput(self, "diagonal");
  // Move dim1, dim2 last: [..., n, m].
  std::vector<int64_t> perm, batch;
  for (int64_t i = 0; i < rank; ++i)
    if (i != d1 && i != d2) {
      perm.push_back(i);
      batch.push_back(in.v.shape().dims[i]);
    }
  perm.push_back(d1);
  perm.push_back(d2);
  Value v = ir::Transpose(in.v, perm);
  int64_t n = in.v.shape().dims[d1], m = in.v.shape().dims[d2];
  // Shift the wanted diagonal onto the main one.
  int64_t r0 = offset < 0 ? std::min(-offset, n) : 0, c0 = offset > 0 ? std::min(offset, m) : 0;
  v = SliceDim(SliceDim(v, rank - 2, r0, n), rank - 1, c0, m);
  int64_t rows = n - r0, cols = m - c0, len = std::min(rows, cols);
  std::vector<int64_t> out = batch;
  out.push_back(len);
  if (len == 0) return AtenFromIr(ir::Constant(0, ir::Shape(in.v.shape().type, out)), in.device);
  // Row k, column k of a [len, cols] block lies at k * (cols + 1) of its flattening.
  v = SliceDim(v, rank - 2, 0, len);
  std::vector<int64_t> flat = batch;
  flat.push_back(len * cols);
  v = ir::Reshape(v, flat);
  v = SliceDim(v, rank - 2, 0, (len - 1) * (cols + 1) + 1, cols + 1);
  return AtenFromIr(v, in.device);
}

at::Tensor XLANativeFunctions::stack(at::TensorList tensors, int64_t dim) {
  XLA_COUNT("stack");
  TORCH_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  int64_t d = WrapDim(dim, tensors[0].dim() + 1, "stack");
  std::vector<at::Tensor> parts;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    TORCH_CHECK(tensors[i].sizes() == tensors[0].sizes(), "stack expects each tensor to be equal size, but got ",
                tensors[0].sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
    std::vector<int64_t> dims(tensors[i].sizes().begin(), tensors[i].sizes().end());
    dims.insert(dims.begin() + d, 1);
    IrInput in = GetIrInput(tensors[i], "stack");
    parts.push_back(AtenFromIr(ir::Reshape(in.v, dims), in.device));
  }
  return cat(at::ITensorListRef(at::ArrayRef<at::Tensor>(parts)), d);
}

at::Tensor XLANativeFunctions::unfold_copy(const at::Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  XLA_COUNT("unfold_copy");
  IrInput in = GetIrInput(self, "unfold");
  int64_t rank = in.v.shape().rank();
  int64_t d = WrapDim(dimension, rank, "unfold");
  int64_t n = rank == 0 ? 1 : in.v.shape().dims[d];
  TORCH_CHECK(size <= n, "maximum size for tensor at dimension ", d, " is ", n, " but size is ", size);
  TORCH_CHECK(size >= 0, "size is ", size, " but must be >= 0");
  TORCH_CHECK(step > 0, "step is ", step, " but must be > 0");
  Value v = rank == 0 ? ir::Reshape(in.v, {1}) : in.v;
  int64_t windows = (n - size) / step + 1;
  // Window element k of every window is the strided slice k, k + step, ...; the pieces
  // become a new last dimension.
  std::vector<int64_t> piece_dims = v.shape().dims;
  piece_dims[d] = windows;
  piece_dims.push_back(1);
  std::vector<Value> pieces;
  for (int64_t k = 0; k < size; ++k)
    pieces.push_back(ir::Reshape(SliceDim(v, d, k, k + (windows - 1) * step + 1, step), piece_dims));
  std::vector<int64_t> out_dims = piece_dims;
  out_dims.back() = size;
  Value out = pieces.empty() ? ir::Constant(0, ir::Shape(v.shape().type, out_dims))
                             : ir::Concatenate(pieces, static_cast<int64_t>(piece_dims.size()) - 1);
  if (rank == 0) out = ir::Reshape(out, {size});
  return AtenFromIr(out, in.device);
}

at::Tensor XLANativeFunctions::unfold_backward(const at::Tensor& grad_in, at::IntArrayRef input_sizes, int64_t dim,
                                               int64_t size, int64_t step) {
  XLA_COUNT("unfold_backward");
  const char* op = "unfold_backward";
  IrInput in = GetIrInput(grad_in, op);
  const int64_t rank = static_cast<int64_t>(input_sizes.size());
  std::vector<int64_t> dims(input_sizes.begin(), input_sizes.end());
  if (rank == 0) dims = {1};
  const int64_t d = rank == 0 ? 0 : WrapDim(dim, rank, op);
  const int64_t n = dims[d];
  TORCH_CHECK(step > 0 && size >= 0 && size <= n, op, ": size ", size, " and step ", step,
              " do not fit input sizes ", input_sizes);
  const int64_t windows = (n - size) / step + 1;
  std::vector<int64_t> expected = dims;
  expected[d] = windows;
  expected.push_back(size);
  // A 0-dim input unfolds to [size] (as a 1-element vector would to [1, size]).
  if (rank == 0 && in.v.shape().dims == std::vector<int64_t>{size}) in.v = ir::Reshape(in.v, expected);
  TORCH_CHECK(in.v.shape().dims == expected, op, ": grad_in ", DescribeTensor(grad_in), " does not match input sizes ",
              input_sizes, " unfolded at ", dim, " by ", size, " step ", step);
  // Window element k came from input positions k, k + step, ...: each slice k of the last
  // dimension goes back there (padding with step - 1 zeros between), and they add up.
  ElementType type = in.v.shape().type;
  Value zero = ir::Constant(0, ir::Shape(type, {}));
  std::vector<int64_t> piece_dims = expected;
  piece_dims.pop_back();
  Value out = ir::Constant(0, ir::Shape(type, dims));
  const int64_t last = static_cast<int64_t>(expected.size()) - 1;
  for (int64_t k = 0; k < size; ++k) {
    Value piece = ir::Reshape(SliceDim(in.v, last, k, k + 1), piece_dims);
    std::vector<int64_t> low(dims.size(), 0), high(dims.size(), 0), interior(dims.size(), 0);
    low[d] = k;
    interior[d] = step - 1;
    high[d] = n - (k + (windows - 1) * step + 1);
    out = Add(out, ir::Pad(piece, zero, low, high, interior));
  }
  if (rank == 0) out = ir::Reshape(out, {});
  return AtenFromIr(out, in.device);
}

namespace {
// Places `src` ([batch..., len]) on the `offset` diagonal of a zero [batch..., n, m]
// block (the inverse of the extraction in diagonal_copy): interior padding spreads the
// values cols + 1 apart in the flattened rows, then edge padding restores the rows and
// columns cut off by the offset. Returns the block and a predicate of the same shape
// marking the diagonal.
std::pair<Value, Value> DiagonalEmbed(const Value& src, const std::vector<int64_t>& batch, int64_t n, int64_t m,
                                      int64_t offset) {
  int64_t r0 = offset < 0 ? std::min(-offset, n) : 0, c0 = offset > 0 ? std::min(offset, m) : 0;
  int64_t rows = n - r0, cols = m - c0, len = std::min(rows, cols);
  int64_t b = static_cast<int64_t>(batch.size());
  ElementType type = src.shape().type;
  auto embed = [&](const Value& v, ElementType t) {
    std::vector<int64_t> lo(b + 1, 0), hi(b + 1, 0), in(b + 1, 0);
    Value flat;
    if (len == 0) {
      std::vector<int64_t> dims = batch;
      dims.push_back(0);
      flat = ir::Constant(0, ir::Shape(t, dims));
    } else {
      in[b] = cols;
      hi[b] = len * cols - ((len - 1) * (cols + 1) + 1);
      flat = ir::Pad(v, ir::Constant(0, ir::Shape(t, {})), lo, hi, in);
    }
    std::vector<int64_t> block = batch;
    block.push_back(len);
    block.push_back(cols);
    Value g = ir::Reshape(flat, block);
    std::vector<int64_t> lo2(b + 2, 0), hi2(b + 2, 0), in2(b + 2, 0);
    lo2[b] = r0;
    hi2[b] = n - r0 - len;
    lo2[b + 1] = c0;
    return ir::Pad(g, ir::Constant(0, ir::Shape(t, {})), lo2, hi2, in2);
  };
  Value values = embed(src, type);
  Value mask = embed(ir::Constant(1, ir::Shape(ElementType::kPred, src.shape().dims)), ElementType::kPred);
  return {values, mask};
}

// The permutation moving dim1, dim2 last, and its inverse.
void DiagonalPerm(int64_t rank, int64_t d1, int64_t d2, std::vector<int64_t>* perm, std::vector<int64_t>* inverse) {
  perm->clear();
  for (int64_t i = 0; i < rank; ++i)
    if (i != d1 && i != d2) perm->push_back(i);
  perm->push_back(d1);
  perm->push_back(d2);
  inverse->assign(rank, 0);
  for (int64_t i = 0; i < rank; ++i) (*inverse)[(*perm)[i]] = i;
}
}  // namespace

at::Tensor XLANativeFunctions::diagonal_backward(const at::Tensor& grad_output, at::IntArrayRef input_sizes,
                                                 int64_t offset, int64_t dim1, int64_t dim2) {
  XLA_COUNT("diagonal_backward");
  int64_t rank = static_cast<int64_t>(input_sizes.size());
  TORCH_CHECK(rank >= 2, "diagonal_backward: expected input sizes of rank >= 2, got ", input_sizes);
  int64_t d1 = WrapDim(dim1, rank, "diagonal_backward"), d2 = WrapDim(dim2, rank, "diagonal_backward");
  IrInput g = GetIrInput(grad_output, "diagonal_backward");
  std::vector<int64_t> perm, inverse, batch;
  DiagonalPerm(rank, d1, d2, &perm, &inverse);
  for (int64_t i = 0; i < rank - 2; ++i) batch.push_back(input_sizes[perm[i]]);
  auto [values, mask] = Checked("diagonal_backward", [&] {
    return DiagonalEmbed(g.v, batch, input_sizes[d1], input_sizes[d2], offset);
  });
  return AtenFromIr(ir::Transpose(values, inverse), g.device);
}

at::Tensor XLANativeFunctions::diagonal_scatter(const at::Tensor& self, const at::Tensor& src, int64_t offset,
                                                int64_t dim1, int64_t dim2) {
  XLA_COUNT("diagonal_scatter");
  int64_t rank = self.dim();
  TORCH_CHECK(rank >= 2, "diagonal_scatter: expected a tensor with at least 2 dimensions, got ", DescribeTensor(self));
  int64_t d1 = WrapDim(dim1, rank, "diagonal_scatter"), d2 = WrapDim(dim2, rank, "diagonal_scatter");
  TORCH_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  IrInput base = GetIrInput(self, "diagonal_scatter");
  IrInput s = GetIrInput(src, "diagonal_scatter");
  std::vector<int64_t> perm, inverse, batch;
  DiagonalPerm(rank, d1, d2, &perm, &inverse);
  for (int64_t i = 0; i < rank - 2; ++i) batch.push_back(self.size(perm[i]));
  int64_t n = self.size(d1), m = self.size(d2);
  int64_t r0 = offset < 0 ? std::min(-offset, n) : 0, c0 = offset > 0 ? std::min(offset, m) : 0;
  std::vector<int64_t> expected = batch;
  expected.push_back(std::min(n - r0, m - c0));
  TORCH_CHECK(s.v.shape().dims == expected, "diagonal_scatter: expected src to have a size equal to the diagonal of "
              "self. src size = ", src.sizes(), ", diagonal size = ", at::IntArrayRef(expected));
  return AtenFromIr(Checked("diagonal_scatter", [&] {
                      auto [values, mask] = DiagonalEmbed(ir::Convert(s.v, base.v.shape().type), batch, n, m, offset);
                      return ir::Select(ir::Transpose(mask, inverse), ir::Transpose(values, inverse), base.v);
                    }),
                    base.device);
}

at::Tensor XLANativeFunctions::diag_embed(const at::Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  XLA_COUNT("diag_embed");
  int64_t rank = self.dim() + 1;
  TORCH_CHECK(self.dim() >= 1, "diag_embed: expected a tensor with at least 1 dimension, got ", DescribeTensor(self));
  int64_t d1 = WrapDim(dim1, rank, "diag_embed"), d2 = WrapDim(dim2, rank, "diag_embed");
  TORCH_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  IrInput in = GetIrInput(self, "diag_embed");
  std::vector<int64_t> batch(in.v.shape().dims.begin(), in.v.shape().dims.end() - 1);
  int64_t n = in.v.shape().dims.back() + std::abs(offset);
  std::vector<int64_t> perm, inverse;
  DiagonalPerm(rank, d1, d2, &perm, &inverse);
  return AtenFromIr(Checked("diag_embed", [&] {
                      return ir::Transpose(DiagonalEmbed(in.v, batch, n, n, offset).first, inverse);
                    }),
                    in.device);
}

// _chunk_cat's composite kernel writes into views of its result (cat_out into a view),
// which cannot work below functionalization, where it would run; lowered directly:
// each tensor is split along dim into num_chunks chunks of ceil(size / num_chunks)
// (the last ones padded with zeros), each chunk flattened after dim, and the tensors'
// chunks concatenated along dim + 1: [*sizes[:dim], num_chunks, sum of chunk numels].
at::Tensor XLANativeFunctions::_chunk_cat(at::TensorList tensors, int64_t dim, int64_t num_chunks) {
  XLA_COUNT("_chunk_cat");
  const char* op = "_chunk_cat";
  TORCH_CHECK(!tensors.empty(), op, " expects a non-empty input tensor list");
  TORCH_CHECK(num_chunks >= 1, op, " expects positive num_chunks, got ", num_chunks);
  const at::Tensor& first = tensors[0];
  TORCH_CHECK(first.dim() > 0, op, " expects non-scalar input tensors");
  int64_t d = WrapDim(dim, first.dim(), op);
  int device = -1;
  std::vector<Value> parts;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor& t = tensors[i];
    TORCH_CHECK(t.dim() > d, op, " expects every tensor to have more than ", d, " dimensions, got tensor ", i, " ",
                DescribeTensor(t));
    TORCH_CHECK(t.scalar_type() == first.scalar_type(), op, " expects all input tensors with the same dtype, got ",
                first.scalar_type(), " and ", t.scalar_type());
    for (int64_t j = 0; j < d; ++j)
      TORCH_CHECK(t.size(j) == first.size(j), op, " expects same sizes of 0,...,dim-1 dimensions for all tensors, got ",
                  DescribeTensor(first), " and ", DescribeTensor(t));
    IrInput in = GetIrInput(t, op);
    if (device < 0) device = in.device;
    TORCH_CHECK(in.device == device, op, ": expected all tensors on one device");
    int64_t size = t.size(d);
    int64_t chunk = (size + num_chunks - 1) / num_chunks;
    std::vector<int64_t> low(t.dim(), 0), high(t.dim(), 0), interior(t.dim(), 0);
    high[d] = chunk * num_chunks - size;
    Value padded = Checked(op, [&] {
      return ir::Pad(in.v, ir::Constant(0, ir::Shape(in.v.shape().type, {})), low, high, interior);
    });
    int64_t rest = 1;
    for (int64_t j = d + 1; j < t.dim(); ++j) rest *= t.size(j);
    std::vector<int64_t> dims(t.sizes().begin(), t.sizes().begin() + d);
    dims.push_back(num_chunks);
    dims.push_back(chunk * rest);
    parts.push_back(ir::Reshape(padded, dims));
  }
  return AtenFromIr(Checked(op, [&] { return ir::Concatenate(parts, d + 1); }), device);
}

// block_diag writes its blocks through views of a zero matrix, which cannot work below
// functionalization; each block is padded to full width and the rows concatenated.
at::Tensor XLANativeFunctions::block_diag(at::TensorList tensors) {
  XLA_COUNT("block_diag");
  TORCH_CHECK(!tensors.empty(), "torch.block_diag: expected at least one tensor");
  at::native::ResultTypeState state{};
  int64_t cols = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    TORCH_CHECK(tensors[i].dim() <= 2, "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input ", i,
                " has ", tensors[i].dim(), " dimensions");
    state = at::native::update_result_type_state(tensors[i], state);
    cols += tensors[i].dim() == 2 ? tensors[i].size(1) : tensors[i].dim() == 1 ? tensors[i].size(0) : 1;
  }
  ElementType type = ElementTypeOf(at::native::result_type(state));
  std::vector<Value> rows;
  int device = -1;
  int64_t c0 = 0;
  for (const at::Tensor& t : tensors) {
    IrInput in = GetIrInput(t, "block_diag");
    device = in.device;
    int64_t r = t.dim() == 2 ? t.size(0) : 1, c = t.dim() == 2 ? t.size(1) : t.dim() == 1 ? t.size(0) : 1;
    Value block = ir::Reshape(ir::Convert(in.v, type), {r, c});
    rows.push_back(ir::Pad(block, ir::Constant(0, ir::Shape(type, {})), {0, c0}, {0, cols - c0 - c}, {0, 0}));
    c0 += c;
  }
  return AtenFromIr(Checked("block_diag", [&] { return ir::Concatenate(rows, 0); }), device);
}

}  // namespace torch_xla
