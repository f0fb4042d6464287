#include "distributed/process_store.h"

#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "exec/replication.h"
#include "runtime/client.h"

namespace torch_xla {
namespace {

class C10dKeyValueStore : public runtime::KeyValueStore {
 public:
  explicit C10dKeyValueStore(c10::intrusive_ptr<c10d::Store> store) : store_(std::move(store)) {}

  std::string Get(const std::string& key, std::chrono::milliseconds timeout) override {
    try {
      store_->wait({key}, timeout);
    } catch (const c10::DistStoreError& e) {
      throw Timeout(e.what_without_backtrace());
    }
    return AsString(store_->get(key));
  }

  std::optional<std::string> TryGet(const std::string& key) override {
    if (!store_->check({key})) return std::nullopt;
    return AsString(store_->get(key));
  }

  void Put(const std::string& key, const std::string& value) override {
    store_->set(key, std::vector<uint8_t>(value.begin(), value.end()));
  }

 private:
  static std::string AsString(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

  c10::intrusive_ptr<c10d::Store> store_;
};

}  // namespace

std::shared_ptr<runtime::KeyValueStore> ConnectProcessStore(const std::string& host, int port,
                                                           const std::string& prefix,
                                                           std::chrono::milliseconds timeout) {
  TORCH_CHECK(port > 0 && port < 65536, "the process store's port must lie in 1..65535, got ", port);
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.isServer = false;
  options.waitWorkers = false;
  options.timeout = timeout;
  auto tcp = c10::make_intrusive<c10d::TCPStore>(host, options);
  return std::make_shared<C10dKeyValueStore>(c10::make_intrusive<c10d::PrefixStore>(prefix, tcp));
}

void ConfigureProcessRuntime(int node_id, int num_nodes, const std::vector<int64_t>& visible_devices,
                             const std::string& host, int port) {
  TORCH_CHECK(num_nodes >= 1 && node_id >= 0 && node_id < num_nodes, "process ", node_id, " of ", num_nodes,
              ": the index must lie in [0, count)");
  runtime::ClientOptions options;
  options.node_id = node_id;
  options.num_nodes = num_nodes;
  options.visible_devices = visible_devices;
  options.kv_store = ConnectProcessStore(host, port, "torch_xla/pjrt", exec::ReplicaTimeout());
  try {
    runtime::Client::Configure(options);
  } catch (const runtime::RuntimeError& e) {
    TORCH_CHECK(false, e.what());
  }
}

}  // namespace torch_xla
