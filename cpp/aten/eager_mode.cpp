#include "aten/eager_mode.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <atomic>
#include <exception>

#include "exec/graph_executor.h"
#include "exec/replication.h"
#include "tensor/xla_tensor.h"

namespace torch_xla {
namespace {

std::atomic<bool> eager_mode{false};
thread_local int scope_depth = 0;

// The devices an eager op's results are on. A replica thread syncs its own device only:
// the other replicas' threads are tracing their own ops.
std::vector<int> DevicesToSync() {
  if (exec::ReplicationRunning())
    return {static_cast<int>(c10::impl::getDeviceGuardImpl(c10::DeviceType::XLA)->getDevice().index())};
  return DevicesWithPendingTensors();
}

}  // namespace

void SetEagerMode(bool enabled) { eager_mode.store(enabled, std::memory_order_relaxed); }
bool EagerMode() { return eager_mode.load(std::memory_order_relaxed); }

EagerOpScope::EagerOpScope()
    : outermost_(scope_depth++ == 0), exceptions_(outermost_ && EagerMode() ? std::uncaught_exceptions() : 0) {}

EagerOpScope::~EagerOpScope() noexcept(false) {
  --scope_depth;
  // (Eager mode turned on inside a kernel takes effect at the next op.)
  if (!outermost_ || !EagerMode() || std::uncaught_exceptions() != exceptions_) return;
  // The sync itself may call kernels (none today); they must not sync again.
  ++scope_depth;
  try {
    SyncIfEager();
  } catch (...) {
    --scope_depth;
    throw;
  }
  --scope_depth;
}

void SyncIfEager() {
  if (!EagerMode()) return;
  std::vector<int> devices = DevicesToSync();
  if (!devices.empty()) exec::SyncAsEagerOp(devices);
}

}  // namespace torch_xla
