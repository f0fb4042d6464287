// stablehlo.while over IR regions (ir/region.h): a loop whose trip count is computed on
// the device, nested loops, and the builder's checks of its regions.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "aten/bridge.h"
#include "ir/builder.h"
#include "ir/builder_indexing.h"
#include "ir/region.h"
#include "xla_test_util.h"

namespace torch_xla {
namespace {

using ir::Value;
using runtime::ElementType;

Value S64(double v) { return ir::Constant(v, ir::Shape(ElementType::kS64, {})); }

// acc_i = 1 + 2 + ... + n_i for n = [1, 2, 3, 4]: max(n) steps, each element adding
// k + 1 while k < n_i.
TEST(WhileLoopTest, TripCountComputedOnTheDevice) {
  at::Tensor n = test::ToXla(at::tensor({1.0f, 2.0f, 3.0f, 4.0f}));
  Value nv = GetXlaTensor(n)->GetIrValue();
  Value n_max = ir::Reduce(ir::ReduceKind::kMax, ir::Convert(nv, ElementType::kS64), {0});
  Value acc0 = ir::Constant(0, ir::Shape(ElementType::kF32, {4}));
  std::vector<Value> out = ir::While(
      {S64(0), n_max, nv, acc0},
      [](const std::vector<Value>& c) { return ir::Compare(ir::CompareDirection::kLt, c[0], c[1]); },
      [](const std::vector<Value>& c) {
        Value kf = ir::Broadcast(ir::Convert(c[0], ElementType::kF32), {4});
        Value one = ir::Constant(1, ir::Shape(ElementType::kF32, {4}));
        Value zero = ir::Constant(0, ir::Shape(ElementType::kF32, {4}));
        Value add = ir::Select(ir::Compare(ir::CompareDirection::kLt, kf, c[2]), ir::Binary(ir::op::kAdd, kf, one), zero);
        return std::vector<Value>{ir::Binary(ir::op::kAdd, c[0], S64(1)), c[1], c[2], ir::Binary(ir::op::kAdd, c[3], add)};
      });
  EXPECT_TRUE(at::equal(AtenFromIr(out[3], 0).cpu(), at::tensor({1.0f, 3.0f, 6.0f, 10.0f})));
  EXPECT_EQ(AtenFromIr(out[0], 0).cpu().item<int64_t>(), 4);
}

// A loop inside a loop's body: sum over i < 3 of (sum over j < i + 2 of 1) = 2 + 3 + 4.
TEST(WhileLoopTest, NestedLoops) {
  auto lt = [](const std::vector<Value>& c) { return ir::Compare(ir::CompareDirection::kLt, c[0], c[1]); };
  std::vector<Value> out = ir::While({S64(0), S64(3), S64(0)}, lt, [&](const std::vector<Value>& c) {
    Value bound = ir::Binary(ir::op::kAdd, c[0], S64(2));
    std::vector<Value> inner = ir::While({S64(0), bound, c[2]}, lt, [](const std::vector<Value>& d) {
      return std::vector<Value>{ir::Binary(ir::op::kAdd, d[0], S64(1)), d[1], ir::Binary(ir::op::kAdd, d[2], S64(1))};
    });
    return std::vector<Value>{ir::Binary(ir::op::kAdd, c[0], S64(1)), c[1], inner[2]};
  });
  EXPECT_EQ(AtenFromIr(out[2], 0).cpu().item<int64_t>(), 9);
}

TEST(WhileLoopTest, ZeroTripsKeepsTheInitialValues) {
  at::Tensor x = test::ToXla(at::tensor({5.0f, -2.0f}));
  Value xv = GetXlaTensor(x)->GetIrValue();
  std::vector<Value> out = ir::While(
      {S64(7), xv}, [](const std::vector<Value>& c) { return ir::Compare(ir::CompareDirection::kLt, c[0], S64(0)); },
      [](const std::vector<Value>& c) { return std::vector<Value>{c[0], ir::Unary(ir::op::kNegate, c[1])}; });
  EXPECT_TRUE(at::equal(AtenFromIr(out[1], 0).cpu(), at::tensor({5.0f, -2.0f})));
}

// The graph cache keys on node hashes: loops that differ only inside a region differ.
TEST(WhileLoopTest, HashCoversTheRegions) {
  auto lt = [](const std::vector<Value>& c) { return ir::Compare(ir::CompareDirection::kLt, c[0], S64(3)); };
  auto adding = [](double step) {
    return [step](const std::vector<Value>& c) { return std::vector<Value>{ir::Binary(ir::op::kAdd, c[0], S64(step))}; };
  };
  Value one = ir::While({S64(0)}, lt, adding(1))[0];
  Value one_again = ir::While({S64(0)}, lt, adding(1))[0];
  Value two = ir::While({S64(0)}, lt, adding(2))[0];
  EXPECT_EQ(one.hash(), one_again.hash());
  EXPECT_NE(one.hash(), two.hash());
  EXPECT_EQ(AtenFromIr(two, 0).cpu().item<int64_t>(), 4);
}

std::string MessageOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected std::invalid_argument";
  return "";
}

// A scan: row i of the result is the sum of rows 0..i of x, each step reading its row
// with dynamic_slice and writing it with dynamic_update_slice at the loop counter.
TEST(WhileLoopTest, RowsReadAndWrittenAtTheCounter) {
  at::Tensor x = at::arange(12, at::kFloat).reshape({4, 3});
  Value xv = GetXlaTensor(test::ToXla(x))->GetIrValue();
  Value zero = ir::Constant(0, ir::Shape(ElementType::kF32, {4, 3}));
  Value running = ir::Constant(0, ir::Shape(ElementType::kF32, {1, 3}));
  std::vector<Value> out = ir::While(
      {S64(0), xv, zero, running},
      [](const std::vector<Value>& c) { return ir::Compare(ir::CompareDirection::kLt, c[0], S64(4)); },
      [](const std::vector<Value>& c) {
        Value sum = ir::Binary(ir::op::kAdd, c[3], ir::DynamicSlice(c[1], {c[0], S64(0)}, {1, 3}));
        return std::vector<Value>{ir::Binary(ir::op::kAdd, c[0], S64(1)), c[1],
                                  ir::DynamicUpdateSlice(c[2], sum, {c[0], S64(0)}), sum};
      });
  EXPECT_TRUE(at::equal(AtenFromIr(out[2], 0).cpu(), x.cumsum(0)));
}

// Starts that would put the block outside the operand are clamped (XLA's semantics).
TEST(WhileLoopTest, DynamicSliceClampsItsStart) {
  at::Tensor x = at::arange(6, at::kFloat);
  Value xv = GetXlaTensor(test::ToXla(x))->GetIrValue();
  EXPECT_TRUE(at::equal(AtenFromIr(ir::DynamicSlice(xv, {S64(5)}, {2}), 0).cpu(), x.slice(0, 4, 6)));
  Value two = ir::Constant(-1, ir::Shape(ElementType::kF32, {2}));
  at::Tensor updated = AtenFromIr(ir::DynamicUpdateSlice(xv, two, {S64(-3)}), 0).cpu();
  EXPECT_TRUE(at::equal(updated, at::tensor({-1.0f, -1.0f, 2.0f, 3.0f, 4.0f, 5.0f})));
}

TEST(WhileLoopTest, DynamicSliceChecksItsArguments) {
  at::Tensor x = test::ToXla(at::zeros({4, 3}));
  Value xv = GetXlaTensor(x)->GetIrValue();
  std::string m = MessageOf([&] { ir::DynamicSlice(xv, {S64(0)}, {1, 3}); });
  EXPECT_NE(m.find("dynamic_slice: 1 start indices for rank 2"), std::string::npos) << m;
  m = MessageOf([&] { ir::DynamicSlice(xv, {S64(0), S64(0)}, {5, 3}); });
  EXPECT_NE(m.find("sizes exceed the operand"), std::string::npos) << m;
  Value f = ir::Constant(0, ir::Shape(ElementType::kF32, {}));
  m = MessageOf([&] { ir::DynamicSlice(xv, {S64(0), f}, {1, 3}); });
  EXPECT_NE(m.find("integer scalars of one type"), std::string::npos) << m;
  m = MessageOf([&] { ir::DynamicUpdateSlice(xv, ir::Constant(0, ir::Shape(ElementType::kF32, {5, 3})), {S64(0), S64(0)}); });
  EXPECT_NE(m.find("dynamic_update_slice: update larger than the operand"), std::string::npos) << m;
}

TEST(WhileLoopTest, RegionsAreChecked) {
  auto lt = [](const std::vector<Value>& c) { return ir::Compare(ir::CompareDirection::kLt, c[0], S64(3)); };
  auto step = [](const std::vector<Value>& c) { return std::vector<Value>{ir::Binary(ir::op::kAdd, c[0], S64(1))}; };
  // A condition that is not a pred[] scalar.
  std::string m = MessageOf([&] { ir::While({S64(0)}, [](const std::vector<Value>& c) { return c[0]; }, step); });
  EXPECT_NE(m.find("pred[]"), std::string::npos) << m;
  // A body whose results differ from the carried values.
  m = MessageOf([&] {
    ir::While({S64(0)}, lt, [](const std::vector<Value>& c) { return std::vector<Value>{ir::Convert(c[0], ElementType::kF32)}; });
  });
  EXPECT_NE(m.find("body returns"), std::string::npos) << m;
  // A region that reads a graph input instead of a carried value.
  at::Tensor x = test::ToXla(at::tensor({1.0f}));
  Value outer = GetXlaTensor(x)->GetIrValue();
  m = MessageOf([&] {
    ir::While({S64(0)}, lt, [&](const std::vector<Value>& c) {
      Value k = ir::Convert(ir::Reduce(ir::ReduceKind::kSum, outer, {0}), ElementType::kS64);
      return std::vector<Value>{ir::Binary(ir::op::kAdd, c[0], k)};
    });
  });
  EXPECT_NE(m.find("graph input"), std::string::npos) << m;
  EXPECT_NE(MessageOf([] { ir::While({}, nullptr, nullptr); }).find("no carried values"), std::string::npos);
}

}  // namespace
}  // namespace torch_xla
