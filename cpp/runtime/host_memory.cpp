#include "runtime/host_memory.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace torch_xla::runtime::internal {

std::optional<MemoryInfo> ReadHostMemoryInfo() {
  std::ifstream meminfo("/proc/meminfo");
  int64_t total_kb = -1;
  int64_t available_kb = -1;
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t value_kb = 0;
    if (!(fields >> key >> value_kb)) continue;
    if (key == "MemTotal:") total_kb = value_kb;
    if (key == "MemAvailable:") available_kb = value_kb;
  }
  if (total_kb <= 0 || available_kb < 0) return std::nullopt;
  MemoryInfo info;
  info.bytes_limit = total_kb * 1024;
  info.bytes_in_use = std::max<int64_t>(0, total_kb - available_kb) * 1024;
  return info;
}

}  // namespace torch_xla::runtime::internal
