// The attribute structs of the IR nodes: each constructor stores its struct's layout
// (the graph hash covers it, so a change of layout changes every cached graph's key),
// FromAttrs reads back what the constructor was given, and malformed attributes throw
// std::invalid_argument naming the op.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/max_pool_kernel.h"
#include "ir/builder.h"
#include "ir/builder_collectives.h"
#include "ir/builder_complex.h"
#include "ir/builder_convolution.h"
#include "ir/builder_indexing.h"
#include "ir/builder_pooling.h"

namespace torch_xla::ir {
namespace {

using Ints = std::vector<int64_t>;

Value Tensor(Ints dims, ElementType type = ElementType::kF32) { return Constant(1.5, Shape(type, std::move(dims))); }

Attrs IntAttrs(Ints ints) {
  Attrs attrs;
  attrs.ints = std::move(ints);
  return attrs;
}

void ExpectMalformed(const char* op, const std::function<void()>& read) {
  try {
    read();
    ADD_FAILURE() << "expected std::invalid_argument naming " << op;
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(std::string(op) + ": ", 0), 0u) << e.what();
  }
}

TEST(IrAttrsTest, ShapeOps) {
  const Value m = Tensor({4, 6});

  Value b = BroadcastInDim(Tensor({3}), {2, 3}, {1});
  EXPECT_EQ(b.node->attrs().ints, (Ints{1}));
  EXPECT_EQ(BroadcastInDimAttrs::FromAttrs(b.node->attrs()).broadcast_dims, (Ints{1}));

  Value t = Transpose(Tensor({2, 3, 4}), {2, 0, 1});
  EXPECT_EQ(t.node->attrs().ints, (Ints{2, 0, 1}));
  EXPECT_EQ(TransposeAttrs::FromAttrs(t.node->attrs()).permutation, (Ints{2, 0, 1}));

  Value s = Slice(m, {1, 0}, {3, 6}, {1, 2});
  EXPECT_EQ(s.node->attrs().ints, (Ints{1, 0, 3, 6, 1, 2}));
  const SliceAttrs sa = SliceAttrs::FromAttrs(s.node->attrs());
  EXPECT_EQ(sa.start, (Ints{1, 0}));
  EXPECT_EQ(sa.limit, (Ints{3, 6}));
  EXPECT_EQ(sa.strides, (Ints{1, 2}));
  ExpectMalformed("slice", [] { SliceAttrs::FromAttrs(IntAttrs({1, 2})); });

  Value c = Concatenate({m, Tensor({4, 2})}, 1);
  EXPECT_EQ(c.node->attrs().ints, (Ints{1}));
  EXPECT_EQ(ConcatenateAttrs::FromAttrs(c.node->attrs()).dim, 1);
  ExpectMalformed("concatenate", [] { ConcatenateAttrs::FromAttrs(IntAttrs({})); });
  ExpectMalformed("concatenate", [] { ConcatenateAttrs::FromAttrs(IntAttrs({0, 1})); });

  Value p = Pad(m, Constant(0, Shape(ElementType::kF32, {})), {1, -1}, {0, 2}, {1, 0});
  EXPECT_EQ(p.node->attrs().ints, (Ints{1, -1, 0, 2, 1, 0}));
  const PadAttrs pa = PadAttrs::FromAttrs(p.node->attrs());
  EXPECT_EQ(pa.low, (Ints{1, -1}));
  EXPECT_EQ(pa.high, (Ints{0, 2}));
  EXPECT_EQ(pa.interior, (Ints{1, 0}));
  ExpectMalformed("pad", [] { PadAttrs::FromAttrs(IntAttrs({0, 0, 0, 0})); });
  ExpectMalformed("pad", [] { PadAttrs{{0}, {0, 1}, {0}}.ToAttrs(); });

  Value r = Reverse(m, {1});
  EXPECT_EQ(r.node->attrs().ints, (Ints{1}));
  EXPECT_EQ(ReverseAttrs::FromAttrs(r.node->attrs()).dims, (Ints{1}));

  Value i = Iota(Shape(ElementType::kS64, {3, 5}), 1);
  EXPECT_EQ(i.node->attrs().ints, (Ints{1}));
  EXPECT_EQ(IotaAttrs::FromAttrs(i.node->attrs()).dim, 1);

  Attrs with_floats = IntAttrs({1});
  with_floats.floats = {2.0};
  ExpectMalformed("iota", [&] { IotaAttrs::FromAttrs(with_floats); });
}

TEST(IrAttrsTest, CompareReduceAndDotGeneral) {
  Value c = Compare(CompareDirection::kGt, Tensor({3}), Tensor({3}));
  EXPECT_EQ(c.node->attrs().ints, (Ints{3}));
  EXPECT_EQ(CompareAttrs::FromAttrs(c.node->attrs()).direction, CompareDirection::kGt);
  ExpectMalformed("compare", [] { CompareAttrs::FromAttrs(IntAttrs({6})); });

  Value r = Reduce(ReduceKind::kMax, Tensor({2, 3, 4}), {2, 0, 2});
  EXPECT_EQ(r.node->attrs().ints, (Ints{2, 0, 2}));  // kMax, then the dims sorted
  const ReduceAttrs ra = ReduceAttrs::FromAttrs(r.node->attrs());
  EXPECT_EQ(ra.kind, ReduceKind::kMax);
  EXPECT_EQ(ra.dims, (Ints{0, 2}));
  ExpectMalformed("reduce", [] { ReduceAttrs::FromAttrs(IntAttrs({})); });
  ExpectMalformed("reduce", [] { ReduceAttrs::FromAttrs(IntAttrs({9, 0})); });

  Value d = DotGeneral(Tensor({5, 2, 3}), Tensor({5, 3, 4}), {0}, {0}, {2}, {1}, ElementType::kF32);
  EXPECT_EQ(d.node->attrs().ints, (Ints{1, 0, 0, 1, 2, 1}));
  const DotGeneralAttrs da = DotGeneralAttrs::FromAttrs(d.node->attrs());
  EXPECT_EQ(da.lhs_batch, (Ints{0}));
  EXPECT_EQ(da.rhs_batch, (Ints{0}));
  EXPECT_EQ(da.lhs_contract, (Ints{2}));
  EXPECT_EQ(da.rhs_contract, (Ints{1}));
  ExpectMalformed("dot_general", [] { DotGeneralAttrs::FromAttrs(IntAttrs({1, 0, 0, 1, 2})); });
  ExpectMalformed("dot_general", [] { DotGeneralAttrs::FromAttrs(IntAttrs({-1})); });
  ExpectMalformed("dot_general", [] { DotGeneralAttrs::FromAttrs(IntAttrs({0, 0, 7})); });
}

TEST(IrAttrsTest, Convolutions) {
  Value c = Convolution(Tensor({2, 4, 9, 8}), Tensor({6, 2, 3, 2}), {2, 1}, {1, 0}, {0, 1}, {1, 1}, {1, 2}, 2, 1);
  EXPECT_EQ(c.node->attrs().ints, (Ints{2, 2, 1, 1, 0, 0, 1, 1, 1, 1, 2, 2, 1}));
  const ConvolutionAttrs ca = ConvolutionAttrs::FromAttrs(c.node->attrs());
  EXPECT_EQ(ca.window_strides, (Ints{2, 1}));
  EXPECT_EQ(ca.padding_low, (Ints{1, 0}));
  EXPECT_EQ(ca.padding_high, (Ints{0, 1}));
  EXPECT_EQ(ca.lhs_dilation, (Ints{1, 1}));
  EXPECT_EQ(ca.rhs_dilation, (Ints{1, 2}));
  EXPECT_EQ(ca.feature_group_count, 2);
  EXPECT_EQ(ca.batch_group_count, 1);
  ExpectMalformed("convolution", [] { ConvolutionAttrs::FromAttrs(IntAttrs({1, 1, 0, 0, 1, 1, 1})); });
  ExpectMalformed("convolution", [] { ConvolutionAttrs::FromAttrs(IntAttrs({1, 1, 0, 0, 1, 1, 1, 1, 1})); });

  Value t = SingleChannelTaps(Tensor({2, 1, 9, 8}), Tensor({5, 1, 3, 2}), {2, 1}, {1, 0}, {1, 2});
  EXPECT_EQ(t.node->attrs().ints, (Ints{2, 2, 1, 1, 0, 1, 2}));
  const SingleChannelTapsAttrs ta = SingleChannelTapsAttrs::FromAttrs(t.node->attrs());
  EXPECT_EQ(ta.stride, (Ints{2, 1}));
  EXPECT_EQ(ta.padding, (Ints{1, 0}));
  EXPECT_EQ(ta.dilation, (Ints{1, 2}));
  ExpectMalformed("single-channel taps", [] { SingleChannelTapsAttrs::FromAttrs(IntAttrs({2, 1, 1})); });
}

TEST(IrAttrsTest, GatherScatterAndSort) {
  const Value indices = Tensor({3, 1}, ElementType::kS64);
  Value g = Gather(Tensor({5, 4}), indices, {1}, {0}, {0}, 1, {1, 4});
  EXPECT_EQ(g.node->attrs().ints, (Ints{1, 1, 1, 1, 0, 1, 0, 1, 4}));
  const GatherAttrs ga = GatherAttrs::FromAttrs(g.node->attrs());
  EXPECT_EQ(ga.offset_dims, (Ints{1}));
  EXPECT_EQ(ga.collapsed_slice_dims, (Ints{0}));
  EXPECT_EQ(ga.start_index_map, (Ints{0}));
  EXPECT_EQ(ga.index_vector_dim, 1);
  EXPECT_EQ(ga.slice_sizes, (Ints{1, 4}));
  ExpectMalformed("gather", [] { GatherAttrs::FromAttrs(IntAttrs({1, 3, 0})); });

  Value s = Scatter(ScatterKind::kAdd, Tensor({5, 4}), indices, Tensor({3, 4}), {1}, {0}, {0}, 1);
  EXPECT_EQ(s.node->attrs().ints, (Ints{1, 1, 1, 1, 1, 0, 1, 0}));
  const ScatterAttrs sa = ScatterAttrs::FromAttrs(s.node->attrs());
  EXPECT_EQ(sa.kind, ScatterKind::kAdd);
  EXPECT_EQ(sa.index_vector_dim, 1);
  EXPECT_EQ(sa.update_window_dims, (Ints{1}));
  EXPECT_EQ(sa.inserted_window_dims, (Ints{0}));
  EXPECT_EQ(sa.scatter_dims_to_operand_dims, (Ints{0}));
  ExpectMalformed("scatter", [] { ScatterAttrs::FromAttrs(IntAttrs({1, 1, 1, 1, 1, 0, 1, 0, 5})); });

  std::vector<Value> sorted = Sort({Tensor({3, 4}), Tensor({3, 4}, ElementType::kS64)}, 1, true);
  EXPECT_EQ(sorted[0].node->attrs().ints, (Ints{1, 1}));
  const SortAttrs so = SortAttrs::FromAttrs(sorted[0].node->attrs());
  EXPECT_EQ(so.dim, 1);
  EXPECT_TRUE(so.descending);
  ExpectMalformed("sort", [] { SortAttrs::FromAttrs(IntAttrs({1})); });

  const Value start = Constant(1, Shape(ElementType::kS64, {}));
  Value d = DynamicSlice(Tensor({5, 4}), {start, start}, {2, 4});
  EXPECT_EQ(d.node->attrs().ints, (Ints{2, 4}));
  EXPECT_EQ(DynamicSliceAttrs::FromAttrs(d.node->attrs()).sizes, (Ints{2, 4}));
}

TEST(IrAttrsTest, PoolingAndFft) {
  Value w = ReduceWindowMax(Tensor({2, 6, 6}), {1, 2, 3}, {1, 2, 3});
  EXPECT_EQ(w.node->attrs().ints, (Ints{1, 2, 3, 1, 2, 3}));
  const ReduceWindowMaxAttrs wa = ReduceWindowMaxAttrs::FromAttrs(w.node->attrs());
  EXPECT_EQ(wa.window, (Ints{1, 2, 3}));
  EXPECT_EQ(wa.strides, (Ints{1, 2, 3}));
  ExpectMalformed("reduce_window", [] { ReduceWindowMaxAttrs::FromAttrs(IntAttrs({1, 2, 3})); });

  auto [maxima, at] = HostMaxPool(Tensor({2, 3, 8, 8}), {4, 4}, {2, 2}, {2, 2}, {0, 1}, {1, 1});
  EXPECT_EQ(maxima.node->attrs().ints, (Ints{2, 2, 2, 2, 2, 0, 1, 1, 1}));
  const host::MaxPoolConfig config = host::MaxPoolConfig::FromInts(maxima.node->attrs().ints);
  EXPECT_EQ(config.kernel, (Ints{2, 2}));
  EXPECT_EQ(config.stride, (Ints{2, 2}));
  EXPECT_EQ(config.padding, (Ints{0, 1}));
  EXPECT_EQ(config.dilation, (Ints{1, 1}));
  EXPECT_THROW(host::MaxPoolConfig::FromInts(Ints{2, 2, 2}), std::invalid_argument);
  EXPECT_THROW(host::MaxPoolConfig::FromInts(Ints{4, 1, 1, 1, 1}), std::invalid_argument);

  Value f = Fft(FftType::kRfft, Tensor({3, 8, 8}), {8, 8});
  EXPECT_EQ(f.node->attrs().ints, (Ints{2, 8, 8}));
  const FftAttrs fa = FftAttrs::FromAttrs(f.node->attrs());
  EXPECT_EQ(fa.type, FftType::kRfft);
  EXPECT_EQ(fa.lengths, (Ints{8, 8}));
  ExpectMalformed("fft", [] { FftAttrs::FromAttrs(IntAttrs({4, 8})); });
}

TEST(IrAttrsTest, Collectives) {
  Value g = AllGather(Tensor({4, 2}), 1, {{0, 1}, {2, 3}}, 4);
  EXPECT_EQ(g.node->attrs().ints, (Ints{0, 1, 0, 4, 2, 2, 0, 1, 2, 3}));
  const CollectiveAttrs a = CollectiveAttrs::FromAttrs(g.node->attrs());
  EXPECT_EQ(a.dim, 1);
  EXPECT_EQ(a.num_replicas, 4);
  EXPECT_EQ(a.groups, (ReplicaGroups{{0, 1}, {2, 3}}));
  ExpectMalformed("collective", [] { CollectiveAttrs::FromAttrs(IntAttrs({0, 1, 0, 4, 2, 2, 0, 1, 2})); });

  CrossProcessAttrs cp;
  cp.what = CrossProcessKind::kAllGather;
  cp.local_replicas = 2;
  cp.collective = a;
  const Attrs packed = cp.ToAttrs();
  EXPECT_EQ(packed.ints, (Ints{2, 2, 0, 1, 0, 4, 2, 2, 0, 1, 2, 3}));
  const CrossProcessAttrs back = CrossProcessAttrs::FromAttrs(packed);
  EXPECT_EQ(back.what, CrossProcessKind::kAllGather);
  EXPECT_EQ(back.local_replicas, 2);
  EXPECT_EQ(back.collective.groups, a.groups);
  ExpectMalformed("cross-process collective", [] { CrossProcessAttrs::FromAttrs(IntAttrs({2, 2})); });
}

}  // namespace
}  // namespace torch_xla::ir
