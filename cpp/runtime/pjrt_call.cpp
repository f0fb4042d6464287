#include "runtime/pjrt_call.h"

#include "runtime/client.h"

namespace torch_xla::runtime::internal {
namespace {

// An execution whose inputs came from a failed one fails with the same error behind one
// more "Error dispatching computation: " (hundreds deep after a lost peer process): each
// leading prefix that repeats is kept once.
std::string CollapseRepeatedPrefixes(std::string message) {
  for (std::size_t start = 0;;) {
    std::size_t colon = message.find(": ", start);
    if (colon == std::string::npos) return message;
    std::string prefix = message.substr(start, colon + 2 - start);
    std::size_t next = colon + 2;
    while (message.compare(next, prefix.size(), prefix) == 0) next += prefix.size();
    message.erase(colon + 2, next - (colon + 2));
    start = colon + 2;
  }
}

}  // namespace

std::string ConsumeError(const PJRT_Api* api, PJRT_Error* error) {
  auto message_args = PJRT_ARGS(PJRT_Error_Message_Args);
  message_args.error = error;
  api->PJRT_Error_Message(&message_args);
  std::string message = CollapseRepeatedPrefixes(std::string(message_args.message, message_args.message_size));
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
