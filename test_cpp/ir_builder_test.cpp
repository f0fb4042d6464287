// Shape rules of the IR builders: bad arguments throw std::invalid_argument naming the
// operation and the shapes, before anything reaches the XLA compiler.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "ir/builder.h"
#include "ir/builder_convolution.h"

namespace torch_xla::ir {
namespace {

std::string MessageOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected std::invalid_argument";
  return "";
}

Value Matrix() { return Constant(1.0, Shape(ElementType::kF32, {2, 3})); }

TEST(IrBuilderTest, PadNeedsOneEntryPerDimension) {
  std::string m = MessageOf([] { Pad(Matrix(), Constant(0, Shape(ElementType::kF32, {})), {1}, {1}, {0}); });
  EXPECT_NE(m.find("pad"), std::string::npos) << m;
  EXPECT_NE(m.find("f32[2, 3]"), std::string::npos) << m;
  MessageOf([] { Pad(Matrix(), Constant(0, Shape(ElementType::kF32, {})), {0, 0}, {0, 0}, {-1, 0}); });
  Value ok = Pad(Matrix(), Constant(0, Shape(ElementType::kF32, {})), {1, 0}, {0, 2}, {1, 0});
  EXPECT_EQ(ok.shape().dims, (std::vector<int64_t>{4, 5}));
}

Value ZeroPad(const Value& v, std::vector<int64_t> low, std::vector<int64_t> high) {
  return Pad(v, Constant(0, Shape(ElementType::kF32, {})), low, high, std::vector<int64_t>(low.size(), 0));
}

TEST(IrBuilderTest, AddOfAdjacentZeroPaddingsIsOnePaddedConcatenation) {
  Value a = Constant(1.0, Shape(ElementType::kF32, {1, 3})), b = Constant(2.0, Shape(ElementType::kF32, {2, 3}));
  // a fills row 3, b rows 1-2 of a [5, 3] result: pad(concatenate(b, a)) with low 1, high 1.
  Value sum = Binary(op::kAdd, ZeroPad(a, {3, 0}, {1, 0}), ZeroPad(b, {1, 0}, {2, 0}));
  ASSERT_EQ(sum.node->op().name(), "stablehlo.pad");
  const PadAttrs padding = PadAttrs::FromAttrs(sum.node->attrs());
  EXPECT_EQ(padding.low, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(padding.high, (std::vector<int64_t>{1, 0}));
  const Value& joined = sum.node->operand(0);
  ASSERT_EQ(joined.node->op().name(), "stablehlo.concatenate");
  EXPECT_EQ(joined.node->operand(0).node, b.node);
  EXPECT_EQ(joined.node->operand(1).node, a.node);
  // Covering the whole dimension, the padding disappears.
  Value whole = Binary(op::kAdd, ZeroPad(a, {0, 0}, {2, 0}), ZeroPad(b, {1, 0}, {0, 0}));
  EXPECT_EQ(whole.node->op().name(), "stablehlo.concatenate");
  // Overlapping, gapped, differing in two dimensions or padded with non-zero: a plain add.
  EXPECT_EQ(Binary(op::kAdd, ZeroPad(a, {1, 0}, {1, 0}), ZeroPad(b, {1, 0}, {0, 0})).node->op(), op::kAdd);
  EXPECT_EQ(Binary(op::kAdd, ZeroPad(a, {0, 0}, {3, 0}), ZeroPad(b, {2, 0}, {0, 0})).node->op(), op::kAdd);
  EXPECT_EQ(Binary(op::kAdd, ZeroPad(a, {0, 0}, {2, 1}), ZeroPad(b, {1, 1}, {0, 0})).node->op(), op::kAdd);
  Value ones = Pad(a, Constant(1, Shape(ElementType::kF32, {})), {0, 0}, {2, 0}, {0, 0});
  EXPECT_EQ(Binary(op::kAdd, ones, ZeroPad(b, {1, 0}, {0, 0})).node->op(), op::kAdd);
  // A multiply of the same operands is left alone.
  EXPECT_EQ(Binary(op::kMultiply, ZeroPad(a, {0, 0}, {2, 0}), ZeroPad(b, {1, 0}, {0, 0})).node->op(), op::kMultiply);
}

TEST(IrBuilderTest, BroadcastInDimChecksSizes) {
  std::string m = MessageOf([] { BroadcastInDim(Matrix(), {4, 3}, {0, 1}); });
  EXPECT_NE(m.find("broadcast_in_dim"), std::string::npos) << m;
  MessageOf([] { BroadcastInDim(Matrix(), {2, 3}, {0, 2}); });
  Value ok = BroadcastInDim(Constant(1.0, Shape(ElementType::kF32, {1, 3})), {5, 2, 3}, {1, 2});
  EXPECT_EQ(ok.shape().dims, (std::vector<int64_t>{5, 2, 3}));
}

TEST(IrBuilderTest, SingleChannelTapsChecksShapesAndComputesTheOutputSize) {
  auto tensor = [](std::vector<int64_t> dims, ElementType type = ElementType::kF32) {
    return Constant(1.0, Shape(type, std::move(dims)));
  };
  // 28x28 with a 5x5 kernel, stride (2, 1), padding (1, 0), dilation (1, 2).
  Value ok = SingleChannelTaps(tensor({4, 1, 28, 28}), tensor({10, 1, 5, 5}), {2, 1}, {1, 0}, {1, 2});
  EXPECT_EQ(ok.shape().dims, (std::vector<int64_t>{4, 10, 13, 20}));
  std::string m = MessageOf([&] { SingleChannelTaps(tensor({4, 3, 28, 28}), tensor({10, 3, 5, 5}), {1, 1}, {0, 0}, {1, 1}); });
  EXPECT_NE(m.find("one input channel"), std::string::npos) << m;
  EXPECT_NE(m.find("f32[4, 3, 28, 28]"), std::string::npos) << m;
  m = MessageOf([&] { SingleChannelTaps(tensor({4, 1, 4, 4}), tensor({10, 1, 5, 5}), {1, 1}, {0, 0}, {1, 1}); });
  EXPECT_NE(m.find("exceeds the padded input"), std::string::npos) << m;
  MessageOf([&] { SingleChannelTaps(tensor({4, 1, 8, 8}), tensor({10, 1, 3, 3}), {0, 1}, {0, 0}, {1, 1}); });
  MessageOf([&] { SingleChannelTaps(tensor({4, 1, 8, 8}), tensor({10, 1, 3, 3}), {1}, {0}, {1}); });
  MessageOf([&] {
    SingleChannelTaps(tensor({4, 1, 8, 8}), tensor({10, 1, 3, 3}, ElementType::kBF16), {1, 1}, {0, 0}, {1, 1});
  });
}

}  // namespace
}  // namespace torch_xla::ir
