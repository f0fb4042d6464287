#include "runtime/plugin_loader.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

#include "pjrt_c_api.h"
#include "runtime/client.h"
#include "runtime/pjrt_call.h"

namespace torch_xla::runtime {
namespace {

std::string DlError() {
  const char* message = dlerror();
  return message != nullptr ? message : "unknown dynamic loader error";
}

}  // namespace

const PJRT_Api* LoadPjrtPlugin(const std::string& path) {
  // Serialises dlerror() (process-global state) and keeps initialisation once per plugin.
  // Keyed by handle, not path, because two paths (symlinks) may name the same library.
  static std::mutex mutex;
  static std::map<void*, const PJRT_Api*> loaded;
  std::lock_guard<std::mutex> lock(mutex);

  const std::string where = "PJRT plugin '" + path + "'";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw RuntimeError("cannot load " + where + ": " + DlError());
  if (auto it = loaded.find(handle); it != loaded.end()) return it->second;

  using GetPjrtApiFn = const PJRT_Api* (*)();
  // A library rejected before initialisation ran nothing of its own, so it can be unloaded.
  auto reject = [&](const std::string& message) {
    dlclose(handle);
    return RuntimeError(message);
  };
  auto get_api = reinterpret_cast<GetPjrtApiFn>(dlsym(handle, "GetPjrtApi"));
  if (get_api == nullptr) throw reject(where + " has no GetPjrtApi symbol: " + DlError());
  const PJRT_Api* api = get_api();
  if (api == nullptr) throw reject(where + ": GetPjrtApi returned null");
  const PJRT_Api_Version& version = api->pjrt_api_version;
  if (version.major_version != PJRT_API_MAJOR) {
    throw reject(where + " implements PJRT C API " + std::to_string(version.major_version) + "." +
                 std::to_string(version.minor_version) + ", but this build needs major " +
                 std::to_string(PJRT_API_MAJOR));
  }
  auto init_args = PJRT_ARGS(PJRT_Plugin_Initialize_Args);
  if (PJRT_Error* error = api->PJRT_Plugin_Initialize(&init_args)) {
    throw RuntimeError(where + ": PJRT_Plugin_Initialize: " + internal::ConsumeError(api, error));
  }
  loaded.emplace(handle, api);
  return api;
}

}  // namespace torch_xla::runtime
