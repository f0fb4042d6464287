#include "runtime/plugin_discovery.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>
#include <vector>

namespace torch_xla::runtime::internal {
namespace {

constexpr std::array<std::string_view, 3> kKnownKinds = {"CPU", "CUDA", "TPU"};

std::string ToUpper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

std::string GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::mutex& RegistryMutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, std::string>& Registry() {
  static std::map<std::string, std::string> paths;
  return paths;
}

std::string RegisteredPath(const std::string& kind) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = Registry().find(kind);
  return it != Registry().end() ? it->second : "";
}

}  // namespace

void RegisterDefaultPluginPath(const std::string& device_kind, const std::string& path) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  Registry()[ToUpper(device_kind)] = path;
}

PluginChoice ResolvePlugin(const ClientOptions& options) {
  PluginChoice choice;
  std::string kind = !options.device_kind.empty() ? options.device_kind : GetEnv("PJRT_DEVICE");
  choice.device_kind = kind.empty() ? "CPU" : ToUpper(kind);
  const std::string lowering = GetEnv("XLA_LOWERING_DEVICE_KIND");
  choice.lowering_kind = lowering.empty() ? choice.device_kind : ToUpper(lowering);

  // Candidates in priority order; the first non-empty one wins.
  struct Candidate {
    std::string source;
    std::string path;
  };
  std::vector<Candidate> candidates = {
      {"ClientOptions.plugin_path", options.plugin_path},
      {"$PJRT_PLUGIN_PATH", GetEnv("PJRT_PLUGIN_PATH")},
      {"default registered for " + choice.device_kind, RegisteredPath(choice.device_kind)},
  };
#ifdef TORCH_XLA_DEFAULT_CPU_PLUGIN
  if (choice.device_kind == "CPU") {
    candidates.push_back({"build-time CPU plugin default", TORCH_XLA_DEFAULT_CPU_PLUGIN});
  }
#endif

  for (const Candidate& candidate : candidates) {
    if (!choice.searched.empty()) choice.searched += ", ";
    choice.searched += candidate.source + " = " +
                       (candidate.path.empty() ? "(unset)" : "'" + candidate.path + "'");
    if (choice.path.empty() && !candidate.path.empty()) {
      choice.path = candidate.path;
      choice.source = candidate.source;
    }
  }

  const bool explicit_path = !options.plugin_path.empty() || !GetEnv("PJRT_PLUGIN_PATH").empty();
  const bool known = std::find(kKnownKinds.begin(), kKnownKinds.end(), choice.device_kind) !=
                     kKnownKinds.end();
  if (!known && !explicit_path) {
    std::string known_list;
    for (std::string_view kind_name : kKnownKinds) {
      if (!known_list.empty()) known_list += ", ";
      known_list += kind_name;
    }
    const char* from =
        options.device_kind.empty() ? "$PJRT_DEVICE" : "ClientOptions.device_kind";
    throw RuntimeError("unknown PJRT device kind '" + choice.device_kind + "' (from " + from +
                       "); known kinds: " + known_list +
                       "; or give a plugin path with ClientOptions.plugin_path or "
                       "$PJRT_PLUGIN_PATH");
  }
  if (choice.path.empty()) {
    throw RuntimeError("no PJRT plugin found for device kind " + choice.device_kind +
                       "; looked at: " + choice.searched);
  }
  return choice;
}

}  // namespace torch_xla::runtime::internal
