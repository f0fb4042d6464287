#include "pjrt_c_api.h"
#include "runtime/client.h"
#include "runtime/live_api.h"
#include "runtime/pjrt_call.h"

namespace torch_xla::runtime {

Executable::Executable(PJRT_LoadedExecutable* exe, int num_replicas, std::size_t num_outputs, int64_t memory_needed)
    : exe_(exe), num_replicas_(num_replicas), num_outputs_(num_outputs), memory_needed_(memory_needed) {}

Executable::~Executable() {
  const PJRT_Api* api = internal::LiveApi();
  if (api == nullptr || exe_ == nullptr) return;
  auto args = PJRT_ARGS(PJRT_LoadedExecutable_Destroy_Args);
  args.executable = exe_;
  // A destructor cannot throw; a failed destroy only releases its error.
  if (PJRT_Error* error = api->PJRT_LoadedExecutable_Destroy(&args)) {
    internal::ConsumeError(api, error);
  }
}

}  // namespace torch_xla::runtime
