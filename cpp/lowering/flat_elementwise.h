// Element-wise operations computed on the one-dimensional device form of their shape.
//
// A parameter whose buffer is one-dimensional on the device (runtime/device_dims.h: a
// convolution weight, its momentum) arrives in a graph as a reshape of that form. XLA
// moves reshapes past element-wise operations whose operands are all reshapes, so an
// update computed in the tensor's shape from such parameters ends up in that shape, in
// scalar loops over the short last dimension. Computed instead on the one-dimensional
// values, with other operands reshaped to that form (a convolution's gradient: free),
// the update's loop is one long vectorized loop, and its result is already in the
// device form of the buffer it is written to.
#pragma once

#include <optional>
#include <vector>

#include "lowering/lowering_context.h"

namespace torch_xla::lowering {

// Emits `node` on the one-dimensional forms of its operands and returns its value in
// its own shape (a reshape of the one-dimensional result, which the context records),
// when `node` is an element-wise operation whose shape has a one-dimensional device
// form, whose operands all have its dimensions, at least one of which was given or
// computed in that form, and none of which is broadcast from a non-scalar (its index
// would have to be recovered from the flat one). Nothing otherwise.
std::optional<Ssa> LowerFlatElementwise(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands);

}  // namespace torch_xla::lowering
