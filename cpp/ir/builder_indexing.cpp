// Gather, scatter and sort constructors and their shape rules (see ir/builder_indexing.h).
#include "ir/builder_indexing.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ir/attrs_reader.h"

namespace torch_xla::ir {
namespace {

const OpKind kGather = OpKind::Get("stablehlo.gather");
const OpKind kScatter = OpKind::Get("stablehlo.scatter");
const OpKind kSort = OpKind::Get("stablehlo.sort");
const OpKind kDynamicSlice = OpKind::Get("stablehlo.dynamic_slice");
const OpKind kDynamicUpdateSlice = OpKind::Get("stablehlo.dynamic_update_slice");

[[noreturn]] void Fail(const char* op, const std::string& what) {
  throw std::invalid_argument(std::string(op) + ": " + what);
}

bool IsIntegral(ElementType t) { return !runtime::IsFloating(t) && !runtime::IsComplex(t) && t != ElementType::kPred; }

// Checks that `dims` are distinct, sorted when `sorted`, and inside [0, rank).
void CheckDimList(const char* op, const char* what, const std::vector<int64_t>& dims, int64_t rank, bool sorted) {
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank)
      Fail(op, std::string(what) + " " + DimsToString(dims) + " out of range for rank " + std::to_string(rank));
    for (std::size_t j = 0; j < i; ++j)
      if (dims[j] == dims[i] || (sorted && dims[j] > dims[i]))
        Fail(op, std::string(what) + " " + DimsToString(dims) + " must be sorted and distinct");
  }
}

// The indices' dimensions without the index vector dimension, and the index vector's length.
std::vector<int64_t> BatchDims(const char* op, const Shape& indices, int64_t index_vector_dim, int64_t* length) {
  if (index_vector_dim < 0 || index_vector_dim > indices.rank())
    Fail(op, "index_vector_dim " + std::to_string(index_vector_dim) + " out of range for indices " +
                 indices.ToString());
  std::vector<int64_t> batch = indices.dims;
  *length = 1;
  if (index_vector_dim < indices.rank()) {
    *length = indices.dims[index_vector_dim];
    batch.erase(batch.begin() + index_vector_dim);
  }
  return batch;
}

// Checks the start indices of a dynamic slice of `operand`: one integer scalar per
// dimension, all of one type.
void CheckStarts(const char* op, const Shape& operand, const std::vector<Value>& start, const std::string& shapes) {
  if (static_cast<int64_t>(start.size()) != operand.rank())
    Fail(op, std::to_string(start.size()) + " start indices for rank " + std::to_string(operand.rank()) + shapes);
  for (const Value& s : start) {
    if (s.shape().rank() != 0 || !IsIntegral(s.shape().type) || s.shape().type != start[0].shape().type)
      Fail(op, "start indices must be integer scalars of one type, got " + s.shape().ToString() + shapes);
  }
}

}  // namespace

Value DynamicSlice(const Value& operand, const std::vector<Value>& start, const std::vector<int64_t>& sizes) {
  const char* op = "dynamic_slice";
  const Shape& in = operand.shape();
  const std::string shapes = " (operand " + in.ToString() + ", sizes " + DimsToString(sizes) + ")";
  CheckStarts(op, in, start, shapes);
  if (static_cast<int64_t>(sizes.size()) != in.rank()) Fail(op, "sizes do not match the operand's rank" + shapes);
  for (int64_t i = 0; i < in.rank(); ++i)
    if (sizes[i] < 0 || sizes[i] > in.dims[i]) Fail(op, "sizes exceed the operand" + shapes);
  std::vector<Value> operands{operand};
  operands.insert(operands.end(), start.begin(), start.end());
  return Value(MakeNode(kDynamicSlice, std::move(operands), Shape(in.type, sizes), DynamicSliceAttrs{sizes}.ToAttrs()));
}

Value DynamicUpdateSlice(const Value& operand, const Value& update, const std::vector<Value>& start) {
  const char* op = "dynamic_update_slice";
  const Shape& in = operand.shape();
  const Shape& up = update.shape();
  const std::string shapes = " (operand " + in.ToString() + ", update " + up.ToString() + ")";
  CheckStarts(op, in, start, shapes);
  if (up.type != in.type || up.rank() != in.rank()) Fail(op, "update and operand types or ranks differ" + shapes);
  for (int64_t i = 0; i < in.rank(); ++i)
    if (up.dims[i] > in.dims[i]) Fail(op, "update larger than the operand" + shapes);
  std::vector<Value> operands{operand, update};
  operands.insert(operands.end(), start.begin(), start.end());
  return Value(MakeNode(kDynamicUpdateSlice, std::move(operands), in, Attrs{}));
}

Value Gather(const Value& operand, const Value& indices, const std::vector<int64_t>& offset_dims,
             const std::vector<int64_t>& collapsed_slice_dims, const std::vector<int64_t>& start_index_map,
             int64_t index_vector_dim, const std::vector<int64_t>& slice_sizes) {
  const char* op = "gather";
  const Shape& in = operand.shape();
  const Shape& idx = indices.shape();
  const std::string shapes = " (operand " + in.ToString() + ", indices " + idx.ToString() + ")";
  if (!IsIntegral(idx.type)) Fail(op, "indices must have an integer type" + shapes);
  int64_t length = 0;
  std::vector<int64_t> batch = BatchDims(op, idx, index_vector_dim, &length);
  if (length != static_cast<int64_t>(start_index_map.size()))
    Fail(op, "index vectors of length " + std::to_string(length) + " for start_index_map " +
                 DimsToString(start_index_map) + shapes);
  CheckDimList(op, "start_index_map", start_index_map, in.rank(), false);
  CheckDimList(op, "collapsed_slice_dims", collapsed_slice_dims, in.rank(), true);
  if (static_cast<int64_t>(slice_sizes.size()) != in.rank())
    Fail(op, "slice_sizes " + DimsToString(slice_sizes) + " do not match the operand's rank" + shapes);
  for (int64_t i = 0; i < in.rank(); ++i)
    if (slice_sizes[i] < 0 || slice_sizes[i] > in.dims[i])
      Fail(op, "slice_sizes " + DimsToString(slice_sizes) + " exceed the operand" + shapes);
  for (int64_t d : collapsed_slice_dims)
    if (slice_sizes[d] > 1) Fail(op, "collapsed dimension " + std::to_string(d) + " has slice size > 1" + shapes);
  std::vector<int64_t> offsets;
  for (int64_t i = 0; i < in.rank(); ++i)
    if (std::find(collapsed_slice_dims.begin(), collapsed_slice_dims.end(), i) == collapsed_slice_dims.end())
      offsets.push_back(slice_sizes[i]);
  if (offsets.size() != offset_dims.size())
    Fail(op, "offset_dims " + DimsToString(offset_dims) + " do not match the uncollapsed slice dimensions" + shapes);
  int64_t rank = static_cast<int64_t>(batch.size() + offsets.size());
  CheckDimList(op, "offset_dims", offset_dims, rank, true);
  std::vector<int64_t> dims(rank);
  std::size_t b = 0, o = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (o < offset_dims.size() && offset_dims[o] == i)
      dims[i] = offsets[o++];
    else
      dims[i] = batch[b++];
  }
  const GatherAttrs attrs{offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim, slice_sizes};
  return Value(MakeNode(kGather, std::vector<Value>{operand, indices}, Shape(in.type, dims), attrs.ToAttrs()));
}

Value Scatter(ScatterKind kind, const Value& operand, const Value& indices, const Value& updates,
              const std::vector<int64_t>& update_window_dims, const std::vector<int64_t>& inserted_window_dims,
              const std::vector<int64_t>& scatter_dims_to_operand_dims, int64_t index_vector_dim) {
  const char* op = "scatter";
  const Shape& in = operand.shape();
  const Shape& idx = indices.shape();
  const Shape& up = updates.shape();
  const std::string shapes =
      " (operand " + in.ToString() + ", indices " + idx.ToString() + ", updates " + up.ToString() + ")";
  if (!IsIntegral(idx.type)) Fail(op, "indices must have an integer type" + shapes);
  if (up.type != in.type) Fail(op, "updates and operand element types differ" + shapes);
  int64_t length = 0;
  std::vector<int64_t> batch = BatchDims(op, idx, index_vector_dim, &length);
  if (length != static_cast<int64_t>(scatter_dims_to_operand_dims.size()))
    Fail(op, "index vectors of length " + std::to_string(length) + " for scatter_dims_to_operand_dims " +
                 DimsToString(scatter_dims_to_operand_dims) + shapes);
  CheckDimList(op, "scatter_dims_to_operand_dims", scatter_dims_to_operand_dims, in.rank(), false);
  CheckDimList(op, "inserted_window_dims", inserted_window_dims, in.rank(), true);
  CheckDimList(op, "update_window_dims", update_window_dims, up.rank(), true);
  if (update_window_dims.size() + inserted_window_dims.size() != static_cast<std::size_t>(in.rank()))
    Fail(op, "update_window_dims " + DimsToString(update_window_dims) + " and inserted_window_dims " +
                 DimsToString(inserted_window_dims) + " do not cover the operand" + shapes);
  if (up.rank() != static_cast<int64_t>(batch.size() + update_window_dims.size()))
    Fail(op, "updates rank does not match indices and update_window_dims" + shapes);
  std::size_t b = 0, w = 0;
  int64_t operand_dim = 0;
  for (int64_t i = 0; i < up.rank(); ++i) {
    if (w < update_window_dims.size() && update_window_dims[w] == i) {
      while (std::find(inserted_window_dims.begin(), inserted_window_dims.end(), operand_dim) !=
             inserted_window_dims.end())
        ++operand_dim;
      if (up.dims[i] > in.dims[operand_dim]) Fail(op, "update window larger than the operand" + shapes);
      ++operand_dim;
      ++w;
    } else if (up.dims[i] != batch[b++]) {
      Fail(op, "updates' scatter dimensions do not match the indices" + shapes);
    }
  }
  const ScatterAttrs attrs{kind, index_vector_dim, update_window_dims, inserted_window_dims,
                           scatter_dims_to_operand_dims};
  return Value(MakeNode(kScatter, std::vector<Value>{operand, indices, updates}, in, attrs.ToAttrs()));
}

std::vector<Value> Sort(const std::vector<Value>& operands, int64_t dim, bool descending) {
  if (operands.empty()) Fail("sort", "no operands");
  const Shape& first = operands[0].shape();
  if (dim < 0 || dim >= std::max<int64_t>(first.rank(), 1) || first.rank() == 0)
    Fail("sort", "dimension " + std::to_string(dim) + " out of range for " + first.ToString());
  std::vector<Shape> shapes;
  for (const Value& v : operands) {
    if (v.shape().dims != first.dims)
      Fail("sort", "operand " + v.shape().ToString() + " does not match " + first.ToString());
    shapes.push_back(v.shape());
  }
  NodePtr node = MakeNode(kSort, operands, std::move(shapes), SortAttrs{dim, descending}.ToAttrs());
  std::vector<Value> out;
  for (uint32_t i = 0; i < operands.size(); ++i) out.emplace_back(node, i);
  return out;
}

// [index_vector_dim, offset_dims, collapsed_slice_dims, start_index_map (each counted),
//  slice_sizes...]
Attrs GatherAttrs::ToAttrs() const {
  Attrs attrs;
  attrs.ints.push_back(index_vector_dim);
  AppendCountedInts(attrs.ints, offset_dims);
  AppendCountedInts(attrs.ints, collapsed_slice_dims);
  AppendCountedInts(attrs.ints, start_index_map);
  AppendInts(attrs.ints, slice_sizes);
  return attrs;
}

GatherAttrs GatherAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "gather");
  GatherAttrs a;
  a.index_vector_dim = r.Next();
  a.offset_dims = r.TakeCounted();
  a.collapsed_slice_dims = r.TakeCounted();
  a.start_index_map = r.TakeCounted();
  a.slice_sizes = r.TakeRest();
  return a;
}

// [kind, index_vector_dim, update_window_dims, inserted_window_dims,
//  scatter_dims_to_operand_dims (each counted)]
Attrs ScatterAttrs::ToAttrs() const {
  Attrs attrs;
  attrs.ints.push_back(static_cast<int64_t>(kind));
  attrs.ints.push_back(index_vector_dim);
  AppendCountedInts(attrs.ints, update_window_dims);
  AppendCountedInts(attrs.ints, inserted_window_dims);
  AppendCountedInts(attrs.ints, scatter_dims_to_operand_dims);
  return attrs;
}

ScatterAttrs ScatterAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "scatter");
  ScatterAttrs a;
  const int64_t kind = r.Next();
  if (kind < static_cast<int64_t>(ScatterKind::kReplace) || kind > static_cast<int64_t>(ScatterKind::kMin))
    r.Malformed();
  a.kind = static_cast<ScatterKind>(kind);
  a.index_vector_dim = r.Next();
  a.update_window_dims = r.TakeCounted();
  a.inserted_window_dims = r.TakeCounted();
  a.scatter_dims_to_operand_dims = r.TakeCounted();
  r.Finish();
  return a;
}

// [dim, descending (0 or 1)]
Attrs DynamicSliceAttrs::ToAttrs() const {
  Attrs attrs;
  attrs.ints = sizes;
  return attrs;
}

DynamicSliceAttrs DynamicSliceAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "dynamic_slice");
  return DynamicSliceAttrs{r.TakeRest()};
}

Attrs SortAttrs::ToAttrs() const {
  Attrs attrs;
  attrs.ints = {dim, descending ? 1 : 0};
  return attrs;
}

SortAttrs SortAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "sort");
  SortAttrs a;
  a.dim = r.Next();
  a.descending = r.Next() != 0;
  r.Finish();
  return a;
}

}  // namespace torch_xla::ir
