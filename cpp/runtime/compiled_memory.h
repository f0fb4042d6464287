#pragma once
// What a compiled program needs of a device's memory, as the plugin's compiler reports it
// (PJRT_Executable_GetCompiledMemoryStats, an optional entry point of the C API).
#include <cstdint>
#include <optional>

#include "pjrt_c_api.h"

namespace torch_xla::runtime {

class Executable;

struct CompiledMemoryStats {
  int64_t argument_bytes = 0;
  int64_t output_bytes = 0;
  int64_t alias_bytes = 0;  // of the arguments, given to outputs to write in place
  int64_t temp_bytes = 0;   // temporaries of one execution
  int64_t generated_code_bytes = 0;
};

// The stats of `executable`; nullopt where the plugin lacks the entry point or fails it.
std::optional<CompiledMemoryStats> ReadCompiledMemoryStats(const PJRT_Api* api, PJRT_Executable* executable);
// The same for a loaded executable of the client.
std::optional<CompiledMemoryStats> ReadCompiledMemoryStats(const Executable& executable);

}  // namespace torch_xla::runtime
