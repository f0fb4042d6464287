#include "runtime/compiled_memory.h"

#include <cstddef>

#include "runtime/client.h"
#include "runtime/pjrt_call.h"

namespace torch_xla::runtime {

std::optional<CompiledMemoryStats> ReadCompiledMemoryStats(const PJRT_Api* api, PJRT_Executable* executable) {
  if (offsetof(PJRT_Api, PJRT_Executable_GetCompiledMemoryStats) >= api->struct_size ||
      api->PJRT_Executable_GetCompiledMemoryStats == nullptr) {
    return std::nullopt;
  }
  auto args = PJRT_ARGS(PJRT_Executable_GetCompiledMemoryStats_Args);
  args.executable = executable;
  if (PJRT_Error* error = api->PJRT_Executable_GetCompiledMemoryStats(&args)) {
    internal::ConsumeError(api, error);
    return std::nullopt;
  }
  return CompiledMemoryStats{args.argument_size_in_bytes, args.output_size_in_bytes, args.alias_size_in_bytes,
                             args.temp_size_in_bytes, args.generated_code_size_in_bytes};
}

std::optional<CompiledMemoryStats> ReadCompiledMemoryStats(const Executable& executable) {
  const PJRT_Api* api = Client::Get().api();
  auto get_args = PJRT_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get_args.loaded_executable = executable.pjrt();
  if (PJRT_Error* error = api->PJRT_LoadedExecutable_GetExecutable(&get_args)) {
    internal::ConsumeError(api, error);
    return std::nullopt;
  }
  std::optional<CompiledMemoryStats> stats = ReadCompiledMemoryStats(api, get_args.executable);
  auto destroy_args = PJRT_ARGS(PJRT_Executable_Destroy_Args);
  destroy_args.executable = get_args.executable;
  if (PJRT_Error* error = api->PJRT_Executable_Destroy(&destroy_args)) internal::ConsumeError(api, error);
  return stats;
}

}  // namespace torch_xla::runtime
