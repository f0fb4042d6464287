#pragma once
// A host kernel that hands its operand on as its result: the graph calls it with the
// result aliasing the operand's buffer, so it copies nothing. XLA cannot see through a
// custom call, so the operand is computed once, in full, into a buffer, instead of being
// fused into (and recomputed by) each of its consumers; and it costs neither a pass
// over the data nor a kernel launch of its own beyond the call.

namespace torch_xla::host {

// The custom-call target the kernel is registered under.
inline constexpr char kPassThroughTarget[] = "torch_xla_pass_through";

// Registers the kernel with the current client's plugin the first time; returns whether
// graphs can call it (false for a plugin without host kernels, e.g. GPU plugins, where
// the kernel is not registered for their platform).
bool PassThroughKernelAvailable();

}  // namespace torch_xla::host
