#include "exec/graph_executor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "lowering/lowering_context.h"
#include "runtime/metrics.h"

namespace torch_xla::exec {
namespace {

using ir::hash_t;
using ir::Node;
using ir::Value;

// A graph ready to lower or run: nodes in post-order, parameters in order, roots.
struct PostOrderGraph {
  std::vector<const Node*> nodes;        // every node, operands before users
  std::vector<const Node*> parameters;   // leaves in parameter order (device data deduplicated)
  std::unordered_map<const Node*, int> parameter_of;  // leaf -> parameter index
  std::vector<int> leaf_nodes;           // per parameter: graph nodes holding its buffer
  std::vector<Value> roots;              // distinct root values
  std::vector<int> aliased_output;       // per parameter: root whose result reuses its buffer, or -1
  hash_t hash = 0;                       // structure, shared parameters and output aliasing
};

PostOrderGraph BuildGraph(const std::vector<Value>& roots) {
  // Walk numbers mark visited nodes (Node::MarkVisited); one walk at a time.
  static std::mutex walk_mutex;
  static uint64_t last_walk = 0;
  std::lock_guard<std::mutex> walk_lock(walk_mutex);
  const uint64_t walk = ++last_walk;
  // The size of the last graph: the next one is usually the same step again.
  static std::size_t last_size = 0;
  PostOrderGraph g;
  g.nodes.reserve(last_size);
  std::unordered_map<const runtime::Buffer*, int> buffer_parameter;
  hash_t h = 0x5eed;
  for (const Value& root : roots) h = ir::HashCombine(h, root.hash());
  // Iterative DFS: (node, next operand to visit).
  std::vector<std::pair<const Node*, std::size_t>> stack;
  for (const Value& root : roots) {
    if (!root.node->MarkVisited(walk)) continue;
    stack.emplace_back(root.node.get(), 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->operands().size()) {
        const Node* child = node->operand(next++).node.get();
        if (child->MarkVisited(walk)) stack.emplace_back(child, 0);
        continue;
      }
      const Node* done = node;
      stack.pop_back();
      g.nodes.push_back(done);
      if (done->leaf_kind() == ir::LeafKind::kDeviceData) {
        auto [it, inserted] = buffer_parameter.emplace(done->buffer().get(), static_cast<int>(g.parameters.size()));
        if (inserted) {
          g.parameters.push_back(done);
          g.leaf_nodes.push_back(0);
        }
        ++g.leaf_nodes[it->second];
        g.parameter_of[done] = it->second;
        h = ir::HashCombine(h, static_cast<hash_t>(it->second));
      } else if (done->leaf_kind() == ir::LeafKind::kScalar) {
        g.parameter_of[done] = static_cast<int>(g.parameters.size());
        g.parameters.push_back(done);
        g.leaf_nodes.push_back(1);
        h = ir::HashCombine(h, static_cast<hash_t>(g.parameters.size()) << 1);
      }
    }
  }
  last_size = g.nodes.size();
  g.hash = h;
  g.aliased_output.assign(g.parameters.size(), -1);
  return g;
}

// Chooses the device-data parameters whose buffers the execution may overwrite: those
// referenced by nothing but this graph's own leaf nodes (no tensor holds them, so once
// the synced tensors take their new buffers nobody can read them again). Each is paired
// with a result of the same shape, which XLA then writes in place: a training step
// updates its parameters and optimizer state without allocating new buffers. Only
// valid when the sync takes every pending tensor of the device, so no IR outside this
// graph can still reference the leaves. Returns the donated parameter indices.
std::vector<int64_t> AssignDonations(PostOrderGraph& g) {
  std::vector<int64_t> donated;
  std::vector<bool> taken(g.roots.size(), false);
  for (std::size_t i = 0; i < g.parameters.size(); ++i) {
    const Node* p = g.parameters[i];
    if (p->leaf_kind() != ir::LeafKind::kDeviceData) continue;
    if (p->buffer().use_count() != g.leaf_nodes[i]) continue;
    for (std::size_t r = 0; r < g.roots.size(); ++r) {
      if (taken[r] || !(g.roots[r].shape() == p->shape())) continue;
      taken[r] = true;
      g.aliased_output[i] = static_cast<int>(r);
      donated.push_back(static_cast<int64_t>(i));
      g.hash = ir::HashCombine(g.hash, (static_cast<hash_t>(i) << 32) | r);
      break;
    }
  }
  return donated;
}

std::string Lower(const PostOrderGraph& g) {
  lowering::LoweringContext ctx;
  std::vector<lowering::Ssa> params(g.parameters.size());
  for (std::size_t i = 0; i < g.parameters.size(); ++i)
    params[i] = ctx.AddParameter(g.parameters[i]->shape(), g.aliased_output[i]);
  std::vector<lowering::Ssa> operands;
  for (const Node* node : g.nodes) {
    if (node->leaf_kind() != ir::LeafKind::kNone) {
      ctx.Bind(node, 0, params[g.parameter_of.at(node)]);
      continue;
    }
    lowering::LowerFn fn = lowering::FindLowering(node->op());
    if (!fn) throw std::runtime_error("no lowering rule for IR op " + node->ToString());
    operands.clear();
    for (const Value& v : node->operands()) operands.push_back(ctx.Lookup(v));
    std::vector<lowering::Ssa> outs = fn(ctx, *node, operands);
    for (std::size_t i = 0; i < outs.size(); ++i)
      ctx.Bind(node, static_cast<uint32_t>(i), outs[i]);
  }
  std::vector<lowering::Ssa> results;
  for (const Value& r : g.roots) results.push_back(ctx.Lookup(r));
  return ctx.Finish(results, 1);
}

// XLA_DONATE_BUFFERS=0 turns buffer donation off (for debugging).
bool DonationEnabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("XLA_DONATE_BUFFERS");
    return v == nullptr || std::string(v) != "0";
  }();
  return enabled;
}

struct ComputationCache {
  std::mutex mu;
  std::unordered_map<hash_t, runtime::ExecutablePtr> entries;
};

ComputationCache& Cache() {
  static ComputationCache* cache = new ComputationCache();
  return *cache;
}

// One sync at a time per device keeps the order of updates to a tensor well defined.
std::mutex& DeviceMutex(int device) {
  static std::mutex mus[64];
  return mus[device % 64];
}

// Distinct root values of the tensors, and for each tensor the index of its root.
std::vector<Value> CollectRoots(const std::vector<XlaTensorPtr>& tensors, std::vector<int>* root_of) {
  std::vector<Value> roots;
  std::unordered_map<const Node*, std::vector<std::pair<uint32_t, int>>> seen;
  root_of->clear();
  for (const XlaTensorPtr& t : tensors) {
    Value v = t->pending_ir();
    auto& slots = seen[v.node.get()];
    int index = -1;
    for (auto& [output, idx] : slots)
      if (output == v.index) index = idx;
    if (index < 0) {
      index = static_cast<int>(roots.size());
      slots.emplace_back(v.index, index);
      roots.push_back(std::move(v));
    }
    root_of->push_back(index);
  }
  return roots;
}

runtime::BufferPtr TransferScalar(const unsigned char* bytes, ir::ElementType type, int device) {
  static metrics::Metric* transfer = metrics::GetMetric("TransferToDeviceTime");
  metrics::ScopedTimer timer(transfer);
  return runtime::Client::Get().TransferToDevice(bytes, type, {}, device);
}

// Device buffers of recently used scalar parameters (learning rates, momenta, alphas
// repeat every step), so a step does not upload the same value again. Scalar
// parameters are never donated, so a cached buffer is never overwritten.
class ScalarBufferCache {
 public:
  runtime::BufferPtr Get(const unsigned char* bytes, std::size_t size, ir::ElementType type, int device) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes, size);
    Key key{bits, static_cast<int>(type), device};
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    // Values that change every step (seeds, counters) would grow the cache without
    // bound; start over when it is full.
    if (entries_.size() >= kMaxEntries) entries_.clear();
    runtime::BufferPtr buffer = TransferScalar(bytes, type, device);
    entries_.emplace(key, buffer);
    return buffer;
  }

 private:
  static constexpr std::size_t kMaxEntries = 4096;
  struct Key {
    uint64_t bits;
    int type;
    int device;
    bool operator==(const Key& o) const { return bits == o.bits && type == o.type && device == o.device; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(k.bits) ^ (static_cast<std::size_t>(k.type) << 48) ^
             (static_cast<std::size_t>(k.device) << 56);
    }
  };
  std::mutex mu_;
  std::unordered_map<Key, runtime::BufferPtr, KeyHash> entries_;
};

runtime::BufferPtr UploadScalar(const Node* node, int device) {
  static ScalarBufferCache* cache = new ScalarBufferCache();
  double v = node->scalar_value();
  unsigned char bytes[8] = {};
  std::size_t size = 0;
  switch (node->shape().type) {
    case ir::ElementType::kF64: { std::memcpy(bytes, &v, 8); size = 8; break; }
    case ir::ElementType::kF32: { float f = static_cast<float>(v); std::memcpy(bytes, &f, 4); size = 4; break; }
    case ir::ElementType::kS64: { int64_t i = static_cast<int64_t>(v); std::memcpy(bytes, &i, 8); size = 8; break; }
    case ir::ElementType::kS32: { int32_t i = static_cast<int32_t>(v); std::memcpy(bytes, &i, 4); size = 4; break; }
    case ir::ElementType::kPred: { bytes[0] = v != 0; size = 1; break; }
    default:
      throw std::logic_error("scalar parameters are f32, f64, s32, s64 or pred; got " + node->shape().ToString());
  }
  return cache->Get(bytes, size, node->shape().type, device);
}

// Compiles (or finds) and runs the graph of `tensors`, all pending on `device`.
// `all_pending`: the tensors are every pending tensor of the device (buffers may be donated).
void RunGraph(int device, const std::vector<XlaTensorPtr>& tensors, bool all_pending) {
  if (tensors.empty()) return;
  std::vector<int> root_of;
  std::vector<Value> roots = CollectRoots(tensors, &root_of);
  PostOrderGraph g = BuildGraph(roots);
  g.roots = roots;
  std::vector<int64_t> donated;
  if (all_pending && DonationEnabled()) donated = AssignDonations(g);

  runtime::Client& client = runtime::Client::Get();
  runtime::ExecutablePtr exe;
  {
    ComputationCache& cache = Cache();
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.entries.find(g.hash);
    if (it != cache.entries.end()) exe = it->second;
  }
  if (exe) {
    static metrics::Counter* cached = metrics::GetCounter("CachedCompile");
    cached->Add();
  } else {
    static metrics::Counter* uncached = metrics::GetCounter("UncachedCompile");
    static metrics::Metric* compile_time = metrics::GetMetric("CompileTime");
    uncached->Add();
    std::string module = Lower(g);
    {
      metrics::ScopedTimer timer(compile_time);
      exe = client.Compile(module, 1);
    }
    ComputationCache& cache = Cache();
    std::lock_guard<std::mutex> lock(cache.mu);
    cache.entries.emplace(g.hash, exe);
  }

  // The argument buffers stay with the runtime until the execution is done: the graph
  // (and with it the last reference to many of them) is released right after the launch.
  std::vector<runtime::BufferPtr> arg_buffers;
  std::vector<runtime::Buffer*> args;
  arg_buffers.reserve(g.parameters.size());
  args.reserve(g.parameters.size());
  for (const Node* p : g.parameters) {
    if (p->leaf_kind() == ir::LeafKind::kDeviceData) {
      if (p->buffer()->device() != device)
        throw std::runtime_error("a graph on xla:" + std::to_string(device) + " uses data of xla:" +
                                 std::to_string(p->buffer()->device()) + "; move it with .to() first");
      arg_buffers.push_back(p->buffer());
    } else {
      arg_buffers.push_back(UploadScalar(p, device));
    }
    args.push_back(arg_buffers.back().get());
  }
  std::vector<std::vector<runtime::BufferPtr>> outputs;
  {
    static metrics::Metric* execute_time = metrics::GetMetric("ExecuteTime");
    metrics::ScopedTimer timer(execute_time);
    outputs = client.Execute(*exe, {args}, {device}, donated, std::move(arg_buffers));
  }
  if (!donated.empty()) {
    static metrics::Counter* donations = metrics::GetCounter("DonatedBuffers");
    donations->Add(static_cast<int64_t>(donated.size()));
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) tensors[i]->SetBuffer(outputs[0][root_of[i]]);
}

}  // namespace

void SyncDevice(int device, bool wait) {
  {
    std::lock_guard<std::mutex> lock(DeviceMutex(device));
    RunGraph(device, PendingTensors(device), /*all_pending=*/true);
  }
  if (wait) runtime::Client::Get().WaitAll();
}

void SyncAll(bool wait) {
  for (int device : DevicesWithPendingTensors()) SyncDevice(device, false);
  if (wait) runtime::Client::Get().WaitAll();
}

void SyncTensors(const std::vector<XlaTensorPtr>& tensors) {
  std::unordered_map<int, std::vector<XlaTensorPtr>> by_device;
  for (const XlaTensorPtr& t : tensors)
    if (t->is_pending()) by_device[t->device()].push_back(t);
  for (auto& [device, list] : by_device) {
    std::lock_guard<std::mutex> lock(DeviceMutex(device));
    // Another thread may have synced some of them meanwhile.
    list.erase(std::remove_if(list.begin(), list.end(), [](const XlaTensorPtr& t) { return !t->is_pending(); }),
               list.end());
    RunGraph(device, list, /*all_pending=*/false);
  }
}

std::string GetStableHlo(const std::vector<XlaTensorPtr>& tensors) {
  std::vector<Value> roots;
  for (const XlaTensorPtr& t : tensors) roots.push_back(t->GetIrValue());
  PostOrderGraph g = BuildGraph(roots);
  g.roots = roots;
  return Lower(g);
}

std::size_t CachedComputationCount() {
  ComputationCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  return cache.entries.size();
}

}  // namespace torch_xla::exec
