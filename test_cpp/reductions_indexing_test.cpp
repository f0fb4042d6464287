// Reductions, indexing and sorting from LibTorch on the XLA device: results against the
// same ops on the CPU, the xla::<op> counters, and no CPU fallback.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class ReductionsIndexingTest : public XlaTest {};

TEST_F(ReductionsIndexingTest, VarStdMaxArgmax) {
  at::Tensor a = at::randn({4, 6});
  at::Tensor xa = ToXla(a);
  ExpectClose(at::var(xa, {1}, /*unbiased=*/true, /*keepdim=*/false), at::var(a, {1}, true, false));
  ExpectClose(at::std(xa), at::std(a));
  auto [values, indices] = at::max(xa, 1);
  auto [cpu_values, cpu_indices] = at::max(a, 1);
  ExpectClose(values, cpu_values);
  ExpectClose(indices, cpu_indices);
  ExpectClose(at::argmin(xa, 0), at::argmin(a, 0));
  ExpectClose(at::amax(xa, {0}), at::amax(a, {0}));
  ExpectClose(at::logsumexp(xa, {1}), at::logsumexp(a, {1}));
  ExpectClose(at::cumsum(xa, 1), at::cumsum(a, 1));
  at::Tensor i = at::arange(0, 24, at::kLong).reshape({4, 6}) - 7;
  ExpectClose(at::min(ToXla(i)), at::min(i));
  ExpectClose(at::prod(at::clamp(ToXla(i), 1, 3), 1), at::prod(at::clamp(i, 1, 3), 1));
  ExpectClose(at::any(ToXla(i) > 10, 1), at::any(i > 10, 1));
  for (const char* op : {"xla::var", "xla::std", "xla::max", "xla::argmin", "xla::amax", "xla::logsumexp",
                         "xla::cumsum", "xla::min", "xla::prod", "xla::any"})
    ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(ReductionsIndexingTest, GatherScatterIndexSelect) {
  at::Tensor a = at::randn({4, 5});
  at::Tensor idx = at::tensor({0, 3, 3, 1, 2, 0}, at::kLong).reshape({2, 3});
  at::Tensor xa = ToXla(a), xidx = ToXla(idx);
  ExpectClose(at::gather(xa, 0, xidx), at::gather(a, 0, idx));
  at::Tensor src = at::randn({2, 3});
  ExpectClose(at::scatter_add(xa, 0, xidx, ToXla(src)), at::scatter_add(a, 0, idx, src));
  at::Tensor rows = at::tensor({3, 0, 3}, at::kLong);
  ExpectClose(at::index_select(xa, 0, ToXla(rows)), at::index_select(a, 0, rows));
  ExpectClose(xa.index({ToXla(rows)}), a.index({rows}));
  at::Tensor mask = a > 0;
  ExpectClose(xa.masked_fill(ToXla(mask), -1.0), a.masked_fill(mask, -1.0));
  for (const char* op : {"xla::gather", "xla::scatter_add", "xla::index_select", "xla::index", "xla::masked_fill"})
    ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(ReductionsIndexingTest, SortAndTopk) {
  at::Tensor a = at::randperm(20, at::kLong).reshape({4, 5}).to(at::kFloat);
  at::Tensor xa = ToXla(a);
  auto [v, i] = at::sort(xa, /*dim=*/1, /*descending=*/true);
  auto [cv, ci] = at::sort(a, 1, true);
  ExpectClose(v, cv);
  ExpectClose(i, ci);
  auto [tv, ti] = at::topk(xa, 2, 0);
  auto [ctv, cti] = at::topk(a, 2, 0);
  ExpectClose(tv, ctv);
  ExpectClose(ti, cti);
  ExpectCounterChanged("xla::sort");
  ExpectCounterChanged("xla::topk");
  ExpectNoFallback();
}

TEST_F(ReductionsIndexingTest, BadInputRaises) {
  at::Tensor xa = ToXla(at::randn({3, 4}));
  EXPECT_THROW(at::gather(xa, 1, ToXla(at::zeros({3, 4}, at::kFloat))), c10::Error);
  EXPECT_THROW(at::topk(xa, 5, 1), c10::Error);
  EXPECT_THROW(at::max(ToXla(at::empty({0}))), c10::Error);
  // The process lives on: a valid op still runs.
  ExpectClose(at::argmax(xa), at::argmax(xa.cpu()));
}

}  // namespace
}  // namespace torch_xla::test
