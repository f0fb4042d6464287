#pragma once
// Loading a PJRT plugin shared library and obtaining its API table.
#include <string>

struct PJRT_Api;

namespace torch_xla::runtime {

// dlopens `path` (RTLD_NOW | RTLD_LOCAL), checks that its PJRT C API major version matches
// the one compiled against, and initialises it (once per plugin, however often it is
// loaded). Plugins are never unloaded. Throws RuntimeError naming the path and the cause
// (the dlerror() text, a missing GetPjrtApi, a version mismatch or an initialisation error).
// Thread-safe.
const PJRT_Api* LoadPjrtPlugin(const std::string& path);

}  // namespace torch_xla::runtime
