#include "ir/debug_location.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace torch_xla::ir {
namespace {

std::atomic<CallerFn> g_caller{nullptr};
std::atomic<FramesFn> g_frames{nullptr};

bool EnvIsOne(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace

void SetCallerProviders(CallerFn caller, FramesFn frames) {
  g_caller.store(caller);
  g_frames.store(frames);
}

std::string CurrentCaller() {
  CallerFn fn = g_caller.load();
  return fn != nullptr ? fn() : "";
}

std::vector<Frame> CurrentFrames() {
  FramesFn fn = g_frames.load();
  return fn != nullptr ? fn() : std::vector<Frame>();
}

std::string CurrentStack() {
  std::string out;
  for (const Frame& f : CurrentFrames())
    out = "  " + f.file + ":" + std::to_string(f.line) + " (" + f.function + ")\n" + out;
  return out;
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
