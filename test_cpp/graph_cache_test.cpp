// The lazy graph: GetStableHlo shows the pending computation, and running the same graph
// again (with new data) reuses the compiled executable ("CachedCompile").
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class GraphCacheTest : public XlaTest {};

TEST_F(GraphCacheTest, StableHloOfPendingGraph) {
  at::Tensor a = ToXla(at::randn({2, 3})), b = ToXla(at::randn({2, 3}));
  at::Tensor c = (a + b).mm(b.t());
  std::string hlo = GetStableHlo({c});
  EXPECT_NE(hlo.find("stablehlo.add"), std::string::npos) << hlo;
  EXPECT_NE(hlo.find("stablehlo.dot_general"), std::string::npos) << hlo;
  EXPECT_NE(hlo.find("func.func"), std::string::npos) << hlo;
  EXPECT_NE(hlo.find("tensor<2x2xf32>"), std::string::npos) << hlo;
  // Asking for the text neither runs nor breaks the graph.
  ExpectClose(c, (a.cpu() + b.cpu()).mm(b.cpu().t()), 1e-5, 1e-5);
}

TEST_F(GraphCacheTest, SecondIdenticalGraphHitsTheCache) {
  auto step = [](const at::Tensor& x, const at::Tensor& w) { return at::tanh(x.mm(w) * 0.5 - 1).sum(1); };
  at::Tensor x1 = at::randn({4, 3}), w1 = at::randn({3, 2});
  at::Tensor y1 = step(ToXla(x1), ToXla(w1));
  Sync(/*wait=*/true);
  int64_t cached = Counter("CachedCompile"), uncached = Counter("UncachedCompile");
  EXPECT_GE(cached + uncached, 1);

  at::Tensor x2 = at::randn({4, 3}), w2 = at::randn({3, 2});
  at::Tensor y2 = step(ToXla(x2), ToXla(w2));
  Sync(/*wait=*/true);
  EXPECT_EQ(Counter("CachedCompile"), cached + 1);
  EXPECT_EQ(Counter("UncachedCompile"), uncached);
  ExpectClose(y1, step(x1, w1), 1e-5, 1e-5);
  ExpectClose(y2, step(x2, w2), 1e-5, 1e-5);  // new data, not the first run's result
}

TEST_F(GraphCacheTest, DifferentShapeCompilesAgain) {
  at::Tensor a = ToXla(at::randn({5, 7}));
  at::Tensor y = at::exp(a) + a;
  Sync(/*wait=*/true);
  int64_t uncached = Counter("UncachedCompile");
  at::Tensor b = ToXla(at::randn({7, 5}));
  at::Tensor z = at::exp(b) + b;
  Sync(/*wait=*/true);
  // A new shape is a new graph (unless an earlier test in this process compiled it).
  EXPECT_GE(Counter("UncachedCompile") + Counter("CachedCompile"), uncached + 1);
  ExpectClose(z, at::exp(b.cpu()) + b.cpu(), 1e-5, 1e-5);
}

TEST_F(GraphCacheTest, SyncWithNothingPendingIsHarmless) {
  Sync(/*wait=*/true);
  Sync(/*wait=*/false);
  WaitDeviceOps();
  EXPECT_EQ(DeviceKind(), "CPU");
}

}  // namespace
}  // namespace torch_xla::test
