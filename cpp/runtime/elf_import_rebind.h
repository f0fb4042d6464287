#pragma once
// Rebinding the functions a loaded shared library imports from other libraries.
//
// A library calls an imported function (malloc, free, ...) through a slot of its global
// offset table that the dynamic loader filled in. Writing another address into that slot
// redirects the calls of that one library and of no other. The runtime uses it to give
// the CPU plugin an allocator for its large buffers (see host_block_cache.h): the PJRT C
// API has no allocator hook.
#include <span>

namespace torch_xla::runtime::internal {

struct ImportRebinding {
  const char* symbol;  // the imported function, e.g. "free"
  void* replacement;   // the function the library calls instead
};

// Rewrites, in the library that `dl_handle` (from dlopen) names, every GOT slot bound to
// one of the symbols. Only for a library loaded with RTLD_NOW (its slots are resolved).
// Returns how many slots now hold a replacement (rebound by this call or an earlier one;
// 0 where the library imports none of them, or on a platform whose relocation types
// this does not know). Not thread-safe: call it
// before the library's code runs on other threads.
int RebindImports(void* dl_handle, std::span<const ImportRebinding> rebindings);

}  // namespace torch_xla::runtime::internal
