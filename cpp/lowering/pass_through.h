#pragma once
// Calls of the pass-through host kernel (host/pass_through_kernel.h): a value that
// XLA computes once into a buffer, at no cost at run time.
#include "lowering/lowering_context.h"

namespace torch_xla::lowering {

// `v` through the kernel, its result aliasing v. Only for graphs of the CPU device, where
// host::PassThroughKernelAvailable() said yes.
Ssa EmitPassThrough(LoweringContext& ctx, Ssa v);

}  // namespace torch_xla::lowering
