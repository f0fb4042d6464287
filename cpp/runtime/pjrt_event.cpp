#include "runtime/pjrt_event.h"

#include "runtime/pjrt_call.h"

namespace torch_xla::runtime::internal {

void DestroyEvent(const PJRT_Api* api, PJRT_Event* event) {
  if (event == nullptr) return;
  auto args = PJRT_ARGS(PJRT_Event_Destroy_Args);
  args.event = event;
  // Destroy cannot meaningfully fail; an error here is only released.
  if (PJRT_Error* error = api->PJRT_Event_Destroy(&args)) ConsumeError(api, error);
}

void AwaitAndDestroyEvent(const PJRT_Api* api, PJRT_Event* event) {
  if (event == nullptr) return;
  auto args = PJRT_ARGS(PJRT_Event_Await_Args);
  args.event = event;
  PJRT_Error* error = api->PJRT_Event_Await(&args);
  DestroyEvent(api, event);
  CheckPjrt(api, error, "PJRT_Event_Await");
}

std::optional<bool> EventIsReady(const PJRT_Api* api, PJRT_Event* event) {
  auto args = PJRT_ARGS(PJRT_Event_IsReady_Args);
  args.event = event;
  if (PJRT_Error* error = api->PJRT_Event_IsReady(&args)) {
    ConsumeError(api, error);
    return std::nullopt;
  }
  return args.is_ready;
}

}  // namespace torch_xla::runtime::internal
