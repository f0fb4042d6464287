#pragma once
// Process-wide counters (e.g. "xla::add", "aten::nonzero", "CachedCompile") and timing
// metrics (e.g. "CompileTime"). Counters are looked up once and then bumped lock-free:
//   static Counter* c = GetCounter("xla::add"); c->Add();
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

// Bumps the counter "xla::<name>" (looked up once per call site): what each lowered
// kernel does, so that tests can tell a lowering from the CPU fallback.
#define XLA_COUNT(name)                                                           \
  do {                                                                            \
    static ::torch_xla::metrics::Counter* counter_ = ::torch_xla::metrics::GetCounter("xla::" name); \
    counter_->Add();                                                              \
  } while (0)

namespace torch_xla::metrics {

class Counter {
 public:
  void Add(int64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }
  void Reset() { value_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

struct MetricSnapshot {
  int64_t count = 0;
  double total = 0;             // sum of all samples
  std::vector<double> samples;  // the most recent samples, oldest first
};

// A series of samples (durations in nanoseconds, or sizes in bytes).
class Metric {
 public:
  void AddSample(double value);
  MetricSnapshot Snapshot() const;
  void Reset();

 private:
  static constexpr std::size_t kKeep = 1024;
  mutable std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  int64_t count_ = 0;
  double total_ = 0;
  std::vector<double> ring_;
  std::size_t next_ = 0;
};

// Returns the counter/metric of that name, creating it on first use. The pointer is
// stable for the life of the process.
Counter* GetCounter(const std::string& name);
Metric* GetMetric(const std::string& name);

// Names of the counters with a non-zero value, and of the metrics with samples.
std::vector<std::string> CounterNames();
std::vector<std::string> MetricNames();
// Value of a counter; -1 when no counter of that name has been created.
int64_t CounterValue(const std::string& name);
bool MetricData(const std::string& name, MetricSnapshot* out);
void ClearCounters();
void ClearMetrics();
// A human-readable report of every metric and non-zero counter.
std::string Report();

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

}  // namespace torch_xla::metrics
