// Lowering rules of gather, scatter and sort (ir/builder_indexing.h).
#include <atomic>
#include <string>

#include "ir/builder_indexing.h"
#include "lowering/lowering_context.h"
#include "runtime/client.h"

namespace torch_xla::lowering {
namespace {

// Names of region arguments and values, unique within any module.
std::string Fresh() {
  static std::atomic<uint64_t> counter{0};
  return "%ix" + std::to_string(counter.fetch_add(1));
}

// "name = [1, 2], " unless the list is empty (the printer's form; empty lists are omitted).
std::string Field(const char* name, const std::vector<int64_t>& list) {
  if (list.empty()) return std::string();
  std::string s = std::string(name) + " = [";
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(list[i]);
  }
  return s + "], ";
}

std::vector<Ssa> LowerGather(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::GatherAttrs a = ir::GatherAttrs::FromAttrs(node.attrs());
  std::string attrs = "dimension_numbers = #stablehlo.gather<" + Field("offset_dims", a.offset_dims) +
                      Field("collapsed_slice_dims", a.collapsed_slice_dims) +
                      Field("start_index_map", a.start_index_map) +
                      "index_vector_dim = " + std::to_string(a.index_vector_dim) +
                      ">, slice_sizes = " + I64Array(a.slice_sizes) + ", indices_are_sorted = false";
  return {ctx.Emit("stablehlo.gather", operands, node.shape(), attrs)};
}
LoweringRule gather_rule("stablehlo.gather", LowerGather);

// operands: the operand, then one start index per dimension.
std::vector<Ssa> LowerDynamicSlice(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::DynamicSliceAttrs a = ir::DynamicSliceAttrs::FromAttrs(node.attrs());
  return {ctx.Emit("stablehlo.dynamic_slice", operands, node.shape(), "slice_sizes = " + I64Array(a.sizes))};
}
LoweringRule dynamic_slice_rule("stablehlo.dynamic_slice", LowerDynamicSlice);

// operands: the operand, the update, then one start index per dimension.
std::vector<Ssa> LowerDynamicUpdateSlice(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return {ctx.Emit("stablehlo.dynamic_update_slice", operands, node.shape())};
}
LoweringRule dynamic_update_slice_rule("stablehlo.dynamic_update_slice", LowerDynamicUpdateSlice);

std::string CombinerRegion(ir::ScatterKind kind, ElementType type) {
  std::string t = Shape(type, {}).ToMlir();
  std::string x = Fresh(), y = Fresh(), r = Fresh();
  std::string s = "      ^bb0(" + x + ": " + t + ", " + y + ": " + t + "):\n";
  const bool pred = type == ElementType::kPred;
  const char* op = nullptr;
  switch (kind) {
    case ir::ScatterKind::kReplace: break;
    case ir::ScatterKind::kAdd: op = pred ? "stablehlo.or" : "stablehlo.add"; break;
    case ir::ScatterKind::kMultiply: op = pred ? "stablehlo.and" : "stablehlo.multiply"; break;
    case ir::ScatterKind::kMax: op = pred ? "stablehlo.or" : "stablehlo.maximum"; break;
    case ir::ScatterKind::kMin: op = pred ? "stablehlo.and" : "stablehlo.minimum"; break;
  }
  if (op == nullptr) {
    r = y;
  } else {
    s += "        " + r + " = \"" + op + "\"(" + x + ", " + y + ") : (" + t + ", " + t + ") -> " + t + "\n";
  }
  s += "        \"stablehlo.return\"(" + r + ") : (" + t + ") -> ()\n";
  return s;
}

std::vector<Ssa> LowerScatter(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::ScatterAttrs a = ir::ScatterAttrs::FromAttrs(node.attrs());
  std::string attrs = "scatter_dimension_numbers = #stablehlo.scatter<" +
                      Field("update_window_dims", a.update_window_dims) +
                      Field("inserted_window_dims", a.inserted_window_dims) +
                      Field("scatter_dims_to_operand_dims", a.scatter_dims_to_operand_dims) + "index_vector_dim = " +
                      std::to_string(a.index_vector_dim) + ">, indices_are_sorted = false, unique_indices = false";
  const ir::ScatterKind kind = a.kind;
  const ElementType type = node.shape().type;
  if (kind == ir::ScatterKind::kAdd && (type == ElementType::kBF16 || type == ElementType::kF16) &&
      !runtime::Client::Get().LowersForCpu()) {
    // A GPU adds the updates of one place in any order, each sum rounded to bfloat16: a
    // place with several updates drifted by several bfloat16 steps. Added in float32 and
    // rounded once, as PyTorch's CUDA index_put_ accumulates (the CPU device adds them in
    // order, as PyTorch's CPU kernel does).
    // Operands: the operand, the indices, the updates.
    std::vector<Ssa> wide = operands;
    wide.front() = ctx.Convert(operands.front(), ElementType::kF32);
    wide.back() = ctx.Convert(operands.back(), ElementType::kF32);
    const Shape sums(ElementType::kF32, node.shape().dims);
    Ssa result = ctx.EmitWithRegion("stablehlo.scatter", wide, {sums}, CombinerRegion(kind, ElementType::kF32), attrs)[0];
    return {ctx.Convert(result, type)};
  }
  std::string region = CombinerRegion(kind, type);
  return ctx.EmitWithRegion("stablehlo.scatter", operands, {node.shape()}, region, attrs);
}
LoweringRule scatter_rule("stablehlo.scatter", LowerScatter);

std::string CompareText(const std::string& r, const char* dir, const std::string& x, const std::string& y,
                        ElementType type) {
  std::string t = Shape(type, {}).ToMlir();
  return "        " + r + " = \"stablehlo.compare\"(" + x + ", " + y + ") {" + CompareAttributes(dir, type) +
         "} : (" + t + ", " + t + ") -> tensor<i1>\n";
}

std::string BoolOp(const std::string& r, const char* op, const std::string& x, const std::string& y) {
  return "        " + r + " = \"" + op + "\"(" + x + ", " + y + ") : (tensor<i1>, tensor<i1>) -> tensor<i1>\n";
}

// The comparator looks at operand 0 only; floats order NaN as the largest value.
std::vector<Ssa> LowerSort(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::SortAttrs a = ir::SortAttrs::FromAttrs(node.attrs());
  const bool descending = a.descending;
  std::string args;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < node.num_outputs(); ++i) {
    std::string t = Shape(node.shape(i).type, {}).ToMlir();
    std::string x = Fresh(), y = Fresh();
    names.push_back(x);
    names.push_back(y);
    if (i) args += ", ";
    args += x + ": " + t + ", " + y + ": " + t;
  }
  ElementType type = node.shape(0).type;
  // Ascending: "x before y" is x < y; descending: x > y.
  std::string x = names[0], y = names[1];
  std::string s = "      ^bb0(" + args + "):\n";
  std::string result = Fresh();
  s += CompareText(result, descending ? "GT" : "LT", x, y, type);
  if (runtime::IsFloating(type)) {
    // NaN is the largest: ascending, x before y also when y is NaN and x is not;
    // descending, when x is NaN and y is not.
    std::string nan_hi = descending ? x : y, other = descending ? y : x;
    std::string is_nan = Fresh(), not_nan = Fresh(), both = Fresh(), any = Fresh();
    s += CompareText(is_nan, "NE", nan_hi, nan_hi, type);
    s += CompareText(not_nan, "EQ", other, other, type);
    s += BoolOp(both, "stablehlo.and", is_nan, not_nan);
    s += BoolOp(any, "stablehlo.or", result, both);
    result = any;
  }
  s += "        \"stablehlo.return\"(" + result + ") : (tensor<i1>) -> ()\n";
  std::string attrs = "dimension = " + std::to_string(a.dim) + " : i64, is_stable = true";
  return ctx.EmitWithRegion("stablehlo.sort", operands, node.shapes(), s, attrs);
}
LoweringRule sort_rule("stablehlo.sort", LowerSort);

}  // namespace
}  // namespace torch_xla::lowering
