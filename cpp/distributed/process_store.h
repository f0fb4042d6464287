#pragma once
// The store of a run of several processes (the launcher's: torch's c10d::TCPStore that
// torchrun serves at MASTER_ADDR:MASTER_PORT) as the runtime's key-value store, for the
// plugins whose runtime spans processes (runtime/key_value_store.h).
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/key_value_store.h"

namespace torch_xla {

// A client of the TCPStore at host:port whose keys all lie under `prefix` (so that the
// plugin's keys meet no one else's). Throws c10::Error when the store cannot be reached
// within `timeout`.
std::shared_ptr<runtime::KeyValueStore> ConnectProcessStore(const std::string& host, int port,
                                                           const std::string& prefix,
                                                           std::chrono::milliseconds timeout);

// Configures the runtime client, before it is created, for process `node_id` of
// `num_nodes` using `visible_devices` (empty: all), its plugin meeting the others in the
// store at host:port. Throws c10::Error once the client exists.
void ConfigureProcessRuntime(int node_id, int num_nodes, const std::vector<int64_t>& visible_devices,
                             const std::string& host, int port);

}  // namespace torch_xla
