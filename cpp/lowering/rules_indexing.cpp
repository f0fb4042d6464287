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

// "[1, 2]" starting at a[pos] (a length-prefixed list); advances pos.
std::string TakeList(const std::vector<int64_t>& a, std::size_t& pos) {
  std::size_t n = static_cast<std::size_t>(a[pos++]);
  std::string s = "[";
  for (std::size_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += std::to_string(a[pos++]);
  }
  return s + "]";
}

// ", name = [..]" unless the list is empty (the printer's form; empty lists are omitted).
std::string Field(const char* name, const std::string& list) {
  return list == "[]" ? std::string() : std::string(name) + " = " + list + ", ";
}

// attrs.ints: index_vector_dim, offset_dims, collapsed_slice_dims, start_index_map
// (each length-prefixed), slice_sizes (operand rank).
std::vector<Ssa> LowerGather(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const auto& a = node.attrs().ints;
  std::size_t pos = 1;
  std::string offset = TakeList(a, pos), collapsed = TakeList(a, pos), start = TakeList(a, pos);
  std::vector<int64_t> slice_sizes(a.begin() + static_cast<std::ptrdiff_t>(pos), a.end());
  std::string attrs = "dimension_numbers = #stablehlo.gather<" + Field("offset_dims", offset) +
                      Field("collapsed_slice_dims", collapsed) + Field("start_index_map", start) +
                      "index_vector_dim = " + std::to_string(a[0]) + ">, slice_sizes = " + I64Array(slice_sizes) +
                      ", indices_are_sorted = false";
  return {ctx.Emit("stablehlo.gather", operands, node.shape(), attrs)};
}
LoweringRule gather_rule("stablehlo.gather", LowerGather);

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

// attrs.ints: ScatterKind, index_vector_dim, update_window_dims, inserted_window_dims,
// scatter_dims_to_operand_dims (each length-prefixed).
std::vector<Ssa> LowerScatter(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const auto& a = node.attrs().ints;
  std::size_t pos = 2;
  std::string window = TakeList(a, pos), inserted = TakeList(a, pos), to_operand = TakeList(a, pos);
  std::string attrs = "scatter_dimension_numbers = #stablehlo.scatter<" + Field("update_window_dims", window) +
                      Field("inserted_window_dims", inserted) +
                      Field("scatter_dims_to_operand_dims", to_operand) + "index_vector_dim = " +
                      std::to_string(a[1]) + ">, indices_are_sorted = false, unique_indices = false";
  const auto kind = static_cast<ir::ScatterKind>(a[0]);
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

// attrs.ints: dimension, descending. The comparator looks at operand 0 only; floats
// order NaN as the largest value.
std::vector<Ssa> LowerSort(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const auto& a = node.attrs().ints;
  const bool descending = a[1] != 0;
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
  std::string attrs = "dimension = " + std::to_string(a[0]) + " : i64, is_stable = true";
  return ctx.EmitWithRegion("stablehlo.sort", operands, node.shapes(), s, attrs);
}
LoweringRule sort_rule("stablehlo.sort", LowerSort);

}  // namespace
}  // namespace torch_xla::lowering
