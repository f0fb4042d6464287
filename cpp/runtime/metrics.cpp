#include "runtime/metrics.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

namespace torch_xla::metrics {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<Counter>> counters;
  std::map<std::string, std::unique_ptr<Metric>> metrics;
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // never destroyed: used until exit
  return *registry;
}

class SpinLock {
 public:
  explicit SpinLock(std::atomic_flag& flag) : flag_(flag) {
    while (flag_.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~SpinLock() { flag_.clear(std::memory_order_release); }

 private:
  std::atomic_flag& flag_;
};

std::string FormatDuration(double ns) {
  char buf[64];
  if (ns >= 1e9) std::snprintf(buf, sizeof buf, "%.3fs", ns / 1e9);
  else if (ns >= 1e6) std::snprintf(buf, sizeof buf, "%.3fms", ns / 1e6);
  else if (ns >= 1e3) std::snprintf(buf, sizeof buf, "%.3fus", ns / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0fns", ns);
  return buf;
}

}  // namespace

void Metric::AddSample(double value) {
  SpinLock guard(lock_);
  ++count_;
  total_ += value;
  if (ring_.size() < kKeep) {
    ring_.push_back(value);
  } else {
    ring_[next_] = value;
    next_ = (next_ + 1) % kKeep;
  }
}

MetricSnapshot Metric::Snapshot() const {
  SpinLock guard(lock_);
  MetricSnapshot snap;
  snap.count = count_ + unkept_count_.load(std::memory_order_relaxed);
  snap.total = total_ + static_cast<double>(unkept_total_.load(std::memory_order_relaxed));
  snap.samples.reserve(ring_.size());
  for (std::size_t i = 0; i < ring_.size(); ++i) snap.samples.push_back(ring_[(next_ + i) % ring_.size()]);
  return snap;
}

void Metric::Reset() {
  SpinLock guard(lock_);
  count_ = 0;
  total_ = 0;
  ring_.clear();
  next_ = 0;
  unkept_count_.store(0, std::memory_order_relaxed);
  unkept_total_.store(0, std::memory_order_relaxed);
}

thread_local uint64_t TracingTimer::serial_ = 0;
thread_local int TracingTimer::depth_ = 0;
thread_local int64_t TracingTimer::untraced_ns_ = 0;
thread_local int TracingTimer::untraced_depth_ = 0;

Counter* GetCounter(const std::string& name) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto& slot = r.counters[name];
  if (!slot) slot = std::make_unique<Counter>();
  return slot.get();
}

Metric* GetMetric(const std::string& name, Unit unit) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto& slot = r.metrics[name];
  if (!slot) slot = std::make_unique<Metric>(unit);
  return slot.get();
}

std::vector<std::string> CounterNames() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (auto& [name, counter] : r.counters)
    if (counter->value() != 0) names.push_back(name);
  return names;
}

std::vector<std::string> MetricNames() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (auto& [name, metric] : r.metrics)
    if (metric->Snapshot().count != 0) names.push_back(name);
  return names;
}

int64_t CounterValue(const std::string& name) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.counters.find(name);
  return it == r.counters.end() ? -1 : it->second->value();
}

std::vector<std::string> FallbackCounterNames() {
  std::vector<std::string> names;
  for (std::string& name : CounterNames())
    if (name.rfind("aten::", 0) == 0) names.push_back(std::move(name));
  return names;
}

bool MetricData(const std::string& name, MetricSnapshot* out) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.metrics.find(name);
  if (it == r.metrics.end()) return false;
  *out = it->second->Snapshot();
  return out->count != 0;
}

void ClearCounters() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& [name, counter] : r.counters) counter->Reset();
}

void ClearMetrics() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& [name, metric] : r.metrics) metric->Reset();
}

namespace {

Unit UnitOf(const std::string& name) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.metrics.find(name);
  return it == r.metrics.end() ? Unit::kCount : it->second->unit();
}

std::string FormatBytes(double bytes) {
  char buf[64];
  if (bytes >= double(1 << 30)) std::snprintf(buf, sizeof buf, "%.2fGB", bytes / double(1 << 30));
  else if (bytes >= double(1 << 20)) std::snprintf(buf, sizeof buf, "%.2fMB", bytes / double(1 << 20));
  else if (bytes >= 1024) std::snprintf(buf, sizeof buf, "%.2fKB", bytes / 1024);
  else std::snprintf(buf, sizeof buf, "%.0fB", bytes);
  return buf;
}

std::string Format(Unit unit, double v) {
  switch (unit) {
    case Unit::kNanoseconds: return FormatDuration(v);
    case Unit::kBytes: return FormatBytes(v);
    case Unit::kCount: break;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void ReportMetric(std::ostringstream& out, const std::string& name, bool with_percentiles) {
  MetricSnapshot snap;
  if (!MetricData(name, &snap)) return;
  Unit unit = UnitOf(name);
  auto fmt = [&](double v) { return Format(unit, v); };
  out << "Metric: " << name << "\n  TotalSamples: " << snap.count << "\n  Accumulator: " << fmt(snap.total);
  if (!with_percentiles) {
    out << "\n  Mean: " << fmt(snap.total / static_cast<double>(snap.count)) << "\n";
    return;
  }
  std::vector<double> sorted = snap.samples;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty()) {
    auto pct = [&](double p) { return sorted[static_cast<std::size_t>(p * (sorted.size() - 1))]; };
    out << "\n  Percentiles: 1%=" << fmt(pct(0.01)) << "; 5%=" << fmt(pct(0.05)) << "; 10%=" << fmt(pct(0.10))
        << "; 20%=" << fmt(pct(0.20)) << "; 50%=" << fmt(pct(0.50)) << "; 80%=" << fmt(pct(0.80))
        << "; 90%=" << fmt(pct(0.90)) << "; 95%=" << fmt(pct(0.95)) << "; 99%=" << fmt(pct(0.99));
  }
  out << "\n";
}

void ReportCounter(std::ostringstream& out, const std::string& name) {
  int64_t value = CounterValue(name);
  if (value > 0) out << "Counter: " << name << "\n  Value: " << value << "\n";
}

}  // namespace

std::string Report() {
  std::ostringstream out;
  for (const std::string& name : MetricNames()) ReportMetric(out, name, /*with_percentiles=*/true);
  for (const std::string& name : CounterNames()) ReportCounter(out, name);
  return out.str();
}

std::string ShortReport(const std::vector<std::string>& counter_names, const std::vector<std::string>& metric_names) {
  std::ostringstream out;
  for (const std::string& name : metric_names) ReportMetric(out, name, /*with_percentiles=*/false);
  std::vector<std::string> counters = counter_names;
  for (std::string& name : FallbackCounterNames())
    if (std::find(counters.begin(), counters.end(), name) == counters.end()) counters.push_back(std::move(name));
  for (const std::string& name : counters) ReportCounter(out, name);
  return out.str();
}

}  // namespace torch_xla::metrics
