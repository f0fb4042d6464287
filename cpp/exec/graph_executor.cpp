#include "exec/graph_executor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <list>
#include <chrono>
#include <unordered_map>
#include <unordered_set>

#include "exec/graph_debug.h"
#include "exec/replication.h"
#include "ir/builder_collectives.h"
#include "ir/debug_location.h"
#include "ir/region.h"
#include "lowering/lowering_context.h"
#include "lowering/matmul_precision.h"
#include "runtime/bounded_map.h"
#include "runtime/compiled_memory.h"
#include "runtime/metrics.h"
#include "runtime/persistent_cache.h"
#include "runtime/trace_recorder.h"
#include "tensor/rng_state.h"

namespace torch_xla::exec {
namespace {

using ir::hash_t;
using ir::Node;
using ir::Value;

// Per thread: whether the current sync is eager mode's (SyncAsEagerOp), whether syncs may
// run graphs at all (SetAllowExecution), and the graphs the last sync ran.
thread_local bool eager_op_sync = false;
thread_local bool allow_execution = true;
thread_local std::vector<uint64_t> last_sync_graphs;

// The metric a compile or an execution is timed in: eager mode's own while it syncs an op.
metrics::Metric* CompileTimeMetric() {
  static metrics::Metric* compile = metrics::GetMetric("CompileTime");
  static metrics::Metric* eager = metrics::GetMetric("EagerOpCompileTime");
  return eager_op_sync ? eager : compile;
}

metrics::Metric* ExecuteTimeMetric() {
  static metrics::Metric* execute = metrics::GetMetric("ExecuteTime");
  static metrics::Metric* eager = metrics::GetMetric("EagerOpExecuteTime");
  return eager_op_sync ? eager : execute;
}

// Scalars 0 and 1 (of a real type) are constants of the program rather than parameters,
// as in torch_xla: they come with nearly every op (alpha, beta, fill values, a normal's
// mean and deviation), and a parameter costs an upload or a lookup of its buffer at each
// run. Any other value is a parameter, so that a new value does not compile a new graph.
// XLA_NO_SPECIAL_SCALARS=1 makes every scalar a parameter. Returns the constant's code in
// PostOrderGraph::parameter_of (-1 for 0, -2 for 1), or 0 for a parameter.
int SpecialScalarCode(const Node& scalar) {
  static const bool off = [] {
    const char* v = std::getenv("XLA_NO_SPECIAL_SCALARS");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  if (off || runtime::IsComplex(scalar.shape().type)) return 0;
  double value = scalar.scalar_value();
  if (value == 0.0 && !std::signbit(value)) return -1;
  if (value == 1.0) return -2;
  return 0;
}

// An SPMD program's executions, one per launch over every device: torch_xla's
// ExecuteReplicatedTime (eager mode's one-op graphs count as its other executions do).
metrics::Metric* ExecuteReplicatedTimeMetric() {
  static metrics::Metric* replicated = metrics::GetMetric("ExecuteReplicatedTime");
  return eager_op_sync ? ExecuteTimeMetric() : replicated;
}

// A graph ready to lower or run: nodes in post-order, parameters in order, roots.
struct PostOrderGraph {
  std::vector<const Node*> nodes;        // every node, operands before users
  std::vector<const Node*> parameters;   // leaves in parameter order (device data deduplicated)
  // leaf -> parameter index, or for a constant scalar its code (< 0, SpecialScalarCode)
  std::unordered_map<const Node*, int> parameter_of;
  std::unordered_map<const runtime::Buffer*, int> parameter_of_buffer;  // device data -> parameter index
  std::vector<int> leaf_nodes;           // per parameter: graph nodes holding its buffer
  std::vector<Value> roots;              // distinct root values
  std::vector<int> aliased_output;       // per parameter: root whose result reuses its buffer, or -1
  std::vector<int> updated_parameter;    // per root: parameter whose buffer its tensor updates, or -1
  std::size_t donated_to_updates = 0;    // donations paired with the update of their buffer
  std::vector<const Node*> collectives;  // collective ops, in post-order
  // Buffers that a loop (stablehlo.while) takes as operands: never donated. With them
  // donated (a tensor made inside a scanned function, read by the loop alone), the
  // forward loop's results came out wrong on the CPU plugin when scan's backward loop,
  // which does not depend on it, ran in the same graph.
  std::unordered_set<const runtime::Buffer*> loop_operands;
  hash_t hash = 0;                       // structure, shared parameters and output aliasing
  // An SPMD program (num_partitions > 0, one partition per device): the layout of each
  // parameter and root over the devices, as sharding text (runtime/sharding.h).
  int num_partitions = 0;
  std::vector<runtime::Sharding> parameter_shardings;
  std::vector<runtime::Sharding> root_shardings;
  // Per root: XLA chooses its layout (no tensor of it has one); its sharding above is
  // then the compiled program's.
  std::vector<bool> root_open;
  // Per root: only the device's random number state takes it (PT_XLA_DEBUG's analysis
  // counts the outputs for the user's tensors); filled only when debugging.
  std::vector<bool> rng_state_root;
  bool inlined_scalars = false;  // some scalar leaves are constants (SpecialScalarCode)
};

// A graph reads a value that only a loop body being traced has (a region parameter).
struct ValueOfLoopBody : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Whether `v` is computed from a loop body's stand-ins (a slow walk, for the rare sync
// that meets one).
bool ReadsLoopBody(const Value& v) {
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> stack{v.node.get()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->op() == ir::RegionParameterOp()) return true;
    for (const Value& o : n->operands()) stack.push_back(o.node.get());
  }
  return false;
}

PostOrderGraph BuildGraphWith(const std::vector<Value>& roots, bool inline_scalars) {
  // Walk numbers mark visited nodes (Node::MarkVisited); one walk at a time.
  static std::mutex walk_mutex;
  static uint64_t last_walk = 0;
  std::lock_guard<std::mutex> walk_lock(walk_mutex);
  const uint64_t walk = ++last_walk;
  // The size of the last graph: the next one is usually the same step again.
  static std::size_t last_size = 0;
  PostOrderGraph g;
  g.nodes.reserve(last_size);
  std::unordered_set<hash_t> leaf_edges;
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
      if (done->op() == ir::RegionParameterOp()) {
        // Only a loop's own sub-graphs may read its block arguments (ir/region.h).
        throw ValueOfLoopBody(
            "a tensor computed inside a loop body (while_loop, fori_loop, scan) is used outside it: the body "
            "updated a tensor from outside in place, kept one of its tensors, or read one on the host (.item(), "
            "a CPU fallback op); loop bodies must return their results");
      }
      // Which parameter each leaf operand is. Leaves of one shape hash alike, so the
      // roots' hashes do not tell mul(x, a) from mul(x, b); the graphs differ in this wiring.
      // Each distinct (op, operand slot, parameter) counts once, so a subexpression
      // traced twice keys like one traced once (they compute the same).
      for (std::size_t slot = 0; slot < done->operands().size(); ++slot) {
        const Node* child = done->operand(slot).node.get();
        if (child->leaf_kind() == ir::LeafKind::kNone) continue;
        hash_t edge = ir::HashCombine(ir::HashCombine(done->hash(), static_cast<hash_t>(slot)),
                                      static_cast<hash_t>(g.parameter_of.at(child)));
        if (leaf_edges.insert(edge).second) h = ir::HashCombine(h, edge);
      }
      g.nodes.push_back(done);
      if (ir::IsCollective(done->op())) g.collectives.push_back(done);
      if (done->op() == ir::WhileOp()) {
        for (const Value& v : done->operands())
          if (v.node->leaf_kind() == ir::LeafKind::kDeviceData) g.loop_operands.insert(v.node->buffer().get());
      }
      if (done->leaf_kind() == ir::LeafKind::kDeviceData) {
        auto [it, inserted] = g.parameter_of_buffer.emplace(done->buffer().get(), static_cast<int>(g.parameters.size()));
        if (inserted) {
          g.parameters.push_back(done);
          g.leaf_nodes.push_back(0);
        }
        ++g.leaf_nodes[it->second];
        g.parameter_of[done] = it->second;
        h = ir::HashCombine(h, static_cast<hash_t>(it->second));
      } else if (done->leaf_kind() == ir::LeafKind::kScalar) {
        if (int special = inline_scalars ? SpecialScalarCode(*done) : 0) {
          g.inlined_scalars = true;
          // A constant of the program, keyed by its value (the graph's hash takes the code
          // through the edges above).
          g.parameter_of[done] = special;
          continue;
        }
        g.parameter_of[done] = static_cast<int>(g.parameters.size());
        g.parameters.push_back(done);
        g.leaf_nodes.push_back(1);
        h = ir::HashCombine(h, static_cast<hash_t>(g.parameters.size()) << 1);
      }
    }
  }
  last_size = g.nodes.size();
  // The same IR lowers to other products under another mat mul precision.
  g.hash = ir::HashCombine(h, static_cast<hash_t>(lowering::MatMulPrecisionKey()));
  g.aliased_output.assign(g.parameters.size(), -1);
  return g;
}

// A graph with collectives runs the same program on every replica: its scalars are all
// parameters, so that replicas holding 0 or 1 where others hold other values (a
// replica's ordinal, a per-replica scale) still run one graph. Once the process has
// built such a graph (it replicates), every graph keeps its scalars as parameters, so
// that a replicated step's graph is walked once, not once more without constants.
PostOrderGraph BuildGraph(const std::vector<Value>& roots) {
  static std::atomic<bool> replicating{false};
  const bool inline_scalars = !replicating.load(std::memory_order_relaxed);
  PostOrderGraph g = BuildGraphWith(roots, inline_scalars);
  if (inline_scalars && !g.collectives.empty()) {
    replicating.store(true, std::memory_order_relaxed);
    if (g.inlined_scalars) g = BuildGraphWith(roots, /*inline_scalars=*/false);
  }
  return g;
}

// The device-data parameters whose buffers the execution may overwrite: those referenced
// by nothing but this graph's own leaf nodes (no tensor holds them, so once the synced
// tensors take their new buffers nobody can read them again). Only valid when the sync
// takes every pending tensor of the device, so no IR outside this graph can still
// reference the leaves. Earlier executions that read a buffer do not count: PJRT orders
// the donation after them, and whether they have finished is a matter of timing that
// must not change the graph (its donations are part of the graph's key).
// `only_requested`: the buffers the user asked to donate, and no others (a sync of some
// tensors, where the runtime's own aliasing stays off).
std::vector<bool> DonatableParameters(const PostOrderGraph& g, bool only_requested = false) {
  std::vector<bool> donatable(g.parameters.size(), false);
  for (std::size_t i = 0; i < g.parameters.size(); ++i) {
    const Node* p = g.parameters[i];
    if (p->leaf_kind() != ir::LeafKind::kDeviceData) continue;
    if (g.loop_operands.count(p->buffer().get())) continue;
    const bool requested = p->buffer()->donation_requested();
    donatable[i] = requested || (!only_requested && runtime::Buffer::ReferencesBesidesExecutions(p->buffer()) ==
                                                        g.leaf_nodes[i]);
  }
  return donatable;
}


// Pairs each donatable parameter with a result of the same shape, which XLA then writes
// in place: a training step updates its parameters and optimizer state without
// allocating new buffers. A result pairs first with the buffer its tensor updates (an
// in-place update such as `p.add_(...)`): any other pairing of equal shapes is valid but
// costs copies, since XLA must then keep the old value readable until its last reader
// (the weight's gradient written into the weight's buffer, the update into a new one).
// The rest pair in order. Returns the donated parameter indices.
std::vector<int64_t> AssignDonations(PostOrderGraph& g, const std::vector<bool>& donatable) {
  std::vector<int64_t> donated;
  std::vector<bool> taken(g.roots.size(), false);
  auto pair = [&](std::size_t i, std::size_t r) {
    taken[r] = true;
    g.aliased_output[i] = static_cast<int>(r);
    donated.push_back(static_cast<int64_t>(i));
    g.hash = ir::HashCombine(g.hash, (static_cast<hash_t>(i) << 32) | r);
  };
  for (std::size_t r = 0; r < g.updated_parameter.size(); ++r) {
    const int i = g.updated_parameter[r];
    if (i < 0 || !donatable[i] || g.aliased_output[i] >= 0) continue;
    if (!(g.roots[r].shape() == g.parameters[i]->shape())) continue;
    pair(i, r);
    ++g.donated_to_updates;
  }
  for (std::size_t i = 0; i < g.parameters.size(); ++i) {
    if (!donatable[i] || g.aliased_output[i] >= 0) continue;
    const Node* p = g.parameters[i];
    for (std::size_t r = 0; r < g.roots.size(); ++r) {
      if (taken[r] || !(g.roots[r].shape() == p->shape())) continue;
      pair(i, r);
      break;
    }
  }
  return donated;
}

std::string Lower(const PostOrderGraph& g, int num_replicas) {
  lowering::LoweringContext ctx;
  const bool hlo_debug = ir::HloDebug();
  const bool spmd = g.num_partitions > 0;
  std::vector<lowering::Ssa> params(g.parameters.size());
  for (std::size_t i = 0; i < g.parameters.size(); ++i)
    params[i] = ctx.AddParameter(g.parameters[i]->shape(), g.aliased_output[i],
                                 spmd ? g.parameter_shardings[i].ToString() : std::string());
  for (const Node* node : g.nodes) {
    if (node->leaf_kind() != ir::LeafKind::kNone) {
      int parameter = g.parameter_of.at(node);
      ctx.Bind(node, 0, parameter >= 0 ? params[parameter] : ctx.Constant(node->shape(), node->scalar_value()));
      continue;
    }
    if (hlo_debug) ctx.SetLocation(node->location());
    ctx.LowerNode(*node);
  }
  std::vector<lowering::Ssa> results;
  for (const Value& r : g.roots) results.push_back(ctx.Lookup(r));
  if (!spmd) return ctx.Finish(results, num_replicas);
  std::vector<std::string> result_shardings;
  for (std::size_t r = 0; r < g.root_shardings.size(); ++r)
    result_shardings.push_back(g.root_open[r] ? std::string() : g.root_shardings[r].ToString());
  return ctx.Finish(results, /*num_replicas=*/1, g.num_partitions, result_shardings);
}

std::atomic<bool>& AliasWithBufferDonorFlag() {
  static std::atomic<bool> flag{false};
  return flag;
}

bool AliasWithBufferDonorConfig() { return AliasWithBufferDonorFlag().load(std::memory_order_relaxed); }

// XLA_DONATE_BUFFERS=0 turns buffer donation off (for debugging).
bool DonationEnabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("XLA_DONATE_BUFFERS");
    return v == nullptr || std::string(v) != "0";
  }();
  return enabled;
}

// Which parameters a launch may donate: for a sync of every pending tensor, those no
// tensor can read afterwards and those the user asked to donate; for a sync of some
// tensors, only the latter, and only when the user enabled it.
std::vector<bool> LaunchDonatable(const PostOrderGraph& g, bool all_pending) {
  if (!DonationEnabled()) return std::vector<bool>(g.parameters.size(), false);
  if (all_pending) return DonatableParameters(g);
  if (AliasWithBufferDonorConfig()) return DonatableParameters(g, /*only_requested=*/true);
  return std::vector<bool>(g.parameters.size(), false);
}

// Compiled computations by graph hash, shared by every device and replica thread. A graph
// is compiled once: a thread that finds it being compiled by another waits for that
// compile instead of starting its own (replicas usually trace the same graph at the same
// time). A failed compile is not kept, so a later sync tries again.
//
// At most $XLA_COMPILATION_CACHE_SIZE (default 1024) compiled graphs are kept, the least
// recently used go first: each CPU executable keeps its JIT-compiled code mapped, and a
// process that compiled thousands of graphs ran out of memory mappings (the kernel's
// vm.max_map_count) and crashed in the next compile. The persistent cache still has them.
class ComputationCache {
 public:
  template <typename CompileFn>
  runtime::ExecutablePtr GetOrCompile(hash_t hash, CompileFn&& compile) {
    std::promise<runtime::ExecutablePtr> promise;
    std::shared_future<runtime::ExecutablePtr> entry;
    bool mine = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto [it, inserted] = entries_.try_emplace(hash);
      if (inserted) {
        recency_.push_front(hash);
        it->second = Entry{promise.get_future().share(), recency_.begin()};
        mine = true;
        EvictLocked();
      } else {
        recency_.splice(recency_.begin(), recency_, it->second.position);
      }
      entry = it->second.executable;
    }
    if (!mine) {
      static metrics::Counter* cached = metrics::GetCounter("CachedCompile");
      cached->Add();
      return entry.get();  // rethrows the other thread's compile error
    }
    static metrics::Counter* uncached = metrics::GetCounter("UncachedCompile");
    uncached->Add();
    try {
      runtime::ExecutablePtr exe = compile();
      promise.set_value(exe);
      return exe;
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::lock_guard<std::mutex> lock(mu_);
      auto it = entries_.find(hash);
      if (it != entries_.end()) {
        recency_.erase(it->second.position);
        entries_.erase(it);
      }
      throw;
    }
  }

  std::size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }

 private:
  struct Entry {
    std::shared_future<runtime::ExecutablePtr> executable;
    std::list<hash_t>::iterator position;  // in recency_
  };

  static std::size_t Capacity() {
    static const std::size_t capacity = [] {
      const char* v = std::getenv("XLA_COMPILATION_CACHE_SIZE");
      long n = v == nullptr ? 0 : std::strtol(v, nullptr, 10);
      return static_cast<std::size_t>(n > 0 ? n : 1024);
    }();
    return capacity;
  }

  // Drops the least recently used compiled graphs past the capacity (an execution still
  // running keeps its executable alive through its own reference; one still compiling is
  // skipped).
  void EvictLocked() {
    auto it = recency_.end();
    while (entries_.size() > Capacity() && it != recency_.begin()) {
      --it;
      auto entry = entries_.find(*it);
      if (entry->second.executable.wait_for(std::chrono::seconds(0)) != std::future_status::ready) continue;
      entries_.erase(entry);
      it = recency_.erase(it);
    }
  }

  std::mutex mu_;
  std::list<hash_t> recency_;  // most recently used first
  std::unordered_map<hash_t, Entry> entries_;
};

ComputationCache& Cache() {
  static ComputationCache* cache = new ComputationCache();
  return *cache;
}

// What the persistent cache keys an executable by: everything the plugin compiles from
// (the module, its replicas and their devices, XLA_FLAGS) and the plugin itself. A
// single-device executable is portable: its device is not part of it.
runtime::CacheKey PersistentKey(const std::string& module, const std::vector<int>& replica_devices,
                                const runtime::Client& client) {
  std::string text = module;
  text += "\nplugin: " + client.plugin_identity() + "\nreplicas:";
  if (replica_devices.size() > 1) {
    for (int d : replica_devices) text += " " + std::to_string(d);
  }
  const char* flags = std::getenv("XLA_FLAGS");
  text += std::string("\nXLA_FLAGS: ") + (flags != nullptr ? flags : "");
  return runtime::CacheKey::Of(text);
}

// PT_XLA_DEBUG's post-compilation analysis: the program's sizes, as the plugin reports them.
void AnalyzeProgram(const runtime::Executable& exe) {
  if (DebugLevel() < 1 || eager_op_sync) return;
  ProgramSizes sizes;
  if (std::optional<runtime::CompiledMemoryStats> stats = runtime::ReadCompiledMemoryStats(exe)) {
    sizes = ProgramSizes{stats->argument_bytes, stats->output_bytes, stats->alias_bytes, stats->temp_bytes,
                         stats->generated_code_bytes};
  }
  AnalyzeCompiledProgram(sizes);
}

// The shapes of the graph's outputs for the user's tensors (not the random number state).
std::vector<std::string> UserOutputShapes(const PostOrderGraph& g) {
  std::vector<std::string> shapes;
  for (std::size_t r = 0; r < g.roots.size(); ++r)
    if (r >= g.rng_state_root.size() || !g.rng_state_root[r]) shapes.push_back(g.roots[r].shape().ToString());
  return shapes;
}

// PT_XLA_DEBUG's analysis of each execution (level 2).
void AnalyzeRun(const PostOrderGraph& g) {
  if (DebugLevel() >= 2 && !eager_op_sync) AnalyzeExecution(g.hash, g.parameters.size(), UserOutputShapes(g).size());
}

// Compiles the graph, or loads its executable from the persistent cache (a second run of
// a script compiles nothing it compiled before); an entry the plugin cannot load is
// compiled and stored again.
runtime::ExecutablePtr CompileGraph(const PostOrderGraph& g, hash_t key, const std::vector<int>& replica_devices) {
  return Cache().GetOrCompile(key, [&] {
    runtime::trace::TraceScope span("XLAGraphExecutor::Compile");
    if (span.active()) span.AddArg("graph", GraphHashText(g.hash));
    // An eager op's executable counts from the cache miss: loaded or compiled.
    std::optional<metrics::ScopedTimer> eager_timer;
    if (eager_op_sync) eager_timer.emplace(CompileTimeMetric());
    const int replicas = static_cast<int>(replica_devices.size());
    // InputOutputAliasCount: the inputs each new graph gives its outputs to write in
    // place (zero included), one sample per graph, as the reference records it.
    static metrics::Metric* aliases = metrics::GetMetric("InputOutputAliasCount", metrics::Unit::kCount);
    aliases->AddSample(static_cast<double>(
        std::count_if(g.aliased_output.begin(), g.aliased_output.end(), [](int output) { return output >= 0; })));
    if (DebugLevel() >= 1 && !eager_op_sync) {
      std::vector<std::string> inputs;
      for (const Node* p : g.parameters) inputs.push_back(p->shape().ToString());
      AnalyzeCompilation(g.hash, inputs, UserOutputShapes(g), g.nodes.size());
    }
    std::string module;
    {
      runtime::trace::TraceScope lowering("XLAGraphExecutor::Lower");
      module = Lower(g, replicas);
    }
    runtime::Client& client = runtime::Client::Get();
    std::shared_ptr<runtime::PersistentCache> disk = runtime::ActivePersistentCache();
    runtime::CacheKey disk_key;
    if (disk) {
      disk_key = PersistentKey(module, replica_devices, client);
      if (std::optional<std::string> bytes = disk->Load(disk_key)) {
        try {
          runtime::ExecutablePtr loaded = client.DeserializeExecutable(*bytes, replicas);
          AnalyzeProgram(*loaded);
          return loaded;
        } catch (const runtime::RuntimeError&) {
          disk->Remove(disk_key);
        }
      }
    }
    runtime::ExecutablePtr exe;
    {
      static metrics::Counter* compiles = metrics::GetCounter("CreateCompileHandles");
      compiles->Add();
      // An eager op's compile is timed from the cache miss (above).
      std::optional<metrics::ScopedTimer> timer;
      if (!eager_op_sync) timer.emplace(CompileTimeMetric());
      exe = g.num_partitions > 0 ? client.CompileSpmd(module, g.num_partitions, g.root_open)
                                 : client.Compile(module, replicas, replica_devices);
    }
    AnalyzeProgram(*exe);
    if (disk && !disk->read_only()) {
      try {
        disk->Store(disk_key, client.SerializeExecutable(*exe));
      } catch (const runtime::RuntimeError&) {
        // A plugin that cannot serialize: nothing to keep.
      }
    }
    return exe;
  });
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
    if (std::optional<runtime::BufferPtr> kept = entries_.Find(key)) return *kept;
    static metrics::Counter* misses = metrics::GetCounter("DeviceDataCacheMiss");
    misses->Add();
    runtime::BufferPtr buffer = TransferScalar(bytes, type, device);
    entries_.Keep(key, buffer);
    return buffer;
  }

 private:
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
  // Values that change every step (seeds, counters) would grow it without bound.
  runtime::BoundedMap<Key, runtime::BufferPtr, std::unordered_map<Key, runtime::BufferPtr, KeyHash>> entries_;
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

// Timing of the steps around an execution: gathering its argument buffers, and handing
// its outputs to the tensors.
metrics::Metric* UnwrapTime() {
  static metrics::Metric* metric = metrics::GetMetric("UnwrapXlaData");
  return metric;
}

metrics::Metric* WrapTime() {
  static metrics::Metric* metric = metrics::GetMetric("WrapXlaData");
  return metric;
}

// The buffers of a graph's parameters on `device`: device data as is, scalars uploaded.
std::vector<runtime::BufferPtr> ArgumentBuffers(const PostOrderGraph& g, int device) {
  std::vector<runtime::BufferPtr> buffers;
  buffers.reserve(g.parameters.size());
  for (const Node* p : g.parameters) {
    if (p->leaf_kind() == ir::LeafKind::kDeviceData) {
      if (p->buffer()->device() != device)
        throw std::runtime_error("a graph on xla:" + std::to_string(device) + " uses data of xla:" +
                                 std::to_string(p->buffer()->device()) + "; move it with .to() first");
      if (p->buffer()->donation_requested() && p->buffer()->IsDeleted())
        throw std::runtime_error("a graph on xla:" + std::to_string(device) + " reads a tensor of shape " +
                                 p->shape().ToString() +
                                 " whose device buffer was donated to an earlier computation "
                                 "(torch_xla._XLAC._set_buffer_donation): its value is gone");
      buffers.push_back(p->buffer());
    } else {
      buffers.push_back(UploadScalar(p, device));
    }
  }
  return buffers;
}

std::vector<runtime::Buffer*> RawPointers(const std::vector<runtime::BufferPtr>& buffers) {
  std::vector<runtime::Buffer*> raw;
  raw.reserve(buffers.size());
  for (const runtime::BufferPtr& b : buffers) raw.push_back(b.get());
  return raw;
}

// DonatedBuffers: buffers an execution overwrote with a result; DonatedToUpdates: those
// whose result was the update of the tensor that held them (the rest took a result of
// the same shape, which can cost XLA copies).
void CountDonations(std::size_t count, std::size_t to_updates) {
  static metrics::Counter* donations = metrics::GetCounter("DonatedBuffers");
  static metrics::Counter* in_place = metrics::GetCounter("DonatedToUpdates");
  if (count > 0) donations->Add(static_cast<int64_t>(count));
  if (to_updates > 0) in_place->Add(static_cast<int64_t>(to_updates));
}

// "graph 3f2a... (120 ops, 9 inputs; collectives: all_reduce(f32[10], f32[10, 5]) -> ...)",
// for the errors of replicated launches.
std::string DescribeGraph(const PostOrderGraph& g) {
  std::string out = "graph " + GraphHashText(g.hash) + " (" + std::to_string(g.nodes.size()) + " ops, " +
                    std::to_string(g.parameters.size()) + " inputs; collectives: ";
  constexpr std::size_t kMaxListed = 4;
  for (std::size_t i = 0; i < g.collectives.size() && i < kMaxListed; ++i) {
    out += (i ? ", " : "") + g.collectives[i]->ToString();
  }
  if (g.collectives.size() > kMaxListed) out += " and " + std::to_string(g.collectives.size() - kMaxListed) + " more";
  return out + ")";
}

// A graph on its way: a single-device graph is launched at once; a replicated one waits
// at its replication's rendezvous (ticket) until every replica has arrived.
struct Launch {
  std::vector<XlaTensorPtr> tensors;
  std::vector<int> root_of;
  std::shared_ptr<Replication> replication;
  LaunchRendezvous::Ticket ticket;
};

// The dimensions of the graph's results, which its Buffers carry (the executable returns
// some in their device form, runtime/device_dims.h).
std::vector<std::vector<int64_t>> RootDims(const PostOrderGraph& g) {
  std::vector<std::vector<int64_t>> dims;
  dims.reserve(g.roots.size());
  for (const Value& r : g.roots) dims.push_back(r.shape().dims);
  return dims;
}

// Runs a graph without collectives on `device` alone; the tensors take their outputs.
void LaunchSingle(int device, PostOrderGraph& g, const std::vector<XlaTensorPtr>& tensors,
                  const std::vector<int>& root_of, bool all_pending) {
  std::vector<int64_t> donated;
  donated = AssignDonations(g, LaunchDonatable(g, all_pending));
  runtime::ExecutablePtr exe = CompileGraph(g, g.hash, {device});
  AnalyzeRun(g);
  // The argument buffers stay with the runtime until the execution is done: the graph
  // (and with it the last reference to many of them) is released right after the launch.
  std::vector<runtime::BufferPtr> arg_buffers;
  {
    metrics::ScopedTimer timer(UnwrapTime());
    arg_buffers = ArgumentBuffers(g, device);
  }
  std::vector<runtime::Buffer*> args = RawPointers(arg_buffers);
  std::vector<std::vector<runtime::BufferPtr>> outputs =
      runtime::Client::Get().Execute(*exe, {args}, {device}, donated, std::move(arg_buffers), RootDims(g),
                                     ExecuteTimeMetric());
  CountDonations(donated.size(), g.donated_to_updates);
  metrics::ScopedTimer timer(WrapTime());
  for (std::size_t i = 0; i < tensors.size(); ++i) tensors[i]->SetBuffer(outputs[0][root_of[i]]);
}

// A sharding's fields (its encoding as integers), hashed: part of an SPMD graph's key,
// made at every sync without writing the sharding's text.
hash_t ShardingHash(const runtime::Sharding& s) {
  hash_t h = 0x5a4d;
  for (int64_t v : s.Encode()) h = ir::HashCombine(h, static_cast<hash_t>(v));
  return h;
}

// SPMD: the layouts of the graph's parameters (their data's) and roots (the tensors': set
// by the user, or that of the data they update), mixed into the graph's key. A root
// without one is left to XLA's sharding propagation (`propagate`), or replicated.
void AssignShardings(PostOrderGraph& g, const std::vector<XlaTensorPtr>& tensors, const std::vector<int>& root_of,
                     hash_t structure, bool propagate) {
  g.num_partitions = runtime::Client::Get().device_count();
  g.parameter_shardings.assign(g.parameters.size(), runtime::Sharding::Replicated());
  for (std::size_t i = 0; i < g.parameters.size(); ++i) {
    const Node* p = g.parameters[i];
    if (p->leaf_kind() == ir::LeafKind::kDeviceData && p->buffer()->is_sharded())
      g.parameter_shardings[i] = p->buffer()->sharding();
  }
  g.root_shardings.assign(g.roots.size(), runtime::Sharding::Replicated());
  g.root_open.assign(g.roots.size(), propagate);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (std::shared_ptr<const runtime::Sharding> s = tensors[i]->sharding()) {
      g.root_shardings[root_of[i]] = *s;
      g.root_open[root_of[i]] = false;
    }
  }
  hash_t h = ir::HashCombine(structure, static_cast<hash_t>(g.num_partitions));
  for (const runtime::Sharding& s : g.parameter_shardings) h = ir::HashCombine(h, ShardingHash(s));
  for (std::size_t r = 0; r < g.roots.size(); ++r)
    h = ir::HashCombine(h, g.root_open[r] ? 0x09e7 : ShardingHash(g.root_shardings[r]) + 1);
  g.hash = h;
}

// SPMD: plain data (made before SPMD was on, on one device) as every device reads it: a
// copy on each other device, made once through the host and kept while the data lives
// (device buffers never change), so that later graphs reading it copy nothing. Counter
// SpmdCopiesOfPlainData: the copies made.
class PlainDataCopies {
 public:
  runtime::BufferPtr On(const runtime::BufferPtr& buffer, int device) {
    if (buffer->device() == device) return buffer;
    std::lock_guard<std::mutex> lock(mu_);
    Entry& e = entries_[buffer.get()];
    if (e.source.lock() != buffer) e = Entry{buffer, Copies(*buffer)};
    return e.copies.at(device);
  }
  // Forgets the copies of data that no longer exists.
  void Prune() {
    std::lock_guard<std::mutex> lock(mu_);
    std::erase_if(entries_, [](const auto& entry) { return entry.second.source.expired(); });
  }

 private:
  struct Entry {
    std::weak_ptr<runtime::Buffer> source;
    std::vector<runtime::BufferPtr> copies;  // per device; none on the source's own
  };

  static std::vector<runtime::BufferPtr> Copies(const runtime::Buffer& buffer) {
    static metrics::Counter* copies = metrics::GetCounter("SpmdCopiesOfPlainData");
    runtime::Client& client = runtime::Client::Get();
    std::string bytes(buffer.byte_size(), '\0');
    if (!bytes.empty()) client.TransferFromDevice(buffer, bytes.data(), bytes.size());
    std::vector<runtime::BufferPtr> out(client.device_count());
    for (int d = 0; d < client.device_count(); ++d) {
      if (d == buffer.device()) continue;
      out[d] = client.TransferToDevice(bytes.data(), buffer.type(), buffer.dims(), d);
      copies->Add();
    }
    return out;
  }

  std::mutex mu_;
  std::unordered_map<const runtime::Buffer*, Entry> entries_;
};

PlainDataCopies& PlainCopies() {
  static PlainDataCopies* copies = new PlainDataCopies();
  return *copies;
}

// SPMD: the buffer of a parameter on `device`: its shard, or plain data's copy there.
runtime::BufferPtr ShardOn(const runtime::BufferPtr& buffer, int device) {
  if (buffer->is_sharded()) return buffer->shards().at(device);
  return PlainCopies().On(buffer, device);
}

// Runs an SPMD program: one executable for every device, each given its shards of the
// parameters; each root comes back as a sharded buffer of its layout.
// SPMD donation: each in-place update writes into the shards of the data it updates,
// where that data may be donated and the update keeps its layout (a root whose layout XLA
// chooses cannot pair: it is not known before the compile). Returns the donated
// parameters; the pairing is part of the graph's key.
std::vector<int64_t> AssignSpmdDonations(PostOrderGraph& g, bool all_pending) {
  std::vector<bool> donatable = LaunchDonatable(g, all_pending);
  std::vector<int64_t> donated;
  for (std::size_t r = 0; r < g.updated_parameter.size(); ++r) {
    const int i = g.updated_parameter[r];
    if (i < 0 || !donatable[i] || g.aliased_output[i] >= 0 || g.root_open[r]) continue;
    if (!(g.roots[r].shape() == g.parameters[i]->shape()) || g.root_shardings[r] != g.parameter_shardings[i]) continue;
    // Plain data made before SPMD was on reaches the devices as copies: nothing to give.
    if (!g.parameters[i]->buffer()->is_sharded()) continue;
    g.aliased_output[i] = static_cast<int>(r);
    donated.push_back(static_cast<int64_t>(i));
    g.hash = ir::HashCombine(g.hash, (static_cast<hash_t>(i) << 32) | r);
    ++g.donated_to_updates;
  }
  return donated;
}

void LaunchSpmd(PostOrderGraph& g, const std::vector<XlaTensorPtr>& tensors, const std::vector<int>& root_of,
                hash_t structure, bool all_pending) {
  runtime::Client& client = runtime::Client::Get();
  const int n = g.num_partitions;
  std::vector<int> devices(n);
  for (int d = 0; d < n; ++d) devices[d] = d;
  std::vector<int64_t> donated = AssignSpmdDonations(g, all_pending);
  runtime::ExecutablePtr exe = CompileGraph(g, g.hash, devices);
  if (std::find(g.root_open.begin(), g.root_open.end(), true) != g.root_open.end()) {
    try {
      g.root_shardings = client.OutputShardings(*exe);
    } catch (const runtime::RuntimeError&) {
      // The layouts XLA chose cannot be read: the program again, with those roots replicated.
      AssignShardings(g, tensors, root_of, structure, /*propagate=*/false);
      g.aliased_output.assign(g.parameters.size(), -1);
      g.donated_to_updates = 0;
      donated = AssignSpmdDonations(g, all_pending);
      exe = CompileGraph(g, g.hash, devices);
    }
  }
  AnalyzeRun(g);
  PlainCopies().Prune();
  std::vector<std::vector<runtime::Buffer*>> args(n);
  std::vector<runtime::BufferPtr> held;
  {
    metrics::ScopedTimer timer(UnwrapTime());
    for (const Node* p : g.parameters) {
      if (p->leaf_kind() == ir::LeafKind::kDeviceData && p->buffer()->donation_requested() && p->buffer()->IsDeleted())
        throw std::runtime_error("an SPMD graph reads a tensor of shape " + p->shape().ToString() +
                                 " whose device buffer was donated to an earlier computation: its value is gone");
      for (int d = 0; d < n; ++d) {
        runtime::BufferPtr b =
            p->leaf_kind() == ir::LeafKind::kDeviceData ? ShardOn(p->buffer(), d) : UploadScalar(p, d);
        args[d].push_back(b.get());
        held.push_back(std::move(b));
      }
    }
  }
  std::vector<std::vector<int64_t>> shard_dims;
  for (std::size_t r = 0; r < g.roots.size(); ++r) shard_dims.push_back(g.root_shardings[r].ShardDims(g.roots[r].shape().dims));
  std::vector<std::vector<runtime::BufferPtr>> outputs =
      client.Execute(*exe, args, devices, donated, std::move(held), shard_dims, ExecuteReplicatedTimeMetric());
  CountDonations(donated.size(), g.donated_to_updates);
  metrics::ScopedTimer timer(WrapTime());
  std::vector<runtime::BufferPtr> results;
  for (std::size_t r = 0; r < g.roots.size(); ++r) {
    std::vector<runtime::BufferPtr> shards;
    for (int d = 0; d < n; ++d) shards.push_back(outputs[d][r]);
    results.push_back(runtime::Buffer::Sharded(std::move(shards), g.root_shardings[r], g.roots[r].shape().type,
                                               g.roots[r].shape().dims));
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) tensors[i]->SetBuffer(results[root_of[i]]);
}

// Brings a graph with collectives to its replication's rendezvous. The replica that
// arrives last compiles the graph (once, for every replica) and launches all replicas
// as one execution; donation is what every replica may donate.
LaunchRendezvous::Ticket ArriveReplicated(Replication& replication, int device, PostOrderGraph& g,
                                          bool all_pending) {
  int replica = replication.ReplicaOf(device);
  ReplicaArguments part;
  try {
    part.donatable = LaunchDonatable(g, all_pending);
    // After DonatableParameters: holding the buffers here raises their use counts.
    metrics::ScopedTimer timer(UnwrapTime());
    part.buffers = ArgumentBuffers(g, device);
  } catch (const std::exception& e) {
    // This replica cannot join the others' launch: release them now, not at the timeout.
    replication.rendezvous().Abort("replica " + std::to_string(replica) + " (xla:" + std::to_string(device) +
                                   ") could not start its graph: " + e.what());
    throw;
  }
  const std::vector<int>& devices = replication.devices();
  auto launch = [&g, &devices](std::vector<ReplicaArguments>& parts) {
    std::vector<bool> donatable = parts[0].donatable;
    for (const ReplicaArguments& p : parts)
      for (std::size_t i = 0; i < donatable.size(); ++i) donatable[i] = donatable[i] && p.donatable[i];
    std::vector<int64_t> donated = AssignDonations(g, donatable);
    hash_t key = g.hash;
    for (int d : devices) key = ir::HashCombine(key, static_cast<hash_t>(d) + 1);
    runtime::ExecutablePtr exe = CompileGraph(g, key, devices);
    AnalyzeRun(g);
    std::vector<std::vector<runtime::Buffer*>> args;
    std::vector<runtime::BufferPtr> held;
    for (ReplicaArguments& p : parts) {
      args.push_back(RawPointers(p.buffers));
      held.insert(held.end(), p.buffers.begin(), p.buffers.end());
    }
    std::vector<ReplicaOutputs> outputs =
        runtime::Client::Get().Execute(*exe, args, devices, donated, std::move(held), RootDims(g), ExecuteTimeMetric());
    CountDonations(donated.size() * parts.size(), g.donated_to_updates * parts.size());
    return outputs;
  };
  return replication.rendezvous().Arrive(replica, g.hash, DescribeGraph(g), std::move(part), launch);
}

// Starts the graph of `tensors`, all pending on `device`. `all_pending`: the tensors are
// every pending tensor of the device (buffers may be donated). Returns the launch to
// complete for a replicated graph.
std::optional<Launch> StartGraph(int device, const std::vector<XlaTensorPtr>& tensors, bool all_pending) {
  if (tensors.empty()) return std::nullopt;
  runtime::trace::TraceScope span("XLAGraphExecutor::SyncTensorsGraph");
  Launch launch;
  launch.tensors = tensors;
  std::vector<Value> roots = CollectRoots(tensors, &launch.root_of);
  PostOrderGraph g = BuildGraph(roots);
  static metrics::Metric* graph_size = metrics::GetMetric("TensorsGraphSize", metrics::Unit::kCount);
  graph_size->AddSample(static_cast<double>(g.nodes.size()));
  if (span.active()) {
    // No graph id yet: the donations assigned at the launch change the graph's hash
    // (XLAGraphExecutor::Compile names the graph it compiles).
    span.AddArg("device", "xla:" + std::to_string(device));
    span.AddArg("ops", std::to_string(g.nodes.size()));
    span.AddArg("inputs", std::to_string(g.parameters.size()));
    span.AddArg("outputs", std::to_string(roots.size()));
  }
  if (!allow_execution) {
    throw std::runtime_error(
        "Unexpected execution happens inside the compiled function, exiting: torch_xla.compile(full_graph=True) "
        "traces its function as one graph, but the function needed a result on the host (.item(), .cpu(), "
        "a Python condition on a tensor, print) or synced; the pending graph has " +
        std::to_string(g.nodes.size()) + " ops");
  }
  last_sync_graphs.push_back(g.hash);
  if (DebugLevel() >= 1) {
    // The state's root, unless a user's tensor has the same value.
    std::vector<int> tensors_of_root(roots.size(), 0);
    for (int r : launch.root_of) ++tensors_of_root[r];
    g.rng_state_root.assign(roots.size(), false);
    for (std::size_t i = 0; i < tensors.size(); ++i)
      if (IsRngStateTensor(device, tensors[i].get()) && tensors_of_root[launch.root_of[i]] == 1)
        g.rng_state_root[launch.root_of[i]] = true;
  }
  g.roots = std::move(roots);
  g.updated_parameter.assign(g.roots.size(), -1);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    // Alive while a graph leaf holds it, which is the only case that can pair.
    runtime::BufferPtr updated = tensors[i]->updated_buffer().lock();
    auto it = updated ? g.parameter_of_buffer.find(updated.get()) : g.parameter_of_buffer.end();
    if (it != g.parameter_of_buffer.end() && g.updated_parameter[launch.root_of[i]] < 0)
      g.updated_parameter[launch.root_of[i]] = it->second;
  }
  const bool spmd = runtime::spmd::Enabled();
  hash_t spmd_structure = 0;
  if (spmd) {
    if (!g.collectives.empty())
      throw std::runtime_error("the graph has collective ops (" + g.collectives[0]->ToString() +
                               "), which SPMD programs do not take: in SPMD mode XLA's partitioner adds the "
                               "collectives the shardings need (torch_xla.distributed.spmd.mark_sharding)");
    spmd_structure = g.hash;
    AssignShardings(g, launch.tensors, launch.root_of, spmd_structure, /*propagate=*/true);
  }
  launch.replication = g.collectives.empty() ? nullptr : ReplicationOf(device);
  if (SavingGraphs()) {
    SaveGraph(g.hash, [&](const std::string& format) {
      if (format == "stablehlo") return Lower(g, launch.replication ? launch.replication->size() : 1);
      return format == "dot" ? GraphDot(g.nodes, g.roots) : GraphText(g.nodes, g.roots);
    });
  }
  if (spmd) {
    LaunchSpmd(g, launch.tensors, launch.root_of, spmd_structure, all_pending);
    return std::nullopt;
  }
  if (g.collectives.empty()) {
    LaunchSingle(device, g, launch.tensors, launch.root_of, all_pending);
    return std::nullopt;
  }
  if (!launch.replication) {
    throw std::runtime_error("the graph of xla:" + std::to_string(device) + " has collective ops (" +
                             g.collectives[0]->ToString() +
                             "), but xla:" + std::to_string(device) +
                             " is not a replica of a running replication: collectives run inside xmp.spawn, "
                             "torch_xla.launch or DataParallel");
  }
  launch.ticket = ArriveReplicated(*launch.replication, device, g, all_pending);
  return launch;
}

// Waits for a replicated launch; its tensors take their outputs.
void CompleteGraph(Launch& launch) {
  ReplicaOutputs outputs = launch.replication->rendezvous().Wait(launch.ticket);
  for (std::size_t i = 0; i < launch.tensors.size(); ++i) launch.tensors[i]->SetBuffer(outputs[launch.root_of[i]]);
}

// Runs the graphs of `pending` (device -> its tensors to sync), holding every device's
// sync lock: single-device graphs launch at once, replicated ones all arrive at their
// rendezvous before any waits, so one thread can drive every replica. The first error is
// rethrown once every started launch has completed or failed.
void SyncGraphs(std::map<int, std::vector<XlaTensorPtr>>& pending, bool all_pending) {
  // An op that runs its graph (item(), data-dependent shapes) is not tracing meanwhile.
  metrics::UntracedScope untraced;
  last_sync_graphs.clear();
  std::vector<std::unique_lock<std::mutex>> locks;
  {
    static metrics::Metric* lock_wait = metrics::GetMetric("DeviceLockWait");
    metrics::ScopedTimer timer(lock_wait);
    for (auto& [device, tensors] : pending) {
      std::mutex& mu = DeviceMutex(device);  // devices may share one: lock each once
      if (std::none_of(locks.begin(), locks.end(), [&](const auto& l) { return l.mutex() == &mu; }))
        locks.emplace_back(mu);
    }
  }
  std::exception_ptr first_error;
  std::vector<Launch> started;
  for (auto& [device, tensors] : pending) {
    // Another thread may have synced some of them meanwhile.
    if (!all_pending) {
      tensors.erase(std::remove_if(tensors.begin(), tensors.end(), [](const XlaTensorPtr& t) { return !t->is_pending(); }),
                    tensors.end());
    }
    try {
      std::vector<XlaTensorPtr> to_sync = all_pending ? PendingTensors(device) : tensors;
      std::optional<Launch> launch;
      try {
        launch = StartGraph(device, to_sync, all_pending);
      } catch (const ValueOfLoopBody&) {
        if (!all_pending) throw;
        // Tensors of a loop body that a failed trace left alive (its traceback holds
        // them) cannot be computed; a step runs the rest, and leaves them pending for
        // their own use to raise. Donation stays safe: the buffers their IR reads count
        // as referenced, and so are not donated.
        to_sync.erase(std::remove_if(to_sync.begin(), to_sync.end(),
                                     [](const XlaTensorPtr& t) {
                                       Value v = t->pending_ir();
                                       return v && ReadsLoopBody(v);
                                     }),
                      to_sync.end());
        launch = StartGraph(device, to_sync, all_pending);
      }
      if (launch) started.push_back(std::move(*launch));
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  for (Launch& launch : started) {
    try {
      CompleteGraph(launch);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace

void SyncDevices(const std::vector<int>& devices, bool wait) {
  DefaultSyncCause cause(kStepCause);
  std::map<int, std::vector<XlaTensorPtr>> pending;
  for (int device : devices) pending[device];
  SyncGraphs(pending, /*all_pending=*/true);
  if (wait) runtime::Client::Get().WaitAll();
}

void SyncDevice(int device, bool wait) { SyncDevices({device}, wait); }

void SyncAll(bool wait) { SyncDevices(DevicesWithPendingTensors(), wait); }

void SyncTensors(const std::vector<XlaTensorPtr>& tensors) {
  DefaultSyncCause cause(kValueReadCause);
  std::map<int, std::vector<XlaTensorPtr>> by_device;
  for (const XlaTensorPtr& t : tensors)
    if (t->is_pending()) by_device[t->device()].push_back(t);
  if (!by_device.empty()) SyncGraphs(by_device, /*all_pending=*/false);
}

namespace {

// The graph that computing these tensors would compile (in SPMD mode with its layouts,
// results XLA lays out unannotated), and its module.
std::pair<PostOrderGraph, std::string> ProgramOf(const std::vector<XlaTensorPtr>& tensors) {
  std::vector<Value> roots;
  for (const XlaTensorPtr& t : tensors) roots.push_back(t->GetIrValue());
  PostOrderGraph g = BuildGraph(roots);
  g.roots = roots;
  if (runtime::spmd::Enabled()) {
    std::vector<int> root_of(tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) root_of[i] = static_cast<int>(i);
    AssignShardings(g, tensors, root_of, g.hash, /*propagate=*/true);
  }
  int num_replicas = 1;
  if (!g.collectives.empty())
    num_replicas = static_cast<int>(ir::CollectiveAttrs::FromAttrs(g.collectives[0]->attrs()).num_replicas);
  std::string module = Lower(g, num_replicas);
  return {std::move(g), std::move(module)};
}

}  // namespace

std::string GetStableHlo(const std::vector<XlaTensorPtr>& tensors) { return ProgramOf(tensors).second; }

GraphProgram GetGraphProgram(const std::vector<XlaTensorPtr>& tensors) {
  auto [g, module] = ProgramOf(tensors);
  GraphProgram program;
  program.stablehlo = std::move(module);
  int device = tensors.empty() ? 0 : tensors[0]->device();
  for (const Node* p : g.parameters) {
    program.parameters.push_back(p->leaf_kind() == ir::LeafKind::kDeviceData
                                     ? XlaTensor::FromBuffer(p->buffer())
                                     : XlaTensor::FromIr(ir::Node::Scalar(p->scalar_value(), p->shape().type), device));
  }
  return program;
}

std::string GetIrText(const std::vector<XlaTensorPtr>& tensors) {
  std::vector<Value> roots;
  for (const XlaTensorPtr& t : tensors) roots.push_back(t->GetIrValue());
  PostOrderGraph g = BuildGraph(roots);
  return GraphText(g.nodes, roots);
}

std::size_t CachedComputationCount() { return Cache().size(); }

void SetAliasWithBufferDonorConfig(bool enabled) {
  AliasWithBufferDonorFlag().store(enabled, std::memory_order_relaxed);
}

bool GetAliasWithBufferDonorConfig() { return AliasWithBufferDonorConfig(); }

void SyncAsEagerOp(const std::vector<int>& devices) {
  eager_op_sync = true;
  try {
    SyncDevices(devices, /*wait=*/false);
  } catch (...) {
    eager_op_sync = false;
    throw;
  }
  eager_op_sync = false;
}

void SetAllowExecution(bool allow) { allow_execution = allow; }
bool AllowExecution() { return allow_execution; }

std::vector<uint64_t> LastSyncGraphHashes() { return last_sync_graphs; }

}  // namespace torch_xla::exec
