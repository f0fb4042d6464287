// Indexing kernels: index_select, index_add, index_copy, index_reduce, index_fill,
// masked_fill, masked_scatter, advanced indexing (index, index_put), take, put and
// nonzero_static. (gather and scatter: ops/scatter_gather.cpp.)
//
// Indices are checked on the host for dtype and shape only: their values live on the
// device. Negative indices wrap as in PyTorch. Out-of-range indices do not raise (as
// they do on the CPU): reads (index_select, index, take) clamp them into range, writes (index_add, index_put, put) drop them,
// which is XLA's behaviour for stablehlo.gather / stablehlo.scatter.
#include <ATen/ATen.h>

#include <algorithm>

#include "XLANativeFunctions.h"
#include "aten/transfer.h"
#include "ir/builder_indexing.h"
#include "ops/indexing_util.h"
#include "ops/kernel_util.h"
#include "ops/reduce_util.h"
#include "runtime/metrics.h"

namespace torch_xla {
namespace {

using ir::ScatterKind;
using ir::Shape;
using ir::Value;
using runtime::ElementType;
using namespace reduce_util;
using namespace indexing_util;

// IndexValue for advanced indexing, where PyTorch also takes index tensors on the CPU
// (x[torch.tensor([0, 2])]): those are uploaded to `device`.
Value AdvancedIndexValue(const at::Tensor& index, int64_t size, int device, const char* op) {
  if (IsXlaTensor(index)) return IndexValue(index, size, op);
  TORCH_CHECK(index.device().is_cpu(), op, ": index tensors must be on the XLA device or the CPU, got ",
              index.device());
  Value v = FromCpuTensor(index.contiguous(), device)->GetIrValue();
  return WrapIndex(ir::Convert(v, ElementType::kS64), size);
}

}  // namespace

// ---- index_select, index_add -----------------------------------------------------------
at::Tensor XLANativeFunctions::index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  XLA_COUNT("index_select");
  const char* op = "index_select";
  CheckIndexType(index, op, true);
  TORCH_CHECK(index.dim() <= 1, "index_select(): Index is supposed to be a vector, got ", DescribeTensor(index));
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, s.rank(), op);
  int64_t n = index.numel();
  if (s.rank() == 0) {
    // As in PyTorch: a 0-dim self takes one index and gives a 0-dim result.
    TORCH_CHECK(n == 1, "index_select(): Index to scalar can have only 1 value, got ", n,
                " value(s)");
    return AtenFromIr(x->GetIrValue(), x->device());
  }
  std::vector<int64_t> out_dims = s.dims;
  out_dims[d] = n;
  if (n == 0 || s.numel() == 0) {
    TORCH_CHECK(n == 0 || s.dims[d] > 0, "index_select(): index out of range in self (", DescribeTensor(self),
                ", index ", DescribeTensor(index), ")");
    return AtenFromIr(ir::Constant(0, Shape(s.type, out_dims)), x->device());
  }
  return Checked(op, [&] {
    Value idx = ir::Reshape(IndexValue(index, s.dims[d], op), {n, 1});
    std::vector<int64_t> slice = s.dims;
    slice[d] = 1;
    std::vector<int64_t> offset_dims;
    for (int64_t i = 0; i < s.rank(); ++i)
      if (i != d) offset_dims.push_back(i);
    return AtenFromIr(ir::Gather(x->GetIrValue(), idx, offset_dims, {d}, {d}, 1, slice), x->device());
  });
}

at::Tensor XLANativeFunctions::index_add(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                         const at::Tensor& source, const at::Scalar& alpha) {
  XLA_COUNT("index_add");
  const char* op = "index_add";
  CheckIndexType(index, op, true);
  TORCH_CHECK(index.dim() <= 1, "index_add(): Index is supposed to be a vector, got ", DescribeTensor(index));
  TORCH_CHECK(source.scalar_type() == self.scalar_type(), "index_add(): self (", DescribeTensor(self),
              ") and source (", DescribeTensor(source), ") must have the same scalar type");
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, s.rank(), op);
  int64_t n = index.numel();
  bool shapes_ok = source.dim() == self.dim() || (self.dim() == 0 && source.numel() == 1);
  for (int64_t i = 0; shapes_ok && i < self.dim(); ++i)
    shapes_ok = source.size(i) == (i == d ? n : self.size(i));
  TORCH_CHECK(shapes_ok, "index_add(): source ", DescribeTensor(source), " does not match self ",
              DescribeTensor(self), " with ", n, " indices along dimension ", d);
  if (n == 0) return AtenFromIr(x->GetIrValue(), x->device());
  return Checked(op, [&] {
    Value src = GetXlaTensor(source, op)->GetIrValue();
    if (alpha.toDouble() != 1.0)
      src = ir::Binary(ir::op::kMultiply, src, ir::Broadcast(IrScalar(alpha, s.type), src.shape().dims));
    if (s.rank() == 0) return AtenFromIr(ir::Binary(ir::op::kAdd, x->GetIrValue(), ir::Reshape(src, {})), x->device());
    Value idx = ir::Reshape(IndexValue(index, s.dims[d], op), {n, 1});
    std::vector<int64_t> window;
    for (int64_t i = 0; i < s.rank(); ++i)
      if (i != d) window.push_back(i);
    return AtenFromIr(ir::Scatter(ScatterKind::kAdd, x->GetIrValue(), idx, src, window, {d}, {d}, 1), x->device());
  });
}

// ---- masked_fill ------------------------------------------------------------------------
namespace {

at::Tensor MaskedFill(const at::Tensor& self, const at::Tensor& mask, const Value& value, int device) {
  const char* op = "masked_fill";
  TORCH_CHECK(mask.scalar_type() == at::kBool, op, ": expected a bool mask, got ", DescribeTensor(mask));
  XlaTensorPtr x = GetXlaTensor(self, op);
  return Checked(op, [&] {
    const auto& dims = x->shape().dims;
    std::vector<int64_t> out = ir::BroadcastDims(dims, mask.sizes().vec(), op);
    TORCH_CHECK(out == dims, op, ": mask ", DescribeTensor(mask), " cannot be broadcast to self ",
                DescribeTensor(self), " (an in-place op cannot grow self)");
    Value m = ir::Broadcast(IrOperand(mask, ElementType::kPred, op), dims);
    return AtenFromIr(ir::Select(m, ir::Broadcast(value, dims), x->GetIrValue()), device);
  });
}

}  // namespace

at::Tensor XLANativeFunctions::masked_fill(const at::Tensor& self, const at::Tensor& mask, const at::Scalar& value) {
  XLA_COUNT("masked_fill");
  int device = CommonDevice({&self, &mask}, "masked_fill");
  return MaskedFill(self, mask, IrScalar(value, ElementTypeOf(self.scalar_type())), device);
}

at::Tensor XLANativeFunctions::masked_fill(const at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  XLA_COUNT("masked_fill");
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  int device = CommonDevice({&self, &mask, &value}, "masked_fill");
  return MaskedFill(self, mask, IrOperand(value, ElementTypeOf(self.scalar_type()), "masked_fill"), device);
}

// index_fill: the positions along `dim` that any index names, as a [size] mask, select
// `value` there (negative indices wrap; repeated ones are harmless).
namespace {

at::Tensor IndexFill(const at::Tensor& self, int64_t dim, const at::Tensor& index, const Value& value, int device) {
  const char* op = "index_fill_";
  CheckIndexType(index, op, false);
  TORCH_CHECK(index.dim() <= 1, op, "(): Index has to be a vector/scalar, got ", DescribeTensor(index));
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t d = WrapDim(dim, std::max<int64_t>(s.rank(), 1), op);
  if (s.rank() == 0 || index.numel() == 0) {
    if (index.numel() == 0) return AtenFromIr(x->GetIrValue(), device);
    return AtenFromIr(ir::Convert(value, s.type), device);  // a 0-dim self: its only element
  }
  return Checked(op, [&] {
    int64_t n = index.numel(), size = s.dims[d];
    Value idx = ir::BroadcastInDim(ir::Reshape(IndexValue(index, size, op), {n}), {n, size}, {0});
    Value position = ir::Iota(Shape(ElementType::kS64, {n, size}), 1);
    Value named = ir::Reduce(ir::ReduceKind::kOr, ir::Compare(ir::CompareDirection::kEq, idx, position), {0});
    Value mask = ir::BroadcastInDim(named, s.dims, {d});
    return AtenFromIr(ir::Select(mask, ir::Broadcast(ir::Convert(value, s.type), s.dims), x->GetIrValue()), device);
  });
}

}  // namespace

at::Tensor XLANativeFunctions::index_fill(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                          const at::Scalar& value) {
  XLA_COUNT("index_fill");
  int device = CommonDevice({&self, &index}, "index_fill_");
  return IndexFill(self, dim, index, IrScalar(value, ElementTypeOf(self.scalar_type())), device);
}

at::Tensor XLANativeFunctions::index_fill(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                          const at::Tensor& value) {
  XLA_COUNT("index_fill");
  TORCH_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  int device = CommonDevice({&self, &index}, "index_fill_");
  return IndexFill(self, dim, index, IrOperand(value, ElementTypeOf(self.scalar_type()), "index_fill_"), device);
}

// ---- advanced indexing: index, index_put ---------------------------------------------------
namespace {

// The integer index tensors of x[indices] as one gather/scatter description.
struct Advanced {
  std::vector<int64_t> positions;    // indexed dimensions of self, increasing
  std::vector<int64_t> batch;        // the broadcast shape of the index tensors
  Value coords;                      // [*batch, positions.size()], s64, wrapped
  std::vector<int64_t> offset_dims;  // where self's other dimensions go in the result
  std::vector<int64_t> slice_sizes;
  std::vector<int64_t> result_dims;
};

bool HasMask(const c10::List<std::optional<at::Tensor>>& indices) {
  for (std::optional<at::Tensor> t : indices)
    if (t && t->defined() && (t->scalar_type() == at::kBool || t->scalar_type() == at::kByte)) return true;
  return false;
}

Advanced Describe(const Shape& s, const c10::List<std::optional<at::Tensor>>& indices, int device, const char* op) {
  TORCH_CHECK(static_cast<int64_t>(indices.size()) <= s.rank(), op, ": too many indices for tensor of dimension ",
              s.rank(), " (got ", indices.size(), ")");
  Advanced a;
  std::vector<at::Tensor> tensors;
  for (std::size_t i = 0; i < indices.size(); ++i) {
    std::optional<at::Tensor> t = indices.get(i);
    if (!t || !t->defined()) continue;
    CheckIndexType(*t, op, true);
    a.positions.push_back(static_cast<int64_t>(i));
    tensors.push_back(*t);
  }
  TORCH_CHECK(!tensors.empty(), op, ": expected at least one index tensor");
  for (const at::Tensor& t : tensors) a.batch = ir::BroadcastDims(a.batch, t.sizes().vec(), op);
  std::vector<int64_t> one = a.batch;
  one.push_back(1);
  std::vector<Value> parts;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    int64_t size = s.dims[a.positions[k]];
    Value v = ir::Broadcast(AdvancedIndexValue(tensors[k], size, device, op), a.batch);
    parts.push_back(ir::Reshape(v, one));
  }
  a.coords = ir::Concatenate(parts, static_cast<int64_t>(a.batch.size()));
  bool consecutive = a.positions.back() - a.positions.front() + 1 == static_cast<int64_t>(a.positions.size());
  int64_t nb = static_cast<int64_t>(a.batch.size());
  int64_t first = consecutive ? a.positions.front() : 0;
  // Result: self's dims before `first`, the batch, then the remaining dims of self.
  a.slice_sizes = s.dims;
  for (int64_t p : a.positions) a.slice_sizes[p] = 1;
  std::vector<int64_t> rest;
  for (int64_t i = 0; i < s.rank(); ++i)
    if (std::find(a.positions.begin(), a.positions.end(), i) == a.positions.end()) rest.push_back(i);
  for (std::size_t r = 0; r < rest.size(); ++r) {
    int64_t p = static_cast<int64_t>(r);
    a.offset_dims.push_back(p < first ? p : p + nb);
  }
  int64_t rank = nb + static_cast<int64_t>(rest.size());
  a.result_dims.assign(rank, 0);
  std::size_t r = 0, b = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (r < a.offset_dims.size() && a.offset_dims[r] == i)
      a.result_dims[i] = s.dims[rest[r++]];
    else
      a.result_dims[i] = a.batch[b++];
  }
  return a;
}

std::vector<at::Tensor> CpuIndices(const c10::List<std::optional<at::Tensor>>& indices) {
  std::vector<at::Tensor> out;
  for (std::optional<at::Tensor> t : indices) out.push_back(t && t->defined() ? t->cpu() : at::Tensor());
  return out;
}

c10::List<std::optional<at::Tensor>> ToOptionalList(const std::vector<at::Tensor>& v) {
  c10::List<std::optional<at::Tensor>> out;
  for (const at::Tensor& t : v) out.push_back(t.defined() ? std::optional<at::Tensor>(t) : std::nullopt);
  return out;
}

}  // namespace

at::Tensor XLANativeFunctions::index(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  const char* op = "index";
  if (HasMask(indices)) {
    // x[mask] has a data-dependent shape: computed on the CPU, like any fallback op.
    static metrics::Counter* fallback = metrics::GetCounter("aten::index");
    fallback->Add();
    return at::index(self.cpu(), ToOptionalList(CpuIndices(indices))).to(self.device());
  }
  XLA_COUNT("index");
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  return Checked(op, [&] {
    Advanced a = Describe(s, indices, x->device(), op);
    int64_t numel = 1;
    for (int64_t d : a.result_dims) numel *= d;
    if (numel == 0) return AtenFromIr(ir::Constant(0, Shape(s.type, a.result_dims)), x->device());
    return AtenFromIr(ir::Gather(x->GetIrValue(), a.coords, a.offset_dims, a.positions, a.positions,
                                 static_cast<int64_t>(a.batch.size()), a.slice_sizes),
                      x->device());
  });
}

at::Tensor XLANativeFunctions::index_put(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                                         const at::Tensor& values, bool accumulate) {
  const char* op = "index_put";
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "Index put requires the source and destination dtypes match, "
              "got ", DescribeTensor(self), " for the destination and ", DescribeTensor(values), " for the source.");
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  if (HasMask(indices)) {
    // x[mask] = v with one bool mask and a single value (or row) is a select; anything
    // else has a data-dependent shape and runs on the CPU.
    int masks = 0, position = -1;
    for (std::size_t i = 0; i < indices.size(); ++i) {
      std::optional<at::Tensor> t = indices.get(i);
      if (t && t->defined()) {
        ++masks;
        position = static_cast<int>(i);
      }
    }
    std::optional<at::Tensor> mask = masks == 1 ? indices.get(position) : std::nullopt;
    // The value may also be one row for every selected position: a shape that broadcasts
    // to the dimensions after the mask's without needing their count.
    const bool scalar_value = values.numel() == 1;
    bool row_value = false;
    if (mask && !scalar_value && values.dim() <= s.rank() - position - mask->dim()) {
      row_value = true;
      for (int64_t i = 1; row_value && i <= values.dim(); ++i)
        row_value = values.size(-i) == 1 || values.size(-i) == s.dims[s.rank() - i];
    }
    bool simple = mask && mask->scalar_type() == at::kBool && (scalar_value || row_value) &&
                  position + mask->dim() <= s.rank();
    for (int64_t i = 0; simple && i < mask->dim(); ++i) simple = mask->size(i) == s.dims[position + i];
    if (!simple) {
      static metrics::Counter* fallback = metrics::GetCounter("aten::index_put");
      fallback->Add();
      at::Tensor r = at::index_put(self.cpu(), ToOptionalList(CpuIndices(indices)), values.cpu(), accumulate);
      return r.to(self.device());
    }
    XLA_COUNT("index_put");
    return Checked(op, [&] {
      std::vector<int64_t> bdims;
      for (int64_t i = 0; i < mask->dim(); ++i) bdims.push_back(position + i);
      Value m = IsXlaTensor(*mask) ? GetXlaTensor(*mask, op)->GetIrValue()
                                   : FromCpuTensor(mask->contiguous(), x->device())->GetIrValue();
      m = ir::BroadcastInDim(m, s.dims, bdims);
      Value value = IrOperand(values, s.type, op);
      Value v = ir::Broadcast(scalar_value ? ir::Reshape(value, {}) : value, s.dims);
      Value base = x->GetIrValue();
      if (accumulate) v = ir::Binary(ir::op::kAdd, base, v);
      return AtenFromIr(ir::Select(m, v, base), x->device());
    });
  }
  XLA_COUNT("index_put");
  return Checked(op, [&] {
    Advanced a = Describe(s, indices, x->device(), op);
    int64_t numel = 1;
    for (int64_t d : a.result_dims) numel *= d;
    if (numel == 0) return AtenFromIr(x->GetIrValue(), x->device());
    Value v = IrOperand(values, s.type, op);
    std::vector<int64_t> target = ir::BroadcastDims(a.result_dims, v.shape().dims, op);
    TORCH_CHECK(target == a.result_dims, op, ": shape mismatch: value tensor ", DescribeTensor(values),
                " cannot be broadcast to indexing result of shape ", ir::DimsToString(a.result_dims));
    v = ir::Broadcast(v, a.result_dims);
    return AtenFromIr(ir::Scatter(accumulate ? ScatterKind::kAdd : ScatterKind::kReplace, x->GetIrValue(), a.coords,
                                  v, a.offset_dims, a.positions, a.positions, static_cast<int64_t>(a.batch.size())),
                      x->device());
  });
}

// ---- index_copy, index_reduce --------------------------------------------------------
namespace {

// The operands of index_copy / index_reduce (index_add's rules): a vector index and a
// source shaped as self except for index.numel() entries along dim. A 0-dim self works
// as a 1-element vector (rank and dims of the returned values).
struct IndexedSource {
  XlaTensorPtr x;
  Value self;    // self, at least 1-d
  Value idx;     // [n, 1] s64, wrapped
  Value source;  // shaped as self with n entries along d
  int64_t d;
  std::vector<int64_t> window;  // self's dimensions other than d
};

IndexedSource DescribeIndexed(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                              const char* op) {
  CheckIndexType(index, op, true);
  TORCH_CHECK(index.dim() <= 1, op, "(): Index is supposed to be a vector, got ", DescribeTensor(index));
  TORCH_CHECK(source.scalar_type() == self.scalar_type(), op, "(): self (", DescribeTensor(self), ") and source (",
              DescribeTensor(source), ") must have the same scalar type");
  IndexedSource r;
  r.x = GetXlaTensor(self, op);
  const Shape& s = r.x->shape();
  r.d = s.rank() == 0 ? 0 : WrapDim(dim, s.rank(), op);
  int64_t n = index.numel();
  bool shapes_ok = source.dim() == self.dim() || (self.dim() <= 1 && source.dim() <= 1 && source.numel() == n);
  for (int64_t i = 0; shapes_ok && i < self.dim() && i < source.dim(); ++i)
    shapes_ok = source.size(i) == (i == r.d ? n : self.size(i));
  TORCH_CHECK(shapes_ok, op, "(): source ", DescribeTensor(source), " does not match self ", DescribeTensor(self),
              " with ", n, " indices along dimension ", r.d);
  std::vector<int64_t> dims = s.rank() == 0 ? std::vector<int64_t>{1} : s.dims;
  r.self = ir::Reshape(r.x->GetIrValue(), dims);
  std::vector<int64_t> src_dims = dims;
  src_dims[r.d] = n;
  r.source = ir::Reshape(GetXlaTensor(source, op)->GetIrValue(), src_dims);
  if (n > 0) r.idx = ir::Reshape(IndexValue(index, dims[r.d], op), {n, 1});
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i)
    if (i != r.d) r.window.push_back(i);
  return r;
}

Value ScatterRows(ScatterKind kind, const IndexedSource& r, const Value& base, const Value& rows) {
  return ir::Scatter(kind, base, r.idx, rows, r.window, {r.d}, {r.d}, 1);
}

// a / b rounded down, for integer a and positive integer b (PyTorch's floor division).
Value FloorDivByPositive(const Value& a, const Value& b) {
  Value q = ir::Binary(ir::op::kDivide, a, b);
  Value rem = ir::Binary(ir::op::kRemainder, a, b);
  Value adjust = ir::Binary(ir::op::kAnd, ir::Compare(ir::CompareDirection::kNe, rem, ScalarLike(0, rem)),
                            ir::Compare(ir::CompareDirection::kLt, a, ScalarLike(0, a)));
  return ir::Select(adjust, ir::Binary(ir::op::kSubtract, q, ScalarLike(1, q)), q);
}

}  // namespace

at::Tensor XLANativeFunctions::index_copy(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                          const at::Tensor& source) {
  XLA_COUNT("index_copy");
  const char* op = "index_copy";
  IndexedSource r = DescribeIndexed(self, dim, index, source, op);
  if (index.numel() == 0) return AtenFromIr(r.x->GetIrValue(), r.x->device());
  return Checked(op, [&] {
    Value out = ScatterRows(ScatterKind::kReplace, r, r.self, r.source);
    return AtenFromIr(ir::Reshape(out, r.x->shape().dims), r.x->device());
  });
}

// index_reduce: "prod", "mean", "amax" or "amin" of the source rows at each index along
// dim, with self's row too when include_self. (amax / amin use XLA's max / min, whose
// result for NaN inputs may differ from PyTorch's NaN propagation.)
at::Tensor XLANativeFunctions::index_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                            const at::Tensor& source, c10::string_view reduce, bool include_self) {
  XLA_COUNT("index_reduce");
  const char* op = "index_reduce";
  TORCH_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin", op,
              "(): Expected reduce to be one of prod, mean, amax or amin but got ", std::string(reduce), ".");
  IndexedSource r = DescribeIndexed(self, dim, index, source, op);
  if (index.numel() == 0) return AtenFromIr(r.x->GetIrValue(), r.x->device());
  return Checked(op, [&] {
    Value base = r.self;
    Value result;
    if (reduce == "amax" || reduce == "amin") {
      // Without self: first put one of the rows at each target, then reduce all of them.
      if (!include_self) base = ScatterRows(ScatterKind::kReplace, r, base, r.source);
      result = ScatterRows(reduce == "amax" ? ScatterKind::kMax : ScatterKind::kMin, r, base, r.source);
    } else {
      const bool is_prod = reduce == "prod";
      if (!include_self) base = ScatterRows(ScatterKind::kReplace, r, base, ScalarLike(is_prod ? 1 : 0, r.source));
      result = ScatterRows(is_prod ? ScatterKind::kMultiply : ScatterKind::kAdd, r, base, r.source);
      if (!is_prod) {
        // mean: the sum over the count of rows added (self counting as one), targets
        // without rows divided by 1.
        Value counts = ScatterRows(ScatterKind::kAdd, r, ir::Constant(include_self ? 1 : 0, r.self.shape()),
                                   ScalarLike(1, r.source));
        counts = ir::Select(ir::Compare(ir::CompareDirection::kEq, counts, ScalarLike(0, counts)),
                            ScalarLike(1, counts), counts);
        result = IsFloat(r.self.shape().type) ? ir::Binary(ir::op::kDivide, result, counts)
                                              : FloorDivByPositive(result, counts);
      }
    }
    return AtenFromIr(ir::Reshape(result, r.x->shape().dims), r.x->device());
  });
}

// ---- take, put, masked_scatter -----------------------------------------------------
// take / put index self as if it were flattened (row-major).
at::Tensor XLANativeFunctions::take(const at::Tensor& self, const at::Tensor& index) {
  XLA_COUNT("take");
  const char* op = "take";
  TORCH_CHECK(index.scalar_type() == at::kLong, op, "(): Expected a long tensor for index, but got ",
              DescribeTensor(index));
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t n = index.numel(), numel = s.numel();
  std::vector<int64_t> out_dims = index.sizes().vec();
  TORCH_CHECK(n == 0 || numel > 0, op, "(): tried to take from an empty tensor ", DescribeTensor(self));
  if (n == 0) return AtenFromIr(ir::Constant(0, Shape(s.type, out_dims)), x->device());
  return Checked(op, [&] {
    Value flat = ir::Reshape(x->GetIrValue(), {numel});
    Value idx = ir::Reshape(IndexValue(index, numel, op), {n, 1});
    Value out = ir::Gather(flat, idx, {}, {0}, {0}, 1, {1});
    return AtenFromIr(ir::Reshape(out, out_dims), x->device());
  });
}

at::Tensor XLANativeFunctions::put(const at::Tensor& self, const at::Tensor& index, const at::Tensor& source,
                                   bool accumulate) {
  XLA_COUNT("put");
  const char* op = "put";
  TORCH_CHECK(index.scalar_type() == at::kLong, op, "(): Expected a long tensor for index, but got ",
              DescribeTensor(index));
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), op, "(): self (", DescribeTensor(self), ") and source (",
              DescribeTensor(source), ") must have the same scalar type");
  TORCH_CHECK(index.numel() == source.numel(), op, "(): Expected source and index to have the same number of "
              "elements, but got source ", DescribeTensor(source), " and index ", DescribeTensor(index));
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t n = index.numel(), numel = s.numel();
  TORCH_CHECK(n == 0 || numel > 0, op, "(): tried to put into an empty tensor ", DescribeTensor(self));
  if (n == 0) return AtenFromIr(x->GetIrValue(), x->device());
  return Checked(op, [&] {
    Value flat = ir::Reshape(x->GetIrValue(), {numel});
    Value idx = ir::Reshape(IndexValue(index, numel, op), {n, 1});
    Value src = ir::Reshape(GetXlaTensor(source, op)->GetIrValue(), {n});
    Value out = ir::Scatter(accumulate ? ScatterKind::kAdd : ScatterKind::kReplace, flat, idx, src, {}, {0}, {0}, 1);
    return AtenFromIr(ir::Reshape(out, s.dims), x->device());
  });
}

namespace {

// For a flat predicate [n]: the number of true elements before each one (its rank among
// them), as s64.
Value RankAmongTrue(const Value& flat_mask) {
  Value ones = ir::Convert(flat_mask, ElementType::kS64);
  return ir::Binary(ir::op::kSubtract, Scan(ones, 0, ir::op::kAdd, 0), ones);
}

}  // namespace

// masked_scatter: the k-th true element of the mask (row-major) takes source's k-th
// element; the others keep self. Source may have more elements than needed.
at::Tensor XLANativeFunctions::masked_scatter(const at::Tensor& self, const at::Tensor& mask,
                                              const at::Tensor& source) {
  XLA_COUNT("masked_scatter");
  const char* op = "masked_scatter";
  TORCH_CHECK(mask.scalar_type() == at::kBool, op, "(): masked_scatter_ only supports boolean masks, but got mask ",
              DescribeTensor(mask));
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), op, "(): self (", DescribeTensor(self), ") and source (",
              DescribeTensor(source), ") must have the same scalar type");
  int device = CommonDevice({&self, &mask, &source}, op);
  Value sv = GetXlaTensor(self, op)->GetIrValue();
  Value mv = GetXlaTensor(mask, op)->GetIrValue();
  return Checked(op, [&] {
    std::vector<int64_t> dims = ir::BroadcastDims(sv.shape().dims, mv.shape().dims, op);
    Value base = ir::Broadcast(sv, dims);
    Value m = ir::Broadcast(mv, dims);
    int64_t numel = base.shape().numel(), available = source.numel();
    if (numel == 0) return AtenFromIr(base, device);
    if (available == 0) return AtenFromIr(base, device);  // then the mask must be all false
    Value flat_mask = ir::Reshape(m, {numel});
    Value idx = ir::Reshape(RankAmongTrue(flat_mask), {numel, 1});
    Value src = ir::Reshape(GetXlaTensor(source, op)->GetIrValue(), {available});
    Value taken = ir::Reshape(ir::Gather(src, idx, {}, {0}, {0}, 1, {1}), dims);
    return AtenFromIr(ir::Select(m, taken, base), device);
  });
}

// ---- nonzero_static ------------------------------------------------------------------
// The coordinates of the first `size` non-zero elements (row-major), as nonzero gives
// them, in a [size, rank] result padded with fill_value: each non-zero element's row of
// coordinates is scattered to its rank among the non-zero ones; the others (and ranks
// past size) are dropped by the scatter.
at::Tensor XLANativeFunctions::nonzero_static(const at::Tensor& self, int64_t size, int64_t fill_value) {
  XLA_COUNT("nonzero_static");
  const char* op = "nonzero_static";
  TORCH_CHECK(size >= 0, op, ": 'size' must be an non-negative integer, got ", size);
  XlaTensorPtr x = GetXlaTensor(self, op);
  const Shape& s = x->shape();
  int64_t rank = s.rank(), numel = s.numel();
  Shape out(ElementType::kS64, {size, rank});
  // (A 0-dim input has no coordinate columns: [size, 0] whatever its value.)
  if (numel == 0 || size == 0 || rank == 0)
    return AtenFromIr(ir::Constant(static_cast<double>(fill_value), out), x->device());
  return Checked(op, [&] {
    Value flat_mask = ir::Reshape(NonZero(x->GetIrValue()), {numel});
    Value ranks = RankAmongTrue(flat_mask);
    // Elements that are zero go to row `size`, outside the result.
    Value rows = ir::Select(flat_mask, ranks, ScalarLike(static_cast<double>(size), ranks));
    std::vector<Value> columns;
    for (int64_t d = 0; d < rank; ++d)
      columns.push_back(ir::Reshape(ir::Iota(Shape(ElementType::kS64, s.dims), d), {numel, 1}));
    Value coords = ir::Concatenate(columns, 1);
    Value result = ir::Scatter(ScatterKind::kReplace, ir::Constant(static_cast<double>(fill_value), out),
                               ir::Reshape(rows, {numel, 1}), coords, {1}, {0}, {0}, 1);
    return AtenFromIr(result, x->device());
  });
}

}  // namespace torch_xla
