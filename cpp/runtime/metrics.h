#pragma once
// Process-wide counters (e.g. "xla::add", "aten::nonzero", "CachedCompile") and timing
// metrics (e.g. "CompileTime"). Counters are looked up once and then bumped lock-free:
//   static Counter* c = GetCounter("xla::add"); c->Add();
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#define XLA_METRICS_CONCAT_(a, b) a##b
#define XLA_METRICS_CONCAT(a, b) XLA_METRICS_CONCAT_(a, b)

// Bumps the counter "xla::<name>" (looked up once per call site) and times the rest of
// the enclosing scope as tracing ("LazyTracing"): what each lowered kernel does first,
// so that tests can tell a lowering from the CPU fallback and reports show the time
// spent recording ops.
#define XLA_COUNT(name)                                                                  \
  static ::torch_xla::metrics::Counter* XLA_METRICS_CONCAT(xla_counter_, __LINE__) =    \
      ::torch_xla::metrics::GetCounter("xla::" name);                                    \
  XLA_METRICS_CONCAT(xla_counter_, __LINE__)->Add();                                     \
  ::torch_xla::metrics::TracingTimer XLA_METRICS_CONCAT(xla_tracing_, __LINE__)

namespace torch_xla::metrics {

class Counter {
 public:
  void Add(int64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }
  void Reset() { value_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// What a metric's samples measure; the reports format them by it.
enum class Unit { kNanoseconds, kBytes, kCount };

struct MetricSnapshot {
  int64_t count = 0;
  double total = 0;             // sum of all samples
  std::vector<double> samples;  // the most recent samples, oldest first
};

// A series of samples (durations in nanoseconds, sizes in bytes, or counts).
class Metric {
 public:
  explicit Metric(Unit unit) : unit_(unit) {}
  void AddSample(double value);
  // Adds to the count and total only, without keeping the sample: two relaxed atomic
  // adds, for metrics taken on every traced op.
  void AddUnkeptSample(int64_t value) {
    unkept_count_.fetch_add(1, std::memory_order_relaxed);
    unkept_total_.fetch_add(value, std::memory_order_relaxed);
  }
  MetricSnapshot Snapshot() const;
  void Reset();
  Unit unit() const { return unit_; }

 private:
  static constexpr std::size_t kKeep = 1024;
  const Unit unit_;
  mutable std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  int64_t count_ = 0;
  double total_ = 0;
  std::vector<double> ring_;
  std::size_t next_ = 0;
  std::atomic<int64_t> unkept_count_{0};
  std::atomic<int64_t> unkept_total_{0};
};

// Returns the counter/metric of that name, creating it on first use (a metric with the
// unit given then). The pointer is stable for the life of the process.
Counter* GetCounter(const std::string& name);
Metric* GetMetric(const std::string& name, Unit unit = Unit::kNanoseconds);

// Names of the counters with a non-zero value, and of the metrics with samples.
std::vector<std::string> CounterNames();
std::vector<std::string> MetricNames();
// Value of a counter; -1 when no counter of that name has been created.
int64_t CounterValue(const std::string& name);
// Names of the non-zero counters of ops that ran on the CPU fallback ("aten::nonzero").
std::vector<std::string> FallbackCounterNames();
bool MetricData(const std::string& name, MetricSnapshot* out);
void ClearCounters();
void ClearMetrics();
// A human-readable report of every metric and non-zero counter.
std::string Report();
// The report of the named metrics and counters that have data (each metric's count,
// total and mean), followed by every fallback counter.
std::string ShortReport(const std::vector<std::string>& counter_names, const std::vector<std::string>& metric_names);

// Adds the elapsed wall time (ns) to a metric when it goes out of scope.
class ScopedTimer {
 public:
  explicit ScopedTimer(Metric* metric) : metric_(metric), start_(std::chrono::steady_clock::now()) {}
  ~ScopedTimer() {
    metric_->AddSample(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start_).count());
  }

 private:
  Metric* metric_;
  std::chrono::steady_clock::time_point start_;
};

// Times the tracing of one op into "LazyTracing": the outermost timer of a thread
// records, so an op whose kernel calls another counted kernel is timed once, and the
// time of graphs the op runs (item(), data-dependent shapes) is left out (UntracedScope).
class TracingTimer {
 public:
  TracingTimer() {
    if (depth_++ == 0) {
      ++serial_;
      untraced_ns_ = 0;
      start_ = std::chrono::steady_clock::now();
    }
  }
  ~TracingTimer() {
    if (--depth_ == 0) {
      static Metric* tracing = GetMetric("LazyTracing");
      int64_t ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
      tracing->AddUnkeptSample(ns - untraced_ns_);
    }
  }
  TracingTimer(const TracingTimer&) = delete;
  TracingTimer& operator=(const TracingTimer&) = delete;

  // Identifies the outermost counted kernel running on this thread (0 outside one), so
  // that state a kernel's helpers leave for its result (a precision mode's dtype) is
  // not read by another kernel.
  static uint64_t CurrentKernel() { return depth_ > 0 ? serial_ : 0; }

 private:
  friend class UntracedScope;
  static thread_local uint64_t serial_;
  static thread_local int depth_;
  static thread_local int64_t untraced_ns_;
  static thread_local int untraced_depth_;
  std::chrono::steady_clock::time_point start_;
};

// Work inside an op that is not tracing (running a graph): its time is taken out of
// the op's LazyTracing sample.
class UntracedScope {
 public:
  UntracedScope() : active_(TracingTimer::depth_ > 0 && TracingTimer::untraced_depth_ == 0) {
    if (active_) {
      ++TracingTimer::untraced_depth_;
      start_ = std::chrono::steady_clock::now();
    }
  }
  ~UntracedScope() {
    if (active_) {
      --TracingTimer::untraced_depth_;
      TracingTimer::untraced_ns_ +=
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
    }
  }
  UntracedScope(const UntracedScope&) = delete;
  UntracedScope& operator=(const UntracedScope&) = delete;

 private:
  bool active_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace torch_xla::metrics
