// Ops without a lowering run through the CPU fallback: they bump "aten::<op>" and still give
// the right value, on the right device, usable by later lowered ops.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class FallbackTest : public XlaTest {};

TEST_F(FallbackTest, LogcumsumexpFallsBackAndIsCorrect) {
  at::Tensor a = at::randn({3, 4});
  at::Tensor xa = ToXla(a);
  at::Tensor result = at::logcumsumexp(xa, 1);
  EXPECT_TRUE(result.device().is_xla());
  ExpectClose(result, at::logcumsumexp(a, 1), 1e-5, 1e-5);
  ExpectCounterChanged("aten::_logcumsumexp");
  ExpectCounterUnchanged("xla::_logcumsumexp");
  // The fallback result feeds lowered ops.
  ExpectClose(at::logcumsumexp(xa, 0) * 2 + xa, at::logcumsumexp(a, 0) * 2 + a, 1e-5, 1e-5);
}

TEST_F(FallbackTest, CummaxFallsBackWithTwoOutputs) {
  at::Tensor a = at::tensor({3.0f, -1.0f, 2.0f, 8.0f, 0.5f, -4.0f}).reshape({2, 3});
  auto [values, indices] = at::cummax(ToXla(a), /*dim=*/1);
  auto [cpu_values, cpu_indices] = at::cummax(a, 1);
  ExpectClose(values, cpu_values);
  ExpectClose(indices, cpu_indices);
  EXPECT_GT(Counter("aten::_cummax_helper"), 0) << Join(metrics::CounterNames());
}

TEST_F(FallbackTest, CatFallsBackOrIsLowered) {
  // cat is not in xla_native_functions.yaml, so it runs on the CPU.
  at::Tensor a = at::randn({2, 3}), b = at::randn({1, 3});
  ExpectClose(at::cat({ToXla(a), ToXla(b)}, 0), at::cat({a, b}, 0));
  ExpectClose(at::cat({ToXla(a), ToXla(a) + 1}, 1), at::cat({a, a + 1}, 1));
  EXPECT_GT(Counter("aten::cat") + Counter("xla::cat"), 0) << Join(metrics::CounterNames());
}

TEST_F(FallbackTest, InPlaceFallbackWritesBackToTheDevice) {
  at::Tensor a = at::randn({3, 5});
  at::Tensor xa = ToXla(a);
  xa.renorm_(2, 0, 0.5);
  a.renorm_(2, 0, 0.5);
  ExpectClose(xa, a, 1e-5, 1e-5);
  EXPECT_GT(Counter("aten::renorm_") + Counter("aten::renorm"), 0) << Join(metrics::CounterNames());
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
