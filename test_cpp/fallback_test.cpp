// Ops without a lowering run through the CPU fallback: they bump "aten::<op>" and still give
// the right value, on the right device, usable by later lowered ops.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class FallbackTest : public XlaTest {};

TEST_F(FallbackTest, CumsumFallsBackAndIsCorrect) {
  at::Tensor a = at::randn({3, 4});
  at::Tensor xa = ToXla(a);
  at::Tensor result = at::cumsum(xa, 1);
  EXPECT_TRUE(result.device().is_xla());
  ExpectClose(result, at::cumsum(a, 1), 1e-5, 1e-5);
  ExpectCounterChanged("aten::cumsum");
  ExpectCounterUnchanged("xla::cumsum");
  // The fallback result feeds lowered ops.
  ExpectClose(at::cumsum(xa, 0) * 2 + xa, at::cumsum(a, 0) * 2 + a, 1e-5, 1e-5);
}

TEST_F(FallbackTest, SortFallsBackWithTwoOutputs) {
  at::Tensor a = at::tensor({3.0f, -1.0f, 2.0f, 8.0f, 0.5f, -4.0f}).reshape({2, 3});
  auto [values, indices] = at::sort(ToXla(a), /*dim=*/1, /*descending=*/true);
  auto [cpu_values, cpu_indices] = at::sort(a, 1, true);
  ExpectClose(values, cpu_values);
  ExpectClose(indices, cpu_indices);
  EXPECT_GT(Counter("aten::sort"), 0) << Join(metrics::CounterNames());
}

TEST_F(FallbackTest, CatFallsBackOrIsLowered) {
  // cat is not in xla_native_functions.yaml, so it runs on the CPU.
  at::Tensor a = at::randn({2, 3}), b = at::randn({1, 3});
  ExpectClose(at::cat({ToXla(a), ToXla(b)}, 0), at::cat({a, b}, 0));
  ExpectClose(at::cat({ToXla(a), ToXla(a) + 1}, 1), at::cat({a, a + 1}, 1));
  EXPECT_GT(Counter("aten::cat") + Counter("xla::cat"), 0) << Join(metrics::CounterNames());
}

TEST_F(FallbackTest, InPlaceFallbackWritesBackToTheDevice) {
  at::Tensor a = at::randn({5});
  at::Tensor xa = ToXla(a);
  xa.cumsum_(0);
  a.cumsum_(0);
  ExpectClose(xa, a, 1e-5, 1e-5);
  EXPECT_GT(Counter("aten::cumsum_") + Counter("aten::cumsum"), 0) << Join(metrics::CounterNames());
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
