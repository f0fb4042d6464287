#pragma once
// Internal: waiting on PJRT events, which the caller always owns and must destroy.
#include <functional>
#include <optional>

#include "pjrt_c_api.h"

namespace torch_xla::runtime::internal {

// Destroys `event`; nullptr is ignored.
void DestroyEvent(const PJRT_Api* api, PJRT_Event* event);

// Blocks until `event` is ready, destroys it, and throws RuntimeError if it completed with
// an error (e.g. a failed execution or transfer). nullptr is ignored.
void AwaitAndDestroyEvent(const PJRT_Api* api, PJRT_Event* event);

// Whether `event` is ready, without waiting; nullopt (the error released) where PJRT
// cannot say.
std::optional<bool> EventIsReady(const PJRT_Api* api, PJRT_Event* event);

// Calls `done` once `event` is ready (on a thread of the plugin, or at once when it is
// ready already) with whether it completed without error; the error is released. The
// event may be destroyed before then. False (and `done` never called) where PJRT refuses.
bool OnEventReady(const PJRT_Api* api, PJRT_Event* event, std::function<void(bool ok)> done);

}  // namespace torch_xla::runtime::internal
