#pragma once
// Internal: the host's memory as a MemoryInfo, the CPU plugin's stand-in for device memory
// statistics it does not report.
#include <optional>

#include "runtime/client.h"

namespace torch_xla::runtime::internal {

// From /proc/meminfo: limit = MemTotal, in use = MemTotal - MemAvailable. nullopt when the
// file is missing or lacks those fields.
std::optional<MemoryInfo> ReadHostMemoryInfo();

}  // namespace torch_xla::runtime::internal
