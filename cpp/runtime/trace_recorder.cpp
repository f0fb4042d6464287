#include "runtime/trace_recorder.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace torch_xla::runtime::trace {

namespace internal {
std::atomic<bool> recording{false};
}  // namespace internal

namespace {

// A trace of a long run at most keeps this many events (about 100 MB); the rest are
// counted as dropped. A training step records a handful.
constexpr std::size_t kMaxEvents = std::size_t{1} << 20;

// How long StopRecording waits for pending spans: an execution still running by then is
// left out of the trace.
constexpr std::chrono::seconds kPendingWait{1};

struct Store {
  std::mutex mutex;
  std::condition_variable pending_done;
  std::vector<TraceEvent> events;
  int64_t dropped = 0;
  int64_t pending = 0;
};

Store& TheStore() {
  static Store* store = new Store();  // leaked: spans may end during exit
  return *store;
}

}  // namespace

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t CurrentThreadId() {
  thread_local const int64_t id = static_cast<int64_t>(::syscall(SYS_gettid));
  return id;
}

bool StartRecording() {
  Store& store = TheStore();
  std::lock_guard<std::mutex> lock(store.mutex);
  if (internal::recording.load(std::memory_order_relaxed)) return false;
  store.events.clear();
  store.dropped = 0;
  internal::recording.store(true, std::memory_order_relaxed);
  return true;
}

std::vector<TraceEvent> StopRecording(int64_t* dropped) {
  Store& store = TheStore();
  std::vector<TraceEvent> events;
  std::unique_lock<std::mutex> lock(store.mutex);
  // The completion callbacks of executions that finished just now may still be on
  // their way (PJRT runs them after waking the threads that awaited the execution).
  store.pending_done.wait_for(lock, kPendingWait, [&] { return store.pending == 0; });
  internal::recording.store(false, std::memory_order_relaxed);
  events.swap(store.events);
  if (dropped != nullptr) *dropped = store.dropped;
  store.dropped = 0;
  return events;
}

void Record(TraceEvent event) {
  Store& store = TheStore();
  std::lock_guard<std::mutex> lock(store.mutex);
  // Checked again under the lock: a span that ends after the trace stopped is not kept.
  if (!internal::recording.load(std::memory_order_relaxed)) return;
  if (store.events.size() >= kMaxEvents) {
    ++store.dropped;
    return;
  }
  store.events.push_back(std::move(event));
}

void BeginPendingSpan() {
  Store& store = TheStore();
  std::lock_guard<std::mutex> lock(store.mutex);
  ++store.pending;
}

void EndPendingSpan() {
  Store& store = TheStore();
  {
    std::lock_guard<std::mutex> lock(store.mutex);
    --store.pending;
  }
  store.pending_done.notify_all();
}

TraceScope::~TraceScope() {
  if (name_ == nullptr) return;
  TraceEvent event;
  event.name = name_;
  event.start_ns = start_ns_;
  event.end_ns = NowNs();
  event.thread = CurrentThreadId();
  event.args = std::move(args_);
  Record(std::move(event));
}

void TraceScope::AddArg(std::string key, std::string value) {
  if (name_ != nullptr) args_.emplace_back(std::move(key), std::move(value));
}

}  // namespace torch_xla::runtime::trace
