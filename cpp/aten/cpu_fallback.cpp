// Every op without a lowering still works: the boxed fallback copies the XLA operands
// to the CPU, runs the CPU kernel, and copies results (and mutated inputs) back. Each
// use bumps the counter "aten::<op>", which tests check to prove an op was lowered.
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <mutex>
#include <string>
#include <unordered_map>

#include "runtime/metrics.h"

namespace torch_xla {
namespace {

metrics::Counter* FallbackCounter(const c10::OperatorName& name) {
  static std::mutex mu;
  static std::unordered_map<std::string, metrics::Counter*> counters;
  std::string key = name.name;  // "aten::nonzero" (overload names are not part of the counter)
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = counters[key];
  if (!slot) slot = metrics::GetCounter(key);
  return slot;
}

void XlaCpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  FallbackCounter(op.operator_name())->Add();
  at::native::cpu_fallback(op, stack);
}

TORCH_LIBRARY_IMPL(_, XLA, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&XlaCpuFallback>()); }

}  // namespace
}  // namespace torch_xla
