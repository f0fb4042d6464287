#pragma once
// The system's memory page size, asked of the kernel once.
#include <unistd.h>

#include <cstddef>

namespace torch_xla::runtime {

inline std::size_t PageSize() {
  static const std::size_t page_size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page_size;
}

}  // namespace torch_xla::runtime
