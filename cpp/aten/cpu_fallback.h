#pragma once
// The boxed CPU fallback (cpu_fallback.cpp), for kernels that hand an op back to it when
// they cannot run it on the device themselves.
#include <ATen/core/dispatch/Dispatcher.h>

namespace torch_xla {

// Copies the XLA operands to the CPU, runs the CPU kernel, writes mutated arguments back
// and moves new outputs to the device; bumps the counter "aten::<op>".
void XlaCpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace torch_xla
