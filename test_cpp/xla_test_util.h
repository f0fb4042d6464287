#pragma once
// Helpers shared by the LibTorch-on-XLA tests: moving tensors to the device, comparing an
// XLA result with the same computation on the CPU, and checking the op counters that show
// whether an op was lowered ("xla::<op>") or ran through the CPU fallback ("aten::<op>").
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "aten/api.h"
#include "runtime/metrics.h"

namespace torch_xla::test {

inline at::TensorOptions XlaOptions(at::ScalarType type = at::kFloat, int ordinal = 0) {
  return at::TensorOptions().dtype(type).device(XlaDevice(ordinal));
}

// A copy of a CPU tensor on xla:<ordinal>.
inline at::Tensor ToXla(const at::Tensor& cpu, int ordinal = 0) { return cpu.to(XlaDevice(ordinal)); }

inline int64_t Counter(const std::string& name) {
  int64_t value = metrics::CounterValue(name);
  return value < 0 ? 0 : value;
}

// Names of the CPU-fallback counters ("aten::...") with a non-zero value.
inline std::vector<std::string> FallbackCounters() {
  std::vector<std::string> out;
  for (const std::string& name : metrics::CounterNames())
    if (name.rfind("aten::", 0) == 0 && metrics::CounterValue(name) > 0) out.push_back(name);
  return out;
}

inline std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Compares an XLA result with a CPU reference: same device kind, dtype, shape and values.
inline ::testing::AssertionResult IsClose(const at::Tensor& xla, const at::Tensor& cpu, double atol,
                                          double rtol) {
  if (!xla.device().is_xla())
    return ::testing::AssertionFailure() << "result is on " << xla.device() << ", not on an XLA device";
  at::Tensor got = xla.cpu();
  if (got.scalar_type() != cpu.scalar_type())
    return ::testing::AssertionFailure()
           << "dtype " << got.scalar_type() << " != expected " << cpu.scalar_type();
  if (got.sizes() != cpu.sizes())
    return ::testing::AssertionFailure() << "shape " << got.sizes() << " != expected " << cpu.sizes();
  bool ok = (got.is_floating_point() || got.is_complex())
                ? at::allclose(got, cpu, rtol, atol, /*equal_nan=*/true)
                : at::equal(got, cpu);
  if (ok) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os << "values differ\n  xla: " << got << "\n  cpu: " << cpu;
  return ::testing::AssertionFailure() << os.str();
}

#define EXPECT_XLA_CLOSE(xla, cpu) EXPECT_TRUE(::torch_xla::test::IsClose((xla), (cpu), 1e-5, 1e-5))
#define EXPECT_XLA_CLOSE_TOL(xla, cpu, atol, rtol) \
  EXPECT_TRUE(::torch_xla::test::IsClose((xla), (cpu), (atol), (rtol)))

inline void ExpectClose(const at::Tensor& xla, const at::Tensor& cpu, double atol = 1e-5,
                        double rtol = 1e-5) {
  EXPECT_TRUE(IsClose(xla, cpu, atol, rtol));
}

// The lowered kernel of `op` ran (counter "xla::<op>" is non-zero since the last clear).
inline void ExpectCounterChanged(const std::string& name) {
  EXPECT_GT(Counter(name), 0) << "counter " << name << " did not change; counters: "
                              << Join(metrics::CounterNames());
}

inline void ExpectCounterUnchanged(const std::string& name) {
  EXPECT_EQ(Counter(name), 0) << "counter " << name << " changed";
}

// No op since the last clear went through the CPU fallback.
inline void ExpectNoFallback() {
  std::vector<std::string> fallbacks = FallbackCounters();
  EXPECT_TRUE(fallbacks.empty()) << "CPU fallback used for: " << Join(fallbacks);
}

// Clears the counters before each test (all tests of the binary may share a process).
class XlaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Sync(/*wait=*/true);
    metrics::ClearCounters();
  }
};

}  // namespace torch_xla::test
