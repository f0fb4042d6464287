#include "runtime/pjrt_event.h"

#include <memory>
#include <utility>

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

namespace {

struct ReadyCallback {
  const PJRT_Api* api;
  std::function<void(bool)> done;
};

void RunReadyCallback(PJRT_Error* error, void* user_arg) {
  std::unique_ptr<ReadyCallback> callback(static_cast<ReadyCallback*>(user_arg));
  if (error != nullptr) ConsumeError(callback->api, error);
  callback->done(error == nullptr);
}

}  // namespace

bool OnEventReady(const PJRT_Api* api, PJRT_Event* event, std::function<void(bool ok)> done) {
  if (event == nullptr) return false;
  auto callback = std::make_unique<ReadyCallback>(ReadyCallback{api, std::move(done)});
  auto args = PJRT_ARGS(PJRT_Event_OnReady_Args);
  args.event = event;
  args.callback = RunReadyCallback;
  args.user_arg = callback.get();
  if (PJRT_Error* error = api->PJRT_Event_OnReady(&args)) {
    ConsumeError(api, error);
    return false;
  }
  callback.release();  // RunReadyCallback owns it now
  return true;
}

}  // namespace torch_xla::runtime::internal
