#include "runtime/client.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "pjrt_c_api.h"
#include "runtime/compile_options.h"
#include "runtime/compiled_memory.h"
#include "runtime/hlo_module_sharding.h"
#include "runtime/plugin_xla_flags.h"
#include "runtime/device_dims.h"
#include "runtime/dims_text.h"
#include "runtime/host_block_cache.h"
#include "runtime/host_buffer_pool.h"
#include "runtime/host_memory.h"
#include "runtime/library_pages.h"
#include "runtime/live_api.h"
#include "runtime/metrics.h"
#include "runtime/pjrt_call.h"
#include "runtime/pjrt_element_type.h"
#include "runtime/pjrt_event.h"
#include "runtime/plugin_discovery.h"
#include "runtime/plugin_loader.h"
#include "runtime/trace_recorder.h"

namespace torch_xla::runtime {

using internal::AwaitAndDestroyEvent;
using internal::ConsumeError;

namespace {

// Launches are numbered across clients, so that a buffer's number stays comparable with
// the mark below after a client is replaced.
std::atomic<uint64_t> launch_count{0};
std::atomic<uint64_t> launches_completed_through{0};

void NoteLaunchesCompletedThrough(uint64_t launch) {
  uint64_t known = launches_completed_through.load(std::memory_order_relaxed);
  while (known < launch && !launches_completed_through.compare_exchange_weak(known, launch, std::memory_order_release,
                                                                             std::memory_order_relaxed)) {
  }
}

}  // namespace

uint64_t Client::LaunchesCompletedThrough() { return launches_completed_through.load(std::memory_order_acquire); }

// The buffers an enqueued execution must outlive, counted on each buffer as held by an
// execution (Buffer::ReferencesBesidesExecutions) for as long as they are kept here.
class ExecutionHold {
 public:
  explicit ExecutionHold(std::vector<BufferPtr> buffers) : buffers_(std::move(buffers)) {
    for (const BufferPtr& b : buffers_) b->CountExecutionHold(+1);
  }
  // Uncounts each buffer before the member vector drops its reference.
  ~ExecutionHold() {
    for (const BufferPtr& b : buffers_) b->CountExecutionHold(-1);
  }
  ExecutionHold(const ExecutionHold&) = delete;
  ExecutionHold& operator=(const ExecutionHold&) = delete;

 private:
  std::vector<BufferPtr> buffers_;
};

// Completion events of enqueued executions, each with the buffers the execution must
// outlive (see Execute's `release_after`). Finished ones are pruned whenever events are
// added so the list stays short; an error seen while pruning is kept for WaitAll to report.
namespace internal {

// "ExecuteTime": from the launch to the completion of its last replica, recorded by the
// completion callbacks of the launch's events (the launch itself returns at once).
// Whoever awaits a launch also waits for its sample (WaitRecorded), so the metric is
// complete once WaitAll returns.
class ExecutionTiming {
 public:
  ExecutionTiming(const PJRT_Api* api, int events, metrics::Metric* metric)
      : api_(api), metric_(metric), remaining_(events) {}

  static std::shared_ptr<ExecutionTiming> Start(const PJRT_Api* api, const std::vector<PJRT_Event*>& events,
                                                std::chrono::steady_clock::time_point start, metrics::Metric* metric) {
    auto timing = std::make_shared<ExecutionTiming>(api, static_cast<int>(events.size()), metric);
    timing->start_ = start;
    for (PJRT_Event* event : events) {
      auto args = PJRT_ARGS(PJRT_Event_OnReady_Args);
      args.event = event;
      args.callback = &ExecutionTiming::OnReady;
      args.user_arg = new std::shared_ptr<ExecutionTiming>(timing);  // the callback's reference
      if (PJRT_Error* error = api->PJRT_Event_OnReady(&args)) {
        // No callback will come for this event: count it as done here.
        OnReady(error, args.user_arg);
      }
    }
    return timing;
  }

  // The callback follows the event's completion within microseconds; the bound only
  // keeps a plugin that never calls back from holding up WaitAll.
  void WaitRecorded() const {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!recorded_.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < give_up)
      std::this_thread::yield();
  }

 private:
  static void OnReady(PJRT_Error* error, void* arg) {
    std::unique_ptr<std::shared_ptr<ExecutionTiming>> reference(static_cast<std::shared_ptr<ExecutionTiming>*>(arg));
    ExecutionTiming& timing = **reference;
    if (error != nullptr) {
      auto destroy = PJRT_ARGS(PJRT_Error_Destroy_Args);
      destroy.error = error;
      timing.api_->PJRT_Error_Destroy(&destroy);
    }
    if (timing.remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    timing.metric_->AddSample(
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - timing.start_).count());
    timing.recorded_.store(true, std::memory_order_release);
  }

  const PJRT_Api* api_;
  metrics::Metric* metric_;  // ExecuteTime, or the caller's (eager mode's EagerOpExecuteTime)
  std::atomic<int> remaining_;
  std::atomic<bool> recorded_{false};
  std::chrono::steady_clock::time_point start_;
};

void WaitRecorded(const ExecutionTiming& timing) { timing.WaitRecorded(); }

}  // namespace internal

using internal::ExecutionTiming;

struct Client::Pending {
  using Held = std::shared_ptr<ExecutionHold>;

  // Blocks until `devices` have no unfinished execution, awaiting them oldest first.
  void AwaitDevices(const PJRT_Api* api, const std::vector<int>& devices) {
    for (;;) {
      Entry oldest;
      std::vector<Entry> released;  // destroyed after the lock is given up
      {
        std::lock_guard<std::mutex> lock(mutex);
        released = Prune(api);
        auto it = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) {
          return std::find(devices.begin(), devices.end(), e.device) != devices.end();
        });
        if (it == entries.end()) return;
        static metrics::Counter* waits = metrics::GetCounter("ExecuteAwaitedEarlier");
        waits->Add();
        oldest = std::move(*it);
        entries.erase(it);
      }
      // Outside the lock: other threads may launch on other devices meanwhile.
      std::string error;
      Await(api, oldest.event, error);
      if (oldest.timing && oldest.last_of_launch) oldest.timing->WaitRecorded();
      // The launch's outputs dropped while it ran come back to the buffer pool just
      // after its completion; the launch about to be enqueued would otherwise map its
      // own beside them.
      if (oldest.last_of_launch) {
        if (internal::HostBufferPool* pool = internal::InstalledHostBufferPool()) {
          pool->AwaitExpectedReleases(oldest.launch, internal::HostBufferPool::kReleaseWait);
        }
      }
      if (!error.empty()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (first_error.empty()) first_error = error;
      }
    }
  }

  // Numbers the launch (Client::Execute's count) and returns its number; its last event
  // is marked, which AwaitDevices, awaiting events oldest first, reaches once every
  // replica finished. Numbered under the lock, so entries are added in the order of
  // their numbers.
  uint64_t Add(const PJRT_Api* api, const std::vector<PJRT_Event*>& added, const std::vector<int>& devices,
               const Held& held, const std::shared_ptr<ExecutionTiming>& timing) {
    std::vector<Entry> released;  // destroyed after the lock is given up
    std::lock_guard<std::mutex> lock(mutex);
    released = Prune(api);
    const uint64_t launch = launch_count.fetch_add(1, std::memory_order_relaxed) + 1;
    for (std::size_t i = 0; i < added.size(); ++i) {
      entries.push_back({added[i], devices[i], held, launch, i + 1 == added.size(), timing});
    }
    last_added = launch;
    return launch;
  }

  // Awaits every event added so far; throws the first error among them or seen earlier.
  void AwaitAll(const PJRT_Api* api) {
    std::vector<Entry> taken;
    std::string error;
    uint64_t through = 0;
    {
      std::lock_guard<std::mutex> lock(mutex);
      taken.swap(entries);
      error.swap(first_error);
      through = last_added;
    }
    for (const Entry& entry : taken) {
      Await(api, entry.event, error);
      if (entry.timing) entry.timing->WaitRecorded();
    }
    NoteLaunchesCompletedThrough(through);
    if (!error.empty()) throw RuntimeError("an execution failed: " + error);
  }

 private:
  struct Entry {
    PJRT_Event* event = nullptr;
    int device = 0;
    Held held;
    uint64_t launch = 0;
    bool last_of_launch = false;
    std::shared_ptr<ExecutionTiming> timing;
  };

  // Takes the finished entries out of the list (mutex held) and returns them, for their
  // buffers to be released once the lock is given up.
  std::vector<Entry> Prune(const PJRT_Api* api) {
    auto finished = std::partition(entries.begin(), entries.end(), [&](const Entry& entry) {
      // Where PJRT cannot say, kept: WaitAll will await it.
      return !internal::EventIsReady(api, entry.event).value_or(false);
    });
    std::vector<Entry> released;
    for (auto it = finished; it != entries.end(); ++it) {
      Await(api, it->event, first_error);
      it->event = nullptr;
      released.push_back(std::move(*it));
    }
    entries.erase(finished, entries.end());
    // Launches are added in order of their numbers: with none left, all have completed.
    if (entries.empty()) NoteLaunchesCompletedThrough(last_added);
    return released;
  }

  static void Await(const PJRT_Api* api, PJRT_Event* event, std::string& first_error) {
    try {
      AwaitAndDestroyEvent(api, event);
    } catch (const RuntimeError& error) {
      if (first_error.empty()) first_error = error.what();
    }
  }

  std::mutex mutex;
  std::vector<Entry> entries;
  std::string first_error;
  uint64_t last_added = 0;  // the highest launch number added
};

namespace {

// Without $CPU_NUM_DEVICES: one CPU device, as in torch_xla. Libraries written for
// torch_xla take every device the runtime lists as a replica to run (Accelerate calls
// xm.set_replication with all of them from one thread), and replication over the host's
// devices is asked for explicitly (CPU_NUM_DEVICES=4, xmp.spawn).
constexpr int kDefaultCpuDeviceCount = 1;

// Process-wide client state. Deliberately leaked: tearing the client down from a static
// destructor at exit could race the plugin's own teardown; Shutdown() is the explicit way.
struct Global {
  std::mutex mutex;
  ClientOptions options;
  std::unique_ptr<Client> client;
  std::atomic<Client*> instance{nullptr};  // lock-free fast path of Get()
  bool shut_down = false;
};

Global& GetGlobal() {
  static Global* global = new Global;
  return *global;
}

// Appends a create option of `type` named `name` (a literal: the option points to it)
// holding one value; the caller sets the value.
PJRT_NamedValue& AddNamedValue(std::vector<PJRT_NamedValue>& options, std::string_view name,
                               PJRT_NamedValue_Type type) {
  PJRT_NamedValue option = PJRT_ARGS(PJRT_NamedValue);
  option.name = name.data();
  option.name_size = name.size();
  option.type = type;
  option.value_size = 1;
  return options.emplace_back(option);
}

// The CUDA plugin's allocator, as torch_xla's variables choose it:
// PJRT_ALLOCATOR_PREALLOCATE (default 1: the plugin takes its share of the GPU's memory
// at start), PJRT_ALLOCATOR_FRACTION (that share, default the plugin's 0.75) and
// PJRT_ALLOCATOR_CUDA_ASYNC (1: CUDA's stream-ordered allocator). Processes that share a
// GPU with each other or with PyTorch's CUDA turn preallocation off. `allocator` holds
// the allocator's name for as long as the options are used.
void AddCudaAllocatorOptions(std::vector<PJRT_NamedValue>& options, std::string& allocator) {
  auto flag = [](const char* name) -> std::optional<bool> {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    const std::string text = value;
    if (text == "1" || text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "0" || text == "false" || text == "False" || text == "FALSE") return false;
    throw RuntimeError(std::string("$") + name + " must be 1 or 0 (true or false), got '" + text + "'");
  };
  if (std::optional<bool> preallocate = flag("PJRT_ALLOCATOR_PREALLOCATE"))
    AddNamedValue(options, "preallocate", PJRT_NamedValue_kBool).bool_value = *preallocate;
  if (const char* fraction = std::getenv("PJRT_ALLOCATOR_FRACTION"); fraction != nullptr && *fraction != '\0') {
    char* end = nullptr;
    const float value = std::strtof(fraction, &end);
    if (end == fraction || *end != '\0' || !(value > 0.0f && value <= 1.0f))
      throw RuntimeError(std::string("$PJRT_ALLOCATOR_FRACTION must be a number in (0, 1], got '") + fraction + "'");
    AddNamedValue(options, "memory_fraction", PJRT_NamedValue_kFloat).float_value = value;
  }
  if (flag("PJRT_ALLOCATOR_CUDA_ASYNC").value_or(false)) {
    allocator = "cuda_async";
    PJRT_NamedValue& option = AddNamedValue(options, "allocator", PJRT_NamedValue_kString);
    option.string_value = allocator.data();
    option.value_size = allocator.size();
  }
}

int ResolveCpuDeviceCount(const ClientOptions& options) {
  if (options.cpu_device_count < 0) {
    throw RuntimeError("ClientOptions.cpu_device_count must be positive, got " +
                       std::to_string(options.cpu_device_count));
  }
  if (options.cpu_device_count > 0) return options.cpu_device_count;
  const char* env = std::getenv("CPU_NUM_DEVICES");
  if (env == nullptr || *env == '\0') return kDefaultCpuDeviceCount;
  char* end = nullptr;
  long count = std::strtol(env, &end, 10);
  if (*end != '\0' || count <= 0 || count > 1 << 16) {
    throw RuntimeError(std::string("CPU_NUM_DEVICES must be a positive integer, got '") + env +
                       "'");
  }
  return static_cast<int>(count);
}

// The CPU plugin runs a graph's collectives on the threads of its intra-op pool (the
// continuation of the parallel product before them), where they block until every
// device's part arrives; the parts still computing need threads of the same pool. With
// fewer threads than devices + 1 (four devices on two cores: two threads), the parts of
// an SPMD or replicated backward waited for each other until XLA ended the process. The
// pool's size is the plugin's PJRT_NPROC (else the cores): raised to devices + 1 where the
// user did not set it. More threads cost single-device work nothing (one device: unset).
void EnsureIntraOpThreadsForCollectives(int devices) {
  if (devices < 2 || std::getenv("PJRT_NPROC") != nullptr || std::getenv("NPROC") != nullptr) return;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores > devices) return;
  setenv("PJRT_NPROC", std::to_string(devices + 1).c_str(), /*overwrite=*/0);
}

void DestroyClientHandle(const PJRT_Api* api, PJRT_Client* client) {
  auto args = PJRT_ARGS(PJRT_Client_Destroy_Args);
  args.client = client;
  if (PJRT_Error* error = api->PJRT_Client_Destroy(&args)) ConsumeError(api, error);
}

void DestroyLoadedExecutable(const PJRT_Api* api, PJRT_LoadedExecutable* exe) {
  auto args = PJRT_ARGS(PJRT_LoadedExecutable_Destroy_Args);
  args.executable = exe;
  if (PJRT_Error* error = api->PJRT_LoadedExecutable_Destroy(&args)) ConsumeError(api, error);
}

void DestroyRawBuffer(const PJRT_Api* api, PJRT_Buffer* buffer) {
  auto args = PJRT_ARGS(PJRT_Buffer_Destroy_Args);
  args.buffer = buffer;
  if (PJRT_Error* error = api->PJRT_Buffer_Destroy(&args)) ConsumeError(api, error);
}

// A loaded executable as an Executable: its number of outputs and the memory one
// replica's execution allocates, from PJRT. Does not take ownership of `loaded` if it
// throws.
ExecutablePtr Describe(const PJRT_Api* api, PJRT_LoadedExecutable* loaded, int num_replicas) {
  auto get_args = PJRT_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get_args.loaded_executable = loaded;
  PJRT_CALL(api, PJRT_LoadedExecutable_GetExecutable, get_args);
  auto outputs_args = PJRT_ARGS(PJRT_Executable_NumOutputs_Args);
  outputs_args.executable = get_args.executable;
  PJRT_Error* error = api->PJRT_Executable_NumOutputs(&outputs_args);
  int64_t memory_needed = 0;
  // An optional entry point: a plugin that lacks it or fails it just says nothing.
  if (std::optional<CompiledMemoryStats> stats = ReadCompiledMemoryStats(api, get_args.executable)) {
    memory_needed = std::max<int64_t>(0, stats->output_bytes + stats->temp_bytes - stats->alias_bytes);
    if (internal::HostBlockCache* blocks = internal::InstalledHostBlockCache(); blocks != nullptr) {
      blocks->NoteTemporariesSize(static_cast<std::size_t>(stats->temp_bytes));
    }
  }
  auto destroy_args = PJRT_ARGS(PJRT_Executable_Destroy_Args);
  destroy_args.executable = get_args.executable;
  if (PJRT_Error* destroy_error = api->PJRT_Executable_Destroy(&destroy_args)) {
    ConsumeError(api, destroy_error);
  }
  internal::CheckPjrt(api, error, "PJRT_Executable_NumOutputs");
  return std::make_shared<Executable>(loaded, num_replicas, outputs_args.num_outputs, memory_needed);
}

// Wraps an execution output, reading its element type and shape from PJRT; `dims`, when
// given, are the tensor's dimensions of an output that PJRT holds in its device form
// (runtime/device_dims.h). Does not take ownership of `raw` if it throws.
BufferPtr AdoptOutput(const PJRT_Api* api, PJRT_Buffer* raw, int device, const std::vector<int64_t>* dims_given) {
  auto type_args = PJRT_ARGS(PJRT_Buffer_ElementType_Args);
  type_args.buffer = raw;
  PJRT_CALL(api, PJRT_Buffer_ElementType, type_args);
  ElementType type = internal::FromPjrtType(type_args.type);
  auto dims_args = PJRT_ARGS(PJRT_Buffer_Dimensions_Args);
  dims_args.buffer = raw;
  PJRT_CALL(api, PJRT_Buffer_Dimensions, dims_args);
  std::vector<int64_t> dims(dims_args.dims, dims_args.dims + dims_args.num_dims);
  if (dims_given != nullptr) {
    if (DeviceDims(type, *dims_given) != dims) {
      throw RuntimeError("Execute: an output of device dims " + DimsToString(dims) + " cannot hold dims " +
                         DimsToString(*dims_given));
    }
    dims = *dims_given;
  }
  return std::make_shared<Buffer>(raw, type, std::move(dims), device);
}

}  // namespace

// ---- process-wide instance -------------------------------------------------------------

Client& Client::Get() {
  Global& global = GetGlobal();
  if (Client* client = global.instance.load(std::memory_order_acquire)) return *client;
  std::lock_guard<std::mutex> lock(global.mutex);
  if (global.client == nullptr) {
    if (global.shut_down) throw RuntimeError("the PJRT client was shut down and cannot be reused");
    global.client.reset(new Client(global.options));
    internal::SetLiveApi(global.client->api_);
    global.instance.store(global.client.get(), std::memory_order_release);
  }
  return *global.client;
}

void Client::Configure(const ClientOptions& options) {
  Global& global = GetGlobal();
  std::lock_guard<std::mutex> lock(global.mutex);
  if (global.client != nullptr) {
    throw RuntimeError("Client::Configure: the PJRT client exists already (device kind " +
                       global.client->device_kind() + ")");
  }
  global.options = options;
}

void Client::SetDefaultPluginPath(const std::string& device_kind, const std::string& path) {
  internal::RegisterDefaultPluginPath(device_kind, path);
}

bool Client::IsCreated() { return GetGlobal().instance.load(std::memory_order_acquire) != nullptr; }

void Client::Shutdown() {
  Global& global = GetGlobal();
  std::lock_guard<std::mutex> lock(global.mutex);
  global.shut_down = true;
  if (global.client == nullptr) return;
  global.instance.store(nullptr, std::memory_order_release);
  internal::SetLiveApi(nullptr);
  global.client.reset();
}

// ---- construction ----------------------------------------------------------------------

Client::Client(const ClientOptions& options) : pending_(std::make_unique<Pending>()) {
  internal::PluginChoice choice = internal::ResolvePlugin(options);
  device_kind_ = choice.device_kind;
  lowering_kind_ = choice.lowering_kind;
  plugin_path_ = choice.path;
  internal::AddDefaultXlaFlags(device_kind_);
  try {
    api_ = LoadPjrtPlugin(choice.path);
  } catch (const RuntimeError& error) {
    throw RuntimeError("cannot use the PJRT plugin for device kind " + device_kind_ + " from " +
                       choice.source + ": " + error.what() + " (looked at: " + choice.searched +
                       ")");
  }

  // A handle of the library LoadPjrtPlugin loaded; plugins are never unloaded, so it is
  // kept and never closed.
  plugin_handle_ = dlopen(choice.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (device_kind_ == "CPU" && plugin_handle_ != nullptr) {
    // The CPU plugin's device memory is host memory from malloc: give its large buffers
    // a cache (host_block_cache.h) before its threads start.
    internal::InstallHostBlockCache(plugin_handle_);
  }

  auto create_args = PJRT_ARGS(PJRT_Client_Create_Args);
  std::vector<PJRT_NamedValue> create_options;
  auto add_int = [&create_options](std::string_view name, int64_t value) {
    AddNamedValue(create_options, name, PJRT_NamedValue_kInt64).int64_value = value;
  };
  // Kept alive until PJRT_Client_Create returns: the named values point into it.
  std::string allocator;
  if (device_kind_ == "CPU") {
    const int devices = ResolveCpuDeviceCount(options);
    add_int("cpu_device_count", devices);
    EnsureIntraOpThreadsForCollectives(devices);
  } else if (device_kind_ == "CUDA") {
    AddCudaAllocatorOptions(create_options, allocator);
  }
  if (device_kind_ != "CPU" && options.num_nodes > 1) {
    add_int("node_id", options.node_id);
    add_int("num_nodes", options.num_nodes);
    if (!options.visible_devices.empty()) {
      PJRT_NamedValue& visible = AddNamedValue(create_options, "visible_devices", PJRT_NamedValue_kInt64List);
      visible.int64_array_value = options.visible_devices.data();
      visible.value_size = options.visible_devices.size();
    }
    if (options.kv_store) {
      kv_store_ = options.kv_store;
      create_args.kv_get_callback = internal::KeyValueGet;
      create_args.kv_get_user_arg = kv_store_.get();
      create_args.kv_put_callback = internal::KeyValuePut;
      create_args.kv_put_user_arg = kv_store_.get();
      create_args.kv_try_get_callback = internal::KeyValueTryGet;
      create_args.kv_try_get_user_arg = kv_store_.get();
    }
  }
  create_args.create_options = create_options.data();
  create_args.num_options = create_options.size();
  PJRT_CALL(api_, PJRT_Client_Create, create_args);
  client_ = create_args.client;

  // The destructor does not run for a throwing constructor, so release the client here.
  try {
    auto name_args = PJRT_ARGS(PJRT_Client_PlatformName_Args);
    name_args.client = client_;
    PJRT_CALL(api_, PJRT_Client_PlatformName, name_args);
    platform_name_.assign(name_args.platform_name, name_args.platform_name_size);
    auto version_args = PJRT_ARGS(PJRT_Client_PlatformVersion_Args);
    version_args.client = client_;
    PJRT_CALL(api_, PJRT_Client_PlatformVersion, version_args);
    struct stat plugin_file {};
    stat(plugin_path_.c_str(), &plugin_file);
    plugin_identity_ = device_kind_ + "|" + platform_name_ + "|" +
                       std::string(version_args.platform_version, version_args.platform_version_size) + "|" +
                       plugin_path_ + "|" + std::to_string(plugin_file.st_size) + "|" +
                       std::to_string(plugin_file.st_mtime);

    auto devices_args = PJRT_ARGS(PJRT_Client_AddressableDevices_Args);
    devices_args.client = client_;
    PJRT_CALL(api_, PJRT_Client_AddressableDevices, devices_args);
    devices_.assign(devices_args.addressable_devices,
                    devices_args.addressable_devices + devices_args.num_addressable_devices);
    if (devices_.empty()) {
      throw RuntimeError("PJRT plugin '" + plugin_path_ + "' reports no addressable devices");
    }
    for (PJRT_Device* device : devices_) {
      auto description_args = PJRT_ARGS(PJRT_Device_GetDescription_Args);
      description_args.device = device;
      PJRT_CALL(api_, PJRT_Device_GetDescription, description_args);
      auto id_args = PJRT_ARGS(PJRT_DeviceDescription_Id_Args);
      id_args.device_description = description_args.device_description;
      PJRT_CALL(api_, PJRT_DeviceDescription_Id, id_args);
      device_ids_.push_back(id_args.id);
    }
  } catch (...) {
    DestroyClientHandle(api_, client_);
    throw;
  }
  // The plugin's static initializers and its client's creation touched code all through
  // the library (the CPU plugin: about 50 MB resident).
  ReleasePluginCode();
}

void Client::ReleasePluginCode() {
  const char* setting = std::getenv("XLA_RELEASE_PLUGIN_CODE");
  if (setting != nullptr && std::string_view(setting) == "0") return;
  if (plugin_handle_ != nullptr) internal::ReleaseReadOnlyPages(plugin_handle_);
}

Client::~Client() {
  try {
    WaitAll();
  } catch (const RuntimeError&) {
    // Failed executions were reported through their outputs; teardown proceeds regardless.
  }
  DestroyClientHandle(api_, client_);
}

PJRT_Device* Client::device(int index) const {
  if (index < 0 || index >= device_count()) {
    throw RuntimeError("device index " + std::to_string(index) + " out of range: the " +
                       device_kind_ + " client has " + std::to_string(device_count()) +
                       " devices");
  }
  return devices_[index];
}

// ---- transfers -------------------------------------------------------------------------

BufferPtr Client::TransferToDevice(const void* data, ElementType type,
                                   const std::vector<int64_t>& dims, int device_index) {
  trace::TraceScope span("PjRtComputationClient::TransferToDevice");
  PJRT_Device* target = device(device_index);
  int64_t element_count = 1;
  for (int64_t dim : dims) {
    if (dim < 0) throw RuntimeError("TransferToDevice: negative dimension " + std::to_string(dim));
    element_count *= dim;
  }
  if (data == nullptr && element_count > 0) {
    throw RuntimeError("TransferToDevice: null data for a non-empty buffer");
  }
  auto args = PJRT_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  args.client = client_;
  args.data = data;
  args.type = internal::ToPjrtType(type);
  const std::vector<int64_t> device_dims = DeviceDims(type, dims);
  args.dims = device_dims.data();
  args.num_dims = device_dims.size();
  // The caller's data need only live for the call (the plugin copies what it keeps), so
  // the CPU plugin copies it on this thread. With kImmutableUntilTransferCompletes it
  // hands transfers above 100 KB to a worker thread and waits to be signalled back: a
  // 400 KB batch upload took 50 µs instead of 23.
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  args.device = target;
  PJRT_CALL(api_, PJRT_Client_BufferFromHostBuffer, args);
  // Owned before awaiting, so a failed transfer still frees the buffer.
  auto buffer = std::make_shared<Buffer>(args.buffer, type, dims, device_index);
  AwaitAndDestroyEvent(api_, args.done_with_host_buffer);
  if (span.active()) {
    span.AddArg("device", "xla:" + std::to_string(device_index));
    span.AddArg("bytes", std::to_string(buffer->byte_size()));
  }
  return buffer;
}

BufferPtr Client::TransferShardedToDevice(const void* data, ElementType type, const std::vector<int64_t>& dims,
                                          const Sharding& sharding) {
  const int devices = device_count();
  sharding.Check(dims.size(), devices, "TransferShardedToDevice");
  std::vector<BufferPtr> shards;
  shards.reserve(devices);
  if (sharding.is_replicated()) {
    for (int d = 0; d < devices; ++d) shards.push_back(TransferToDevice(data, type, dims, d));
  } else {
    std::vector<std::string> parts = SplitIntoShards(data, ElementSize(type), dims, sharding, devices);
    std::vector<int64_t> shard_dims = sharding.ShardDims(dims);
    for (int d = 0; d < devices; ++d) shards.push_back(TransferToDevice(parts[d].data(), type, shard_dims, d));
  }
  return Buffer::Sharded(std::move(shards), sharding, type, dims);
}

void Client::TransferFromDevice(const Buffer& buffer, void* dst, std::size_t dst_bytes) {
  if (buffer.is_sharded()) {
    if (dst_bytes != buffer.byte_size()) {
      throw RuntimeError("TransferFromDevice: destination has " + std::to_string(dst_bytes) +
                         " bytes, the buffer " + std::to_string(buffer.byte_size()));
    }
    const std::vector<BufferPtr>& shards = buffer.shards();
    if (buffer.sharding().is_replicated()) return TransferFromDevice(*shards[0], dst, dst_bytes);
    std::vector<std::string> parts(shards.size());
    std::vector<const void*> pointers;
    for (std::size_t d = 0; d < shards.size(); ++d) {
      parts[d].resize(shards[d]->byte_size());
      if (!parts[d].empty()) TransferFromDevice(*shards[d], parts[d].data(), parts[d].size());
      pointers.push_back(parts[d].data());
    }
    AssembleFromShards(pointers, ElementSize(buffer.type()), buffer.dims(), buffer.sharding(), dst);
    return;
  }
  trace::TraceScope span("PjRtComputationClient::TransferFromDevice");
  if (span.active()) {
    span.AddArg("device", "xla:" + std::to_string(buffer.device()));
    span.AddArg("bytes", std::to_string(dst_bytes));
  }
  if (dst_bytes != buffer.byte_size()) {
    throw RuntimeError("TransferFromDevice: destination has " + std::to_string(dst_bytes) +
                       " bytes, the buffer " + std::to_string(buffer.byte_size()));
  }
  auto args = PJRT_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.src = buffer.pjrt();
  args.dst = dst;
  args.dst_size = dst_bytes;
  PJRT_CALL(api_, PJRT_Buffer_ToHostBuffer, args);
  AwaitAndDestroyEvent(api_, args.event);
  buffer.AwaitExecutionTiming();
}

// ---- compile and execute ---------------------------------------------------------------

namespace {

// The arguments of a compile's trace span: how many replicas or partitions, the module's size.
void AnnotateCompile(trace::TraceScope& span, const char* count_name, int count, const std::string& mlir_module) {
  if (!span.active()) return;
  span.AddArg(count_name, std::to_string(count));
  span.AddArg("module_bytes", std::to_string(mlir_module.size()));
}

}  // namespace

ExecutablePtr Client::Compile(const std::string& mlir_module, int num_replicas,
                              const std::vector<int>& replica_devices) {
  trace::TraceScope span("PjRtComputationClient::Compile");
  AnnotateCompile(span, "replicas", num_replicas, mlir_module);
  if (num_replicas < 1 || num_replicas > device_count()) {
    throw RuntimeError("Compile: num_replicas " + std::to_string(num_replicas) +
                       " must be in [1, " + std::to_string(device_count()) + "]");
  }
  if (!replica_devices.empty() && replica_devices.size() != static_cast<std::size_t>(num_replicas)) {
    throw RuntimeError("Compile: " + std::to_string(replica_devices.size()) + " replica devices for " +
                       std::to_string(num_replicas) + " replicas");
  }
  // An explicit assignment only where it differs from XLA's default (replica r on device r).
  std::vector<int64_t> replica_device_ids;
  if (num_replicas > 1) {
    bool identity = true;
    for (int r = 0; r < static_cast<int>(replica_devices.size()); ++r) identity = identity && replica_devices[r] == r;
    for (int r = 0; !identity && r < num_replicas; ++r) {
      device(replica_devices[r]);  // range check
      replica_device_ids.push_back(device_ids_[replica_devices[r]]);
    }
  }
  // Single-device executables are portable so that Execute can launch them on any device;
  // replicated ones keep the default assignment (replica r on device r).
  return CompileWithOptions(
      mlir_module,
      internal::SerializeCompileOptions(num_replicas, /*num_partitions=*/1, num_replicas == 1, replica_device_ids),
      num_replicas);
}

ExecutablePtr Client::CompileSpmd(const std::string& mlir_module, int num_partitions,
                                  const std::vector<bool>& propagate_to_output) {
  trace::TraceScope span("PjRtComputationClient::Compile");
  AnnotateCompile(span, "partitions", num_partitions, mlir_module);
  if (num_partitions < 1 || num_partitions > device_count()) {
    throw RuntimeError("CompileSpmd: num_partitions " + std::to_string(num_partitions) + " must be in [1, " +
                       std::to_string(device_count()) + "]");
  }
  std::vector<int64_t> partition_device_ids(device_ids_.begin(), device_ids_.begin() + num_partitions);
  return CompileWithOptions(mlir_module,
                            internal::SerializeSpmdCompileOptions(partition_device_ids, propagate_to_output),
                            num_partitions);
}

std::vector<Sharding> Client::OutputShardings(const Executable& executable) {
  if (std::shared_ptr<const std::vector<Sharding>> known = executable.output_shardings()) return *known;
  auto get_args = PJRT_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get_args.loaded_executable = executable.pjrt();
  PJRT_CALL(api_, PJRT_LoadedExecutable_GetExecutable, get_args);
  auto program = PJRT_ARGS(PJRT_Program);
  static constexpr std::string_view kFormat = "hlo";
  program.format = kFormat.data();
  program.format_size = kFormat.size();
  auto args = PJRT_ARGS(PJRT_Executable_OptimizedProgram_Args);
  args.executable = get_args.executable;
  args.program = &program;
  std::string code, format;
  PJRT_Error* error = api_->PJRT_Executable_OptimizedProgram(&args);
  if (error == nullptr) {
    code.resize(program.code_size);
    program.code = code.data();
    error = api_->PJRT_Executable_OptimizedProgram(&args);
  }
  // The plugin names the form it wrote (it may add the module's config); the name is
  // the executable's, read before it goes.
  if (error == nullptr) format.assign(program.format, program.format_size);
  auto destroy_args = PJRT_ARGS(PJRT_Executable_Destroy_Args);
  destroy_args.executable = get_args.executable;
  if (PJRT_Error* destroy_error = api_->PJRT_Executable_Destroy(&destroy_args)) ConsumeError(api_, destroy_error);
  internal::CheckPjrt(api_, error, "PJRT_Executable_OptimizedProgram");
  std::optional<std::vector<Sharding>> shardings =
      internal::OutputShardingsOfHloModule(code, format, executable.num_outputs());
  if (!shardings)
    throw RuntimeError("the compiled SPMD program does not record its output shardings in a form this runtime reads");
  const_cast<Executable&>(executable).set_output_shardings(*shardings);
  return *shardings;
}

ExecutablePtr Client::CompileWithOptions(const std::string& mlir_module, const std::string& options,
                                         int num_launches) {
  static constexpr std::string_view kFormat = "mlir";
  auto program = PJRT_ARGS(PJRT_Program);
  // PJRT only reads the code when compiling; the field is non-const for other uses.
  program.code = const_cast<char*>(mlir_module.data());
  program.code_size = mlir_module.size();
  program.format = kFormat.data();
  program.format_size = kFormat.size();

  auto args = PJRT_ARGS(PJRT_Client_Compile_Args);
  args.client = client_;
  args.program = &program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  PJRT_CALL(api_, PJRT_Client_Compile, args);
  ReleasePluginCode();

  try {
    return Describe(api_, args.executable, num_launches);
  } catch (...) {
    DestroyLoadedExecutable(api_, args.executable);
    throw;
  }
}

std::string Client::SerializeExecutable(const Executable& executable) {
  auto get_args = PJRT_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get_args.loaded_executable = executable.pjrt();
  PJRT_CALL(api_, PJRT_LoadedExecutable_GetExecutable, get_args);
  auto args = PJRT_ARGS(PJRT_Executable_Serialize_Args);
  args.executable = get_args.executable;
  PJRT_Error* error = api_->PJRT_Executable_Serialize(&args);
  auto destroy_args = PJRT_ARGS(PJRT_Executable_Destroy_Args);
  destroy_args.executable = get_args.executable;
  if (PJRT_Error* destroy_error = api_->PJRT_Executable_Destroy(&destroy_args)) ConsumeError(api_, destroy_error);
  internal::CheckPjrt(api_, error, "PJRT_Executable_Serialize");
  std::string bytes(args.serialized_bytes, args.serialized_bytes_size);
  args.serialized_executable_deleter(args.serialized_executable);
  return bytes;
}

ExecutablePtr Client::DeserializeExecutable(const std::string& bytes, int num_replicas) {
  trace::TraceScope span("PjRtComputationClient::DeserializeExecutable");
  auto args = PJRT_ARGS(PJRT_Executable_DeserializeAndLoad_Args);
  args.client = client_;
  args.serialized_executable = bytes.data();
  args.serialized_executable_size = bytes.size();
  PJRT_CALL(api_, PJRT_Executable_DeserializeAndLoad, args);
  ReleasePluginCode();
  try {
    return Describe(api_, args.loaded_executable, num_replicas);
  } catch (...) {
    DestroyLoadedExecutable(api_, args.loaded_executable);
    throw;
  }
}

namespace {

// While a trace runs: the span of an execution on its device's timeline ("xla:N"), from
// its enqueueing to its completion, recorded when the completion event fires.
void TraceExecution(const PJRT_Api* api, PJRT_Event* completion, int device, int64_t enqueued_ns) {
  trace::BeginPendingSpan();
  bool registered = internal::OnEventReady(api, completion, [device, enqueued_ns](bool ok) {
    trace::TraceEvent event;
    event.name = "Execution";
    event.start_ns = enqueued_ns;
    event.end_ns = trace::NowNs();
    event.thread = trace::CurrentThreadId();
    event.track = "xla:" + std::to_string(device);
    if (!ok) event.args.emplace_back("error", "the execution failed");
    trace::Record(std::move(event));
    trace::EndPendingSpan();
  });
  if (!registered) trace::EndPendingSpan();
}

}  // namespace

// Executions that allocate at least this much wait for the device's earlier executions
// before they are enqueued (see Execute).
constexpr int64_t kAwaitEarlierExecutionsBytes = int64_t{32} << 20;

std::vector<std::vector<BufferPtr>> Client::Execute(
    const Executable& executable, const std::vector<std::vector<Buffer*>>& arguments,
    const std::vector<int>& devices, const std::vector<int64_t>& donated,
    std::vector<BufferPtr> release_after, const std::vector<std::vector<int64_t>>& output_dims,
    metrics::Metric* timing_metric) {
  trace::TraceScope span("PjRtComputationClient::ExecuteComputation");
  const std::size_t num_launches = arguments.size();
  if (!output_dims.empty() && output_dims.size() != executable.num_outputs()) {
    throw RuntimeError("Execute: " + std::to_string(output_dims.size()) + " output shapes given for " +
                       std::to_string(executable.num_outputs()) + " outputs");
  }
  if (num_launches != devices.size() ||
      num_launches != static_cast<std::size_t>(executable.num_replicas())) {
    throw RuntimeError("Execute: the executable has " + std::to_string(executable.num_replicas()) +
                       " replicas, got " + std::to_string(num_launches) + " argument lists and " +
                       std::to_string(devices.size()) + " devices");
  }
  const std::size_t num_args = arguments[0].size();
  std::vector<std::vector<PJRT_Buffer*>> raw_args(num_launches);
  for (std::size_t r = 0; r < num_launches; ++r) {
    device(devices[r]);  // range check
    if (arguments[r].size() != num_args) {
      throw RuntimeError("Execute: replica " + std::to_string(r) + " has " +
                         std::to_string(arguments[r].size()) + " arguments, replica 0 has " +
                         std::to_string(num_args));
    }
    for (std::size_t i = 0; i < num_args; ++i) {
      const Buffer* arg = arguments[r][i];
      if (arg == nullptr) throw RuntimeError("Execute: argument " + std::to_string(i) + " is null");
      if (arg->device() != devices[r]) {
        throw RuntimeError("Execute: argument " + std::to_string(i) + " of replica " +
                           std::to_string(r) + " is on device " + std::to_string(arg->device()) +
                           ", the replica runs on device " + std::to_string(devices[r]));
      }
      raw_args[r].push_back(arg->pjrt());
    }
  }

  // A replicated executable runs where its compile-time device assignment says; make sure
  // that is where the caller placed the arguments.
  if (num_launches > 1) {
    auto devices_args = PJRT_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args);
    devices_args.executable = executable.pjrt();
    PJRT_CALL(api_, PJRT_LoadedExecutable_AddressableDevices, devices_args);
    for (std::size_t r = 0; r < num_launches; ++r) {
      if (r >= devices_args.num_addressable_devices ||
          devices_args.addressable_devices[r] != device(devices[r])) {
        throw RuntimeError("Execute: replica " + std::to_string(r) +
                           " of the executable is not assigned to device " +
                           std::to_string(devices[r]) + " (replicas run on devices 0.." +
                           std::to_string(num_launches - 1) + ")");
      }
    }
  }

  std::vector<int64_t> non_donatable;
  for (int64_t index : donated) {
    if (index < 0 || static_cast<std::size_t>(index) >= num_args) {
      throw RuntimeError("Execute: donated argument index " + std::to_string(index) +
                         " out of range [0, " + std::to_string(num_args) + ")");
    }
  }
  for (std::size_t i = 0; i < num_args; ++i) {
    if (std::find(donated.begin(), donated.end(), static_cast<int64_t>(i)) == donated.end()) {
      non_donatable.push_back(static_cast<int64_t>(i));
    }
  }
  // XLA allocates an execution's temporaries and results when it is enqueued, not when
  // it starts: a script that traces faster than its graphs run has the next step's
  // allocations alive beside the running step's. For graphs that allocate much, the
  // launch waits for the device's earlier executions first: the TransformerEncoder of
  // benchmarks/bench_models.py (86 MB of temporaries) peaked at 690-700 MB back to back
  // and at 570-590 MB waiting, with no change in its step time. Small graphs are not
  // held back: waiting cost MNIST's and the LSTM's steps 5-7% back to back.
  if (executable.memory_needed() >= kAwaitEarlierExecutionsBytes) pending_->AwaitDevices(api_, devices);
  CheckMemoryFor(executable, devices);

  auto options = PJRT_ARGS(PJRT_ExecuteOptions);
  options.non_donatable_input_indices = non_donatable.data();
  options.num_non_donatable_input_indices = non_donatable.size();

  std::vector<PJRT_Buffer* const*> argument_lists;
  for (const auto& list : raw_args) argument_lists.push_back(list.data());
  std::vector<std::vector<PJRT_Buffer*>> raw_outputs(
      num_launches, std::vector<PJRT_Buffer*>(executable.num_outputs(), nullptr));
  std::vector<PJRT_Buffer**> output_lists;
  for (auto& list : raw_outputs) output_lists.push_back(list.data());
  std::vector<PJRT_Event*> events(num_launches, nullptr);

  auto args = PJRT_ARGS(PJRT_LoadedExecutable_Execute_Args);
  args.executable = executable.pjrt();
  args.options = &options;
  args.argument_lists = argument_lists.data();
  args.num_devices = num_launches;
  args.num_args = num_args;
  args.output_lists = output_lists.data();
  args.device_complete_events = events.data();
  // A portable (single-replica) executable runs on execute_device; replicated ones use
  // their compile-time assignment.
  args.execute_device = num_launches == 1 ? device(devices[0]) : nullptr;
  const auto start = std::chrono::steady_clock::now();
  const int64_t enqueued_ns = span.active() ? trace::NowNs() : 0;
  PJRT_CALL(api_, PJRT_LoadedExecutable_Execute, args);
  static metrics::Metric* execute_time = metrics::GetMetric("ExecuteTime");
  std::shared_ptr<ExecutionTiming> timing =
      ExecutionTiming::Start(api_, events, start, timing_metric != nullptr ? timing_metric : execute_time);
  if (span.active()) {
    for (std::size_t r = 0; r < num_launches; ++r) TraceExecution(api_, events[r], devices[r], enqueued_ns);
  }
  const uint64_t launch =
      pending_->Add(api_, events, devices, std::make_shared<ExecutionHold>(std::move(release_after)), timing);

  if (span.active()) {
    std::string on;
    for (int d : devices) on += (on.empty() ? "xla:" : ", xla:") + std::to_string(d);
    span.AddArg("devices", on);
    span.AddArg("launch", std::to_string(launch));
  }
  std::vector<std::vector<BufferPtr>> results(num_launches);
  try {
    for (std::size_t r = 0; r < num_launches; ++r) {
      for (PJRT_Buffer*& raw : raw_outputs[r]) {
        const std::vector<int64_t>* dims = output_dims.empty() ? nullptr : &output_dims[results[r].size()];
        results[r].push_back(AdoptOutput(api_, raw, devices[r], dims));
        raw = nullptr;  // owned by its Buffer now
        results[r].back()->set_defining_launch(launch);
        results[r].back()->set_execution_timing(timing);
      }
    }
  } catch (...) {
    for (const auto& list : raw_outputs) {
      for (PJRT_Buffer* raw : list) {
        if (raw != nullptr) DestroyRawBuffer(api_, raw);
      }
    }
    throw;
  }
  return results;
}

// Executions that allocate less than this share of a device's memory run unchecked:
// checking costs a read of the memory statistics (/proc/meminfo for the CPU device).
constexpr int64_t kUncheckedShare = 8;

void Client::CheckMemoryFor(const Executable& executable, const std::vector<int>& devices) {
  const int64_t per_replica = executable.memory_needed();
  if (per_replica <= 0) return;
  // The CPU device's replicas share the host's memory; other devices have their own.
  const int64_t needed = device_kind_ == "CPU" ? per_replica * static_cast<int64_t>(devices.size()) : per_replica;
  const int64_t limit = MemoryLimit(devices[0]);
  if (limit <= 0 || needed < limit / kUncheckedShare) return;
  const MemoryInfo info = GetMemoryInfo(devices[0]);
  const int64_t free = info.bytes_limit - info.bytes_in_use;
  if (needed <= free) return;
  throw RuntimeError("Out of memory: the computation needs " + std::to_string(needed) + " bytes on the " +
                     device_kind_ + " device (its results and temporaries), " + std::to_string(free) +
                     " of its " + std::to_string(info.bytes_limit) + " bytes are free");
}

int64_t Client::MemoryLimit(int device_index) {
  {
    std::lock_guard<std::mutex> lock(memory_limits_mutex_);
    if (static_cast<std::size_t>(device_index) < memory_limits_.size() && memory_limits_[device_index] >= 0)
      return memory_limits_[device_index];
  }
  const int64_t limit = std::max<int64_t>(GetMemoryInfo(device_index).bytes_limit, 0);
  std::lock_guard<std::mutex> lock(memory_limits_mutex_);
  if (memory_limits_.size() <= static_cast<std::size_t>(device_index)) memory_limits_.resize(device_index + 1, -1);
  memory_limits_[device_index] = limit;
  return limit;
}

// ---- queries and synchronisation -------------------------------------------------------

MemoryInfo Client::GetMemoryInfo(int device_index) {
  PJRT_Device* target = device(device_index);
  MemoryInfo info;
  bool have_limit = false;
  // Optional entry point: older plugins may lack it or leave it unimplemented.
  if (offsetof(PJRT_Api, PJRT_Device_MemoryStats) < api_->struct_size &&
      api_->PJRT_Device_MemoryStats != nullptr) {
    auto args = PJRT_ARGS(PJRT_Device_MemoryStats_Args);
    args.device = target;
    if (PJRT_Error* error = api_->PJRT_Device_MemoryStats(&args)) {
      ConsumeError(api_, error);
    } else {
      info.bytes_in_use = args.bytes_in_use;
      info.bytes_limit = args.bytes_limit_is_set ? args.bytes_limit : 0;
      have_limit = args.bytes_limit_is_set;
      if (args.peak_bytes_in_use_is_set) info.peak_bytes_in_use = args.peak_bytes_in_use;
    }
  }
  // CPU devices use host memory, which the CPU plugin does not report.
  if (!have_limit && device_kind_ == "CPU") {
    if (auto host = internal::ReadHostMemoryInfo()) info = *host;
  }
  return info;
}

void Client::WaitAll() { pending_->AwaitAll(api_); }

}  // namespace torch_xla::runtime
