// Lowering rule of reductions (xla::reduce), with the row-sum and column-sum forms of
// float sums on the CPU device.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "ir/builder.h"
#include "lowering/lowering_context.h"
#include "lowering/pass_through.h"
#include "runtime/client.h"
#include "host/column_sum_kernel.h"
#include "host/row_sum_kernel.h"
#include "host/pass_through_kernel.h"

namespace torch_xla::lowering {
namespace {

using ir::ReduceKind;

double InitValue(ReduceKind kind, ElementType type) {
  bool fp = runtime::IsFloating(type);
  switch (kind) {
    case ReduceKind::kSum: return 0;
    case ReduceKind::kProd: return 1;
    case ReduceKind::kAnd: return 1;
    case ReduceKind::kOr: return 0;
    case ReduceKind::kMax:
      if (type == ElementType::kPred) return 0;
      if (fp) return -std::numeric_limits<double>::infinity();
      if (runtime::IsUnsigned(type)) return 0;
      return -std::ldexp(1.0, static_cast<int>(runtime::ElementSize(type) * 8 - 1));
    case ReduceKind::kMin:
      if (type == ElementType::kPred) return 1;
      if (fp) return std::numeric_limits<double>::infinity();
      if (runtime::IsUnsigned(type)) return std::ldexp(1.0, static_cast<int>(runtime::ElementSize(type) * 8)) - 1;
      return std::ldexp(1.0, static_cast<int>(runtime::ElementSize(type) * 8 - 1)) - 1;
  }
  return 0;
}

// The init value as a constant. Integer max/min bounds and the all-ones of a bitwise and
// are written exactly: a double cannot hold INT64_MAX, and converting 2^63 back to int64
// overflows.
Ssa InitConstant(LoweringContext& ctx, ReduceKind kind, ElementType type) {
  Shape scalar(type, {});
  bool integral = !runtime::IsFloating(type) && !runtime::IsComplex(type) && type != ElementType::kPred;
  if (integral && (kind == ReduceKind::kMax || kind == ReduceKind::kMin || kind == ReduceKind::kAnd)) {
    int bits = static_cast<int>(runtime::ElementSize(type) * 8);
    std::string literal;
    if (kind == ReduceKind::kAnd) {  // every bit set
      literal = runtime::IsUnsigned(type) ? std::to_string(bits == 64 ? ~0ull : (1ull << bits) - 1) : "-1";
    } else if (runtime::IsUnsigned(type)) {
      literal = kind == ReduceKind::kMax ? "0" : std::to_string(bits == 64 ? ~0ull : (1ull << bits) - 1);
    } else if (kind == ReduceKind::kMax) {
      literal = std::to_string(bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)));
    } else {
      literal = std::to_string(bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1);
    }
    return ctx.Emit("stablehlo.constant", {}, scalar, "value = dense<" + literal + "> : " + scalar.ToMlir());
  }
  return ctx.Constant(scalar, InitValue(kind, type));
}

const char* CombinerOp(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum: return "stablehlo.add";
    case ReduceKind::kProd: return "stablehlo.multiply";
    case ReduceKind::kMax: return "stablehlo.maximum";
    case ReduceKind::kMin: return "stablehlo.minimum";
    case ReduceKind::kAnd: return "stablehlo.and";
    default: return "stablehlo.or";
  }
}

Ssa EmitReduce(LoweringContext& ctx, ReduceKind kind, Ssa input, const std::vector<int64_t>& dims,
               const Shape& result) {
  Ssa init = InitConstant(ctx, kind, result.type);
  std::string region = ctx.BinaryRegion(CombinerOp(kind), result.type);
  return ctx.EmitWithRegion("stablehlo.reduce", {input, init}, {result}, region, "dimensions = " + I64Array(dims))[0];
}

// XLA's CPU backend computes each output of a reduction as one serial chain of adds, at
// the latency of an add (about 0.45 ns an element here). A float sum whose trailing
// dimensions are all reduced, over at least kMinRowSumLength elements per row, is
// therefore computed row by row, the remaining reduced dimensions by a reduction of the
// row sums: by the row-sum host kernel (host/row_sum_kernel.h), or, where the plugin
// takes no host kernels, as the product of the rows with a vector of ones (x * 1 is x,
// so the result differs only in the order of the additions). The thresholds below were
// measured with the product; the kernel then took the encoder's 17 row sums of [2048,
// 256..1000] from 10 core-ms a step (Eigen packs the whole matrix first) to 2.8.
// Measured (8 sums, ms, reduce vs product): [128,10,12,12] over (0,2,3) 0.67 vs 0.21,
// [128,10,24,24] 1.65 vs 0.49, [2048,256] over 1 0.83 vs 0.31, [2048,1024] 1.79 vs
// 1.38; rows of 64 or fewer were as fast or faster reduced ([128,20,8,8] 0.31 vs 0.48).
// Few long rows are not: the product runs a row on one thread, adding up its elements
// in a few running sums, where XLA splits a long reduction into windows of 32 (faster
// on two threads and closer to the exact sum): a sum of all 16M elements took 18.6 ms
// that way (relative error 2.5e-5) against 4.3 ms (8e-7). Rows are therefore at most
// 4096 elements (the innermost reduced dimensions that fit; the others are reduced
// after the product), and there must be at least 16 of them.
// Other devices keep the reduction: their dot may run in lower precision (TF32).
constexpr int64_t kMinRowSumLength = 128;
constexpr int64_t kMaxRowSumLength = 4096;
constexpr int64_t kMinRowSumRows = 16;

std::optional<Ssa> SumByRows(LoweringContext& ctx, Ssa input, const std::vector<int64_t>& dims, const Shape& result) {
  if (result.type != ElementType::kF32 && result.type != ElementType::kF64) return std::nullopt;
  const std::vector<int64_t> in = ctx.TypeOf(input).dims;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t d : dims) reduced[d] = true;
  // Rows: the innermost reduced dimensions, as many as fit in kMaxRowSumLength elements.
  int64_t first_row_dim = rank, row = 1, rows = 1;
  while (first_row_dim > 0 && reduced[first_row_dim - 1] && row * in[first_row_dim - 1] <= kMaxRowSumLength)
    row *= in[--first_row_dim];
  for (int64_t d = 0; d < first_row_dim; ++d) rows *= in[d];
  if (row < kMinRowSumLength || rows < kMinRowSumRows || !runtime::Client::Get().LowersForCpu())
    return std::nullopt;
  Ssa matrix = ctx.Emit("stablehlo.reshape", {input}, Shape(result.type, {rows, row}));
  Ssa row_sums;
  if (host::RowSumKernelAvailable()) {
    row_sums = EmitHostKernelCall(ctx, host::kRowSumTarget, {matrix}, {Shape(result.type, {rows})})[0];
  } else {
    // XLA fuses the computation of a matrix-vector product's matrix into the product,
    // which then runs as plain loops again (one serial chain per row); through the
    // pass-through kernel the matrix is computed into a buffer first and the product is
    // the library's. (A graph argument is in a buffer already; passing it through would
    // copy it.)
    if (!ctx.IsParameter(input) && host::PassThroughKernelAvailable()) matrix = EmitPassThrough(ctx, matrix);
    Ssa ones = ctx.Constant(Shape(result.type, {row}), 1.0);
    row_sums = ctx.Emit("stablehlo.dot_general", {matrix, ones}, Shape(result.type, {rows}),
                        DotDimensions("[]", "[]", "[1]", "[0]"));
  }
  const std::vector<int64_t> leading(in.begin(), in.begin() + first_row_dim);
  Ssa sums = ctx.Emit("stablehlo.reshape", {row_sums}, Shape(result.type, leading));
  std::vector<int64_t> rest;
  for (int64_t d = 0; d < first_row_dim; ++d)
    if (reduced[d]) rest.push_back(d);
  if (rest.empty()) return sums;
  return EmitReduce(ctx, ReduceKind::kSum, sums, rest, result);
}

// A float sum over the leading dimensions (a bias gradient) of at least kMinColumnSumRows
// rows of kMinColumnSumColumns elements: the column-sum host kernel on the CPU device
// (host/column_sum_kernel.h), XLA's reduction elsewhere. Measured ([rows, columns],
// ms, XLA's reduce vs the kernel, within a graph): [2048, 768] 1.80 vs 0.3.
constexpr int64_t kMinColumnSumRows = 64;
constexpr int64_t kMinColumnSumColumns = 32;

std::optional<Ssa> SumOverLeadingDims(LoweringContext& ctx, Ssa input, const std::vector<int64_t>& dims,
                                      const Shape& result) {
  if (result.type != ElementType::kF32 && result.type != ElementType::kF64) return std::nullopt;
  const std::vector<int64_t> in = ctx.TypeOf(input).dims;
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i)) return std::nullopt;
  int64_t rows = 1, columns = 1;
  for (std::size_t d = 0; d < in.size(); ++d) (d < sorted.size() ? rows : columns) *= in[d];
  if (sorted.empty() || sorted.size() == in.size() || rows < kMinColumnSumRows || columns < kMinColumnSumColumns ||
      !host::ColumnSumKernelAvailable())
    return std::nullopt;
  Ssa matrix = ctx.Emit("stablehlo.reshape", {input}, Shape(result.type, {rows, columns}));
  Ssa sums = EmitHostKernelCall(ctx, host::kColumnSumTarget, {matrix}, {Shape(result.type, {columns})})[0];
  return ctx.Emit("stablehlo.reshape", {sums}, result);
}

// xla::reduce: operand 0 the input (attributes: ir::ReduceAttrs). The node's type is the
// accumulation type (the input is converted by the ATen layer).
std::vector<Ssa> LowerReduce(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const auto [kind, dims] = ir::ReduceAttrs::FromAttrs(node.attrs());
  if (kind == ReduceKind::kSum) {
    if (std::optional<Ssa> sums = SumOverLeadingDims(ctx, operands[0], dims, node.shape())) return {*sums};
    if (std::optional<Ssa> sums = SumByRows(ctx, operands[0], dims, node.shape())) return {*sums};
  }
  return {EmitReduce(ctx, kind, operands[0], dims, node.shape())};
}
LoweringRule reduce_rule("xla::reduce", LowerReduce);

}  // namespace
}  // namespace torch_xla::lowering
