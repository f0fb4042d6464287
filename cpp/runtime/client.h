#pragma once
// The PJRT runtime: one process-wide client over a PJRT plugin loaded with
// dlopen through the PJRT C API. Nothing here knows about PyTorch or the IR.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/element_type.h"
#include "runtime/key_value_store.h"
#include "runtime/metrics.h"
#include "runtime/sharding.h"

struct PJRT_Api;
struct PJRT_Client;
struct PJRT_Buffer;
struct PJRT_Device;
struct PJRT_LoadedExecutable;

namespace torch_xla::runtime {

// Every failure of this layer: plugin not found or broken, PJRT errors, bad arguments.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Client;

namespace internal {
// The ExecuteTime sample of one launch, taken when its execution completes.
class ExecutionTiming;
// Waits (briefly) until the sample is recorded, so that a caller who saw the launch's
// results sees its metric too.
void WaitRecorded(const ExecutionTiming& timing);
}  // namespace internal

// A device buffer. Owns its PJRT_Buffer and destroys it on destruction.
//
// Or, in SPMD mode, a value laid out over every device of the mesh: one buffer per
// device (its shard, padded), the value's dimensions and its sharding, and no PJRT
// buffer of its own (pjrt() is null). Its device is 0, the device that stands for the mesh.
class Buffer {
 public:
  Buffer(PJRT_Buffer* buffer, ElementType type, std::vector<int64_t> dims, int device);
  static std::shared_ptr<Buffer> Sharded(std::vector<std::shared_ptr<Buffer>> shards, Sharding sharding,
                                         ElementType type, std::vector<int64_t> dims);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  PJRT_Buffer* pjrt() const { return buffer_; }
  bool is_sharded() const { return !shards_.empty(); }
  // The per-device shards of a sharded buffer, by device ordinal; empty otherwise.
  const std::vector<std::shared_ptr<Buffer>>& shards() const { return shards_; }
  // The layout of a sharded buffer (replicated for a plain one).
  const Sharding& sharding() const { return sharding_; }
  ElementType type() const { return type_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int device() const { return device_; }
  int64_t element_count() const;
  std::size_t byte_size() const;
  // Blocks until the buffer's contents are ready (its producing execution finished).
  void Await() const;
  // Whether PJRT has deleted the buffer (donated to an execution, which took it over).
  bool IsDeleted() const;

  // The user allows an execution to take the buffer over (donation) even while tensors
  // still refer to it (torch_xla._XLAC._set_buffer_donation); they lose their value.
  void set_donation_requested(bool requested) { donation_requested_.store(requested, std::memory_order_relaxed); }
  bool donation_requested() const { return donation_requested_.load(std::memory_order_relaxed); }

  // The launch (Client::Execute's count) whose output this is; 0 for other buffers.
  void set_defining_launch(uint64_t launch) { defining_launch_ = launch; }
  // The timing of that launch: a read of the buffer returns once its sample is taken.
  void set_execution_timing(std::shared_ptr<const internal::ExecutionTiming> timing) {
    execution_timing_ = std::move(timing);
  }
  void AwaitExecutionTiming() const {
    if (execution_timing_) internal::WaitRecorded(*execution_timing_);
  }

  // The references to `buffer` other than those the runtime keeps for executions that
  // read it (see Client::Execute's `release_after`). Whether an execution still holds
  // its inputs depends on timing; a decision taken on this count does not. An update
  // racing with the count can only make it larger, never smaller.
  static long ReferencesBesidesExecutions(const std::shared_ptr<Buffer>& buffer);

 private:
  friend class ExecutionHold;
  // Counts a hold of an execution (+1, after its reference exists) or its end (-1,
  // before its reference goes).
  void CountExecutionHold(int delta);

  // Low 32 bits: how many execution holds reference this buffer. High 32 bits: a change
  // sequence, so a reader can tell that no hold came or went while it counted.
  std::atomic<uint64_t> execution_holds_{0};
  uint64_t defining_launch_ = 0;
  std::atomic<bool> donation_requested_{false};
  std::shared_ptr<const internal::ExecutionTiming> execution_timing_;
  std::vector<std::shared_ptr<Buffer>> shards_;
  Sharding sharding_;
  PJRT_Buffer* buffer_;
  ElementType type_;
  std::vector<int64_t> dims_;
  int device_;
};
using BufferPtr = std::shared_ptr<Buffer>;

// A compiled, loaded executable.
class Executable {
 public:
  // `memory_needed`: bytes one replica's execution allocates (outputs and temporaries
  // not aliased to its arguments), 0 when the plugin does not say.
  Executable(PJRT_LoadedExecutable* exe, int num_replicas, std::size_t num_outputs, int64_t memory_needed = 0);
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;
  PJRT_LoadedExecutable* pjrt() const { return exe_; }
  int num_replicas() const { return num_replicas_; }
  std::size_t num_outputs() const { return num_outputs_; }
  int64_t memory_needed() const { return memory_needed_; }
  // SPMD: the layout of each output, as compiled (Client::OutputShardings); null until read.
  std::shared_ptr<const std::vector<Sharding>> output_shardings() const {
    std::lock_guard<std::mutex> lock(mu_);
    return output_shardings_;
  }
  void set_output_shardings(std::vector<Sharding> shardings) {
    std::lock_guard<std::mutex> lock(mu_);
    output_shardings_ = std::make_shared<const std::vector<Sharding>>(std::move(shardings));
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const std::vector<Sharding>> output_shardings_;
  PJRT_LoadedExecutable* exe_;
  int num_replicas_;
  std::size_t num_outputs_;
  int64_t memory_needed_;
};
using ExecutablePtr = std::shared_ptr<Executable>;

struct MemoryInfo {
  int64_t bytes_in_use = 0;
  int64_t bytes_limit = 0;
  int64_t peak_bytes_in_use = -1;  // -1: the plugin does not report it
};

struct ClientOptions {
  // "CPU", "CUDA", "TPU" (PJRT_DEVICE). Empty: read PJRT_DEVICE, default "CPU".
  std::string device_kind;
  // Explicit plugin path. Empty: PJRT_PLUGIN_PATH, else the default for the kind.
  std::string plugin_path;
  // CPU device count. 0: $CPU_NUM_DEVICES, else 1.
  int cpu_device_count = 0;
  // A run of several processes, for plugins whose runtime spans processes (CUDA): this
  // process's index among num_nodes, the local devices it uses (empty: all), and the
  // store their runtimes meet in. Passed as the create options node_id, num_nodes and
  // visible_devices and the key-value callbacks; the CPU plugin takes none of them (its
  // collectives stay in the process: see distributed/cross_process.h).
  int node_id = 0;
  int num_nodes = 1;
  std::vector<int64_t> visible_devices;
  std::shared_ptr<KeyValueStore> kv_store;
};

class Client {
 public:
  // The process-wide client, created on first use with the options last given to
  // Configure() (or from the environment). Throws RuntimeError when the plugin cannot
  // be found or loaded, saying what was looked for and where.
  static Client& Get();
  // Sets the options for the client that Get() will create; throws if it exists already.
  static void Configure(const ClientOptions& options);
  // The plugin path a kind maps to when nothing overrides it; may be registered by the
  // Python package, which knows where wheels put plugins.
  static void SetDefaultPluginPath(const std::string& device_kind, const std::string& path);
  static bool IsCreated();
  // Every launch numbered up to this one (Client::Execute's count, unique in the process)
  // is known to have completed: all were awaited or seen finished. 0 when none is known.
  // Lets a buffer dropped after its launch skip asking PJRT whether it is defined yet.
  static uint64_t LaunchesCompletedThrough();
  // Destroys the client (after WaitAll) and unloads nothing (plugins are never dlclose'd).
  // Idempotent. Get() throws afterwards; buffers and executables still alive then leak their
  // PJRT handles instead of touching the destroyed client.
  static void Shutdown();

  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const std::string& device_kind() const { return device_kind_; }      // "CPU", "CUDA", "TPU"
  // Whether lowering choices are made for the CPU: for the device's own kind unless
  // $XLA_LOWERING_DEVICE_KIND names another. The CPU device lowered as CUDA takes no host
  // calls and no CPU-only lowerings, so its graphs are those another device runs.
  // In SPMD mode the answer is no as well: XLA's partitioner cannot split a host call, so
  // the graphs take XLA's own lowerings, which it can.
  bool LowersForCpu() const { return lowering_kind_ == "CPU" && !spmd::Enabled(); }
  const std::string& platform_name() const { return platform_name_; }  // as PJRT reports it
  const std::string& plugin_path() const { return plugin_path_; }
  int device_count() const { return static_cast<int>(devices_.size()); }
  const PJRT_Api* api() const { return api_; }

  // Copies host data to a new buffer on `device` (blocking until the host memory may be reused).
  // PJRT holds it in its device form (runtime/device_dims.h); the Buffer has `dims`.
  BufferPtr TransferToDevice(const void* data, ElementType type, const std::vector<int64_t>& dims,
                             int device);
  // SPMD: a sharded buffer of the value `data` holds (dims), one shard per device of the
  // client, laid out by `sharding` (a replicated sharding copies the whole value to each).
  BufferPtr TransferShardedToDevice(const void* data, ElementType type, const std::vector<int64_t>& dims,
                                    const Sharding& sharding);
  // Copies a buffer to host memory; blocks. dst_bytes must equal buffer.byte_size(). A
  // sharded buffer's shards are read and assembled.
  void TransferFromDevice(const Buffer& buffer, void* dst, std::size_t dst_bytes);
  // A buffer on `device` over memory the caller owns (another framework's tensor, shared
  // through DLPack), without a copy: PJRT_Client_CreateViewOfDeviceBuffer. `data` holds the
  // elements of `dims` densely in row-major order; PJRT calls `on_delete(data, arg)` once
  // it no longer uses the memory. Throws RuntimeError where the plugin cannot make such a
  // view (runtime/external_memory.cpp).
  BufferPtr ViewOfMemory(void* data, ElementType type, const std::vector<int64_t>& dims, int device,
                         void (*on_delete)(void* data, void* arg), void* arg);

  // Compiles a StableHLO module (MLIR text). The error of a failed compile carries the
  // plugin's message. num_replicas > 1 compiles for replicated execution, replica r on
  // device replica_devices[r] (device ordinals; default: replica r on device r).
  ExecutablePtr Compile(const std::string& mlir_module, int num_replicas = 1,
                        const std::vector<int>& replica_devices = {});
  // Compiles an SPMD program for devices 0..num_partitions-1 (partition p on device p):
  // XLA's partitioner splits it by the shardings its arguments, results and values are
  // annotated with. The executable launches on all of them at once (num_replicas() is
  // the partition count, Execute's argument lists one per device).
  // propagate_to_output[i]: XLA chooses output i's layout (the module leaves it open).
  ExecutablePtr CompileSpmd(const std::string& mlir_module, int num_partitions,
                            const std::vector<bool>& propagate_to_output = {});
  // SPMD: the layout XLA gave each output of an executable compiled by CompileSpmd (or
  // loaded from one), read once from its optimized program. Throws RuntimeError when the
  // plugin does not record them in a form this runtime reads.
  std::vector<Sharding> OutputShardings(const Executable& executable);

  // The executable in the plugin's serialized form, which DeserializeExecutable loads
  // again (in this or another process with the same plugin). Throws RuntimeError when
  // the plugin cannot serialize.
  std::string SerializeExecutable(const Executable& executable);
  ExecutablePtr DeserializeExecutable(const std::string& bytes, int num_replicas);
  // The plugin's identity for caches of its executables: kind, platform name and
  // version, and the plugin file (path, size, modification time).
  const std::string& plugin_identity() const { return plugin_identity_; }

  // Enqueues an execution; returns the output buffers per replica at once (they become
  // ready when the execution finishes). An execution whose allocations exceed the
  // devices' free memory is refused with a RuntimeError that says how much it needs (the
  // CPU device's memory is the host's: the kernel would otherwise kill the process). arguments[r] are the parameters of replica r,
  // which runs on devices[r]. Inputs listed in `donated` (argument indices) may be
  // consumed: their buffers must not be used afterwards. `release_after`: buffers the
  // caller is done with, held here until the execution has finished (pruned at a later
  // Execute or WaitAll). Destroying a buffer that a running execution reads blocks until
  // the execution is done, so a caller that drops its inputs right after the launch
  // would wait for every execution; handing them over keeps the launch asynchronous.
  // `output_dims`, one per output when given, are the tensors' dimensions of outputs the
  // executable returns in their device form (runtime/device_dims.h); the Buffers carry
  // them. Without them each Buffer has the dimensions PJRT reports. The launch's time
  // is a sample of `timing_metric` (default ExecuteTime).
  std::vector<std::vector<BufferPtr>> Execute(const Executable& executable,
                                               const std::vector<std::vector<Buffer*>>& arguments,
                                               const std::vector<int>& devices,
                                               const std::vector<int64_t>& donated = {},
                                               std::vector<BufferPtr> release_after = {},
                                               const std::vector<std::vector<int64_t>>& output_dims = {},
                                               metrics::Metric* timing_metric = nullptr);

  MemoryInfo GetMemoryInfo(int device);
  // Blocks until every execution enqueued so far has finished.
  void WaitAll();

 private:
  explicit Client(const ClientOptions& options);
  PJRT_Device* device(int index) const;
  ExecutablePtr CompileWithOptions(const std::string& mlir_module, const std::string& options, int num_launches);
  // Throws RuntimeError when an execution of `executable` on `devices` would allocate
  // more than their free memory.
  void CheckMemoryFor(const Executable& executable, const std::vector<int>& devices);
  // A device's memory limit (GetMemoryInfo's bytes_limit, 0 where unknown), read once:
  // the statistics cost a read of /proc/meminfo on the CPU device, and every launch asks.
  int64_t MemoryLimit(int device_index);
  // Hands the plugin's resident code pages back to the page cache (library_pages.h) once
  // it has compiled or loaded an executable, unless XLA_RELEASE_PLUGIN_CODE is 0: the
  // steps that follow run little of the compiler they hold.
  void ReleasePluginCode();

  const PJRT_Api* api_ = nullptr;
  PJRT_Client* client_ = nullptr;
  std::vector<PJRT_Device*> devices_;
  std::vector<int64_t> device_ids_;  // PJRT's global id of each device
  std::shared_ptr<KeyValueStore> kv_store_;  // the plugin's callbacks reach it while the client lives
  std::string device_kind_;
  std::string lowering_kind_;
  std::string platform_name_;
  std::string plugin_path_;
  void* plugin_handle_ = nullptr;  // the plugin library's (dlopen), for its memory's hooks
  std::string plugin_identity_;
  struct Pending;  // completion events of enqueued executions, for WaitAll
  std::unique_ptr<Pending> pending_;
  std::mutex memory_limits_mutex_;
  std::vector<int64_t> memory_limits_;  // per device index; -1: not read yet
};

}  // namespace torch_xla::runtime
