#pragma once
// Control of evaluation: the optimization barrier, and loops built from functions traced
// on stand-ins for their carried values (torch_xla.experimental.while_loop, fori_loop and
// scan trace Python functions this way; ir/region.h has the loop itself).
#include <vector>

#include "ir/region.h"

namespace torch_xla::ir {

// stablehlo.optimization_barrier: the values unchanged, but XLA may not move computation
// across it, nor merge what is computed from its results with what was computed from its
// operands (activation checkpointing relies on that to recompute rather than keep).
std::vector<Value> OptimizationBarrier(const std::vector<Value>& values);

// A stand-in for a carried value of a loop being traced: a region parameter of `shape`
// that LoopFromTraces() replaces by the loop's block argument.
NodePtr LoopPlaceholder(const Shape& shape);

// A function of a loop as traced: the stand-ins it ran on (one per carried value) and
// the values it returned.
struct TracedFunction {
  std::vector<NodePtr> placeholders;
  std::vector<Value> results;
};

// The loop `carried = init; while (condition(carried)) carried = body(carried)` from its
// traced condition (one pred[] result) and body (one result per carried value, of its
// shape). The traces may read values from outside the loop (weights, constants, device
// data, values of an enclosing loop): each such value, where the trace first reads it,
// becomes one more carried value, passed through unchanged, so that the loop's
// sub-graphs are closed as ir/region.h requires and the value is computed once, outside.
// Returns the final values of `init`'s carried values. Throws std::invalid_argument
// naming `op_name` when the traces do not match `init`.
std::vector<Value> LoopFromTraces(const std::vector<Value>& init, const TracedFunction& condition,
                                  const TracedFunction& body, const char* op_name);

}  // namespace torch_xla::ir
