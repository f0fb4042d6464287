#pragma once
// Internal: waiting on PJRT events, which the caller always owns and must destroy.
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

}  // namespace torch_xla::runtime::internal
