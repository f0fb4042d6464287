#include "runtime/pjrt_call.h"

#include "runtime/client.h"

namespace torch_xla::runtime::internal {

std::string ConsumeError(const PJRT_Api* api, PJRT_Error* error) {
  auto message_args = PJRT_ARGS(PJRT_Error_Message_Args);
  message_args.error = error;
  api->PJRT_Error_Message(&message_args);
  std::string message(message_args.message, message_args.message_size);
  auto destroy_args = PJRT_ARGS(PJRT_Error_Destroy_Args);
  destroy_args.error = error;
  api->PJRT_Error_Destroy(&destroy_args);
  return message;
}

void CheckPjrt(const PJRT_Api* api, PJRT_Error* error, std::string_view function) {
  if (error == nullptr) return;
  std::string message = ConsumeError(api, error);
  throw RuntimeError(std::string(function) + ": " + message);
}

}  // namespace torch_xla::runtime::internal
