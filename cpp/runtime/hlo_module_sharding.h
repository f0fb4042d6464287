// Internal: the output shardings of a compiled SPMD program, read from its optimized HLO
// module (a serialized xla.HloModuleProto, PJRT_Executable_OptimizedProgram), since the
// PJRT C API has no call that returns them. Written against the proto's wire format for
// the few fields it needs, to avoid a protobuf dependency.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/sharding.h"

namespace torch_xla::runtime::internal {

// The sharding of each of the module's `num_outputs` outputs (HloModuleProto field 12,
// spmd_output_sharding: a tuple sharding, or one sharding for a single output). Nullopt
// when the module does not record it or uses a layout Sharding cannot describe (a
// maximal or manual sharding).
// `format` is the optimized program's: "hlo" (the module itself) or "hlo_with_config"
// (HloModuleProtoWithConfig, whose field 1 is the module).
std::optional<std::vector<Sharding>> OutputShardingsOfHloModule(const std::string& program, const std::string& format,
                                                                std::size_t num_outputs);

}  // namespace torch_xla::runtime::internal
