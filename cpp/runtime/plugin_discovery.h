#pragma once
// Deciding which device kind the client is for and which plugin library serves it.
#include <string>

#include "runtime/client.h"

namespace torch_xla::runtime::internal {

struct PluginChoice {
  std::string device_kind;  // upper-case: "CPU", "CUDA", "TPU" or a custom kind
  std::string lowering_kind;  // $XLA_LOWERING_DEVICE_KIND upper-cased, else device_kind
  std::string path;         // the plugin library to load
  std::string source;       // where `path` came from, for error messages
  std::string searched;     // every place looked at, for error messages
};

// Kind: options.device_kind > $PJRT_DEVICE > "CPU", upper-cased. Path: options.plugin_path >
// $PJRT_PLUGIN_PATH > the path registered for the kind > (CPU) the configure-time default.
// Throws RuntimeError for an unknown kind without an explicit path, or when no path is
// found; the message names the kind and everything that was looked at.
PluginChoice ResolvePlugin(const ClientOptions& options);

// Backs Client::SetDefaultPluginPath. Thread-safe.
void RegisterDefaultPluginPath(const std::string& device_kind, const std::string& path);

}  // namespace torch_xla::runtime::internal
