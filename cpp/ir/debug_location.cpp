#include "ir/debug_location.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace torch_xla::ir {
namespace {

std::atomic<CallerFn> g_caller{nullptr};
std::atomic<StackFn> g_stack{nullptr};

bool EnvIsOne(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace

void SetCallerProviders(CallerFn caller, StackFn stack) {
  g_caller.store(caller);
  g_stack.store(stack);
}

std::string CurrentCaller() {
  CallerFn fn = g_caller.load();
  return fn != nullptr ? fn() : "";
}

std::string CurrentStack() {
  StackFn fn = g_stack.load();
  return fn != nullptr ? fn() : "";
}

bool IrDebug() {
  static const bool enabled = EnvIsOne("XLA_IR_DEBUG") || EnvIsOne("XLA_HLO_DEBUG");
  return enabled;
}

bool HloDebug() {
  static const bool enabled = EnvIsOne("XLA_HLO_DEBUG");
  return enabled;
}

}  // namespace torch_xla::ir
