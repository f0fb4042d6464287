// Ops without a lowering run through the CPU fallback: they bump "aten::<op>" and still give
// the right value, on the right device, usable by later lowered ops.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class FallbackTest : public XlaTest {};

// nonzero and unique have data-dependent output shapes: they stay on the CPU fallback.
TEST_F(FallbackTest, NonzeroFallsBackAndIsCorrect) {
  at::Tensor a = at::tensor({3.0f, 0.0f, 2.0f, 0.0f, 0.5f, -4.0f}).reshape({2, 3});
  at::Tensor xa = ToXla(a);
  at::Tensor result = at::nonzero(xa);
  EXPECT_TRUE(result.device().is_xla());
  ExpectClose(result, at::nonzero(a));
  ExpectCounterChanged("aten::nonzero");
  // The fallback result feeds lowered ops.
  ExpectClose(at::nonzero(xa) * 2 + 1, at::nonzero(a) * 2 + 1);
}

TEST_F(FallbackTest, UniqueFallsBackWithSeveralOutputs) {
  at::Tensor a = at::tensor({3.0f, -1.0f, 3.0f, 8.0f, -1.0f, -4.0f});
  auto [values, inverse, counts] = at::_unique2(ToXla(a), /*sorted=*/true, /*return_inverse=*/true,
                                                /*return_counts=*/true);
  auto [cpu_values, cpu_inverse, cpu_counts] = at::_unique2(a, true, true, true);
  ExpectClose(values, cpu_values);
  ExpectClose(inverse, cpu_inverse);
  ExpectClose(counts, cpu_counts);
  EXPECT_GT(Counter("aten::_unique2"), 0) << Join(metrics::CounterNames());
}

TEST_F(FallbackTest, CatFallsBackOrIsLowered) {
  // cat is not in xla_native_functions.yaml, so it runs on the CPU.
  at::Tensor a = at::randn({2, 3}), b = at::randn({1, 3});
  ExpectClose(at::cat({ToXla(a), ToXla(b)}, 0), at::cat({a, b}, 0));
  ExpectClose(at::cat({ToXla(a), ToXla(a) + 1}, 1), at::cat({a, a + 1}, 1));
  EXPECT_GT(Counter("aten::cat") + Counter("xla::cat"), 0) << Join(metrics::CounterNames());
}

TEST_F(FallbackTest, InPlaceFallbackWritesBackToTheDevice) {
  // gcd (Euclid's algorithm, a data-dependent loop) has no lowering.
  at::Tensor a = at::randint(1, 60, {3, 5}, at::kLong), b = at::randint(1, 60, {3, 5}, at::kLong);
  at::Tensor xa = ToXla(a);
  xa.gcd_(ToXla(b));
  a.gcd_(b);
  ExpectClose(xa, a);
  EXPECT_GT(Counter("aten::gcd_") + Counter("aten::gcd"), 0) << Join(metrics::CounterNames());
}

TEST_F(FallbackTest, LoweredOpsLeaveFallbackCountersAlone) {
  at::Tensor xa = ToXla(at::randn({2, 2}));
  (xa + xa).mm(xa).cpu();
  ExpectNoFallback();
  ExpectCounterUnchanged("aten::add");
  ExpectCounterUnchanged("aten::mm");
}

}  // namespace
}  // namespace torch_xla::test
