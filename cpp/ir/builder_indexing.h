#pragma once
// Constructors of the indexing and sorting IR ops (stablehlo.gather, stablehlo.scatter,
// stablehlo.dynamic_slice, stablehlo.dynamic_update_slice, stablehlo.sort) with their
// shape rules. Like ir/builder.h, every function checks its
// inputs and throws std::invalid_argument naming the op and the shapes.
//
// Index semantics (those of XLA, which cannot check device values before running):
// gather clamps each start index so the slice lies inside the operand; scatter skips
// the updates whose window would fall outside the operand. The ATen layer wraps
// negative indices first (PyTorch semantics), so only truly out-of-range indices clamp
// (gather) or are dropped (scatter) instead of raising as PyTorch does on the CPU.
#include <vector>

#include "ir/builder.h"

namespace torch_xla::ir {

// stablehlo.gather (see the StableHLO spec for the dimension numbers). `indices` must
// have an integer type. The result has the operand's element type; its rank is
// (indices rank - 1 if index_vector_dim < indices rank else indices rank) + offset_dims.size().
Value Gather(const Value& operand, const Value& indices, const std::vector<int64_t>& offset_dims,
             const std::vector<int64_t>& collapsed_slice_dims, const std::vector<int64_t>& start_index_map,
             int64_t index_vector_dim, const std::vector<int64_t>& slice_sizes);

// The attributes of a stablehlo.gather node: Gather's arguments (ToAttrs / FromAttrs as
// in ir/builder.h).
struct GatherAttrs {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> slice_sizes;  // one per operand dimension
  Attrs ToAttrs() const;
  static GatherAttrs FromAttrs(const Attrs& attrs);
};

// How stablehlo.scatter combines an update with the current value.
enum class ScatterKind : int64_t { kReplace, kAdd, kMultiply, kMax, kMin };

// stablehlo.scatter of `updates` into `operand` at `indices`. The result has the
// operand's shape and type; `updates` must have the operand's element type.
Value Scatter(ScatterKind kind, const Value& operand, const Value& indices, const Value& updates,
              const std::vector<int64_t>& update_window_dims, const std::vector<int64_t>& inserted_window_dims,
              const std::vector<int64_t>& scatter_dims_to_operand_dims, int64_t index_vector_dim);

// The attributes of a stablehlo.scatter node: Scatter's arguments.
struct ScatterAttrs {
  ScatterKind kind = ScatterKind::kReplace;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  Attrs ToAttrs() const;
  static ScatterAttrs FromAttrs(const Attrs& attrs);
};

// stablehlo.dynamic_slice: the block of `sizes` of `operand` starting at `start` (one
// integer scalar per dimension, all of one type), each start clamped so the block lies
// inside the operand. What a loop reads its step's row with (a loop counter as start).
Value DynamicSlice(const Value& operand, const std::vector<Value>& start, const std::vector<int64_t>& sizes);
struct DynamicSliceAttrs {
  std::vector<int64_t> sizes;  // per dimension
  Attrs ToAttrs() const;
  static DynamicSliceAttrs FromAttrs(const Attrs& attrs);
};

// stablehlo.dynamic_update_slice: `operand` with the block `update` (same element type,
// no larger in any dimension) written at `start`, clamped like DynamicSlice's. XLA
// writes it in place where the operand has no other use.
Value DynamicUpdateSlice(const Value& operand, const Value& update, const std::vector<Value>& start);

// stablehlo.sort of `operands` (equal dimensions) along `dim`, ordered by operands[0]
// (ascending, or descending), stable. Floating NaNs order after every number ascending
// and before every number descending, as in PyTorch. One result per operand.
std::vector<Value> Sort(const std::vector<Value>& operands, int64_t dim, bool descending);

// The attributes of a stablehlo.sort node.
struct SortAttrs {
  int64_t dim = 0;
  bool descending = false;
  Attrs ToAttrs() const;
  static SortAttrs FromAttrs(const Attrs& attrs);
};

}  // namespace torch_xla::ir
