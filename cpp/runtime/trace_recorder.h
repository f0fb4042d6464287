#pragma once
// The profiler's trace events: spans of time (a name, a start and an end, the thread)
// that the runtime and the layers above record while a trace runs
// (torch_xla.debug.profiler), and nothing otherwise. A TraceScope costs one relaxed
// atomic load when no trace runs, so the spans stay in the hot paths.
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace torch_xla::runtime::trace {

struct TraceEvent {
  std::string name;
  // Steady-clock nanoseconds (CLOCK_MONOTONIC: Python's time.monotonic_ns()).
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // The OS thread that recorded it (Python's threading.get_native_id()).
  int64_t thread = 0;
  // Non-empty: the span belongs to a timeline of its own (a device's executions, "xla:0")
  // rather than to the thread.
  std::string track;
  std::vector<std::pair<std::string, std::string>> args;
};

namespace internal {
extern std::atomic<bool> recording;
}  // namespace internal

// Whether a trace is being recorded.
inline bool Recording() { return internal::recording.load(std::memory_order_relaxed); }

int64_t NowNs();
int64_t CurrentThreadId();

// Starts recording; false (nothing changes) when a trace is already being recorded.
bool StartRecording();
// Stops recording and returns the events recorded since StartRecording, oldest first;
// `dropped` receives the count of those left out beyond the bound on a trace's events.
// Empty when no trace was being recorded.
std::vector<TraceEvent> StopRecording(int64_t* dropped);
// Keeps the event when a trace is being recorded.
void Record(TraceEvent event);

// A span whose end another thread records later (an execution's, when its completion
// event fires): StopRecording waits for those begun while recording, up to a second,
// so that an execution seen finished before the trace stopped is in it. Each
// BeginPendingSpan is matched by one EndPendingSpan, after the span's Record.
void BeginPendingSpan();
void EndPendingSpan();

// A span of the calling thread from construction to destruction, kept when a trace was
// being recorded at its start.
class TraceScope {
 public:
  explicit TraceScope(const char* name) : name_(Recording() ? name : nullptr), start_ns_(name_ ? NowNs() : 0) {}
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

  // Whether the span is being recorded: build its arguments only then.
  bool active() const { return name_ != nullptr; }
  void AddArg(std::string key, std::string value);

 private:
  const char* name_;
  int64_t start_ns_;
  std::vector<std::pair<std::string, std::string>> args_;
};

}  // namespace torch_xla::runtime::trace
