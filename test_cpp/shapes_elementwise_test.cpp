// Shape ops, element-wise math and an optimizer-style update from LibTorch on the XLA
// device, against eager CPU and the xla::/aten:: counters.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class ShapesElementwiseTest : public XlaTest {};

TEST_F(ShapesElementwiseTest, CatSplitFlipRollPad) {
  at::Tensor a = at::randn({2, 3}), b = at::randn({4, 3}).to(at::kDouble);
  at::Tensor xa = ToXla(a), xb = ToXla(b);
  ExpectClose(at::cat({xa, xb}), at::cat({a, b}));
  ExpectClose(at::stack({xa, xa}, 1), at::stack({a, a}, 1));
  std::vector<at::Tensor> parts = at::split(xb, 3), cpu_parts = at::split(b, 3);
  ASSERT_EQ(parts.size(), cpu_parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) ExpectClose(parts[i], cpu_parts[i]);
  ExpectClose(at::flip(xa, {0, 1}), at::flip(a, {0, 1}));
  ExpectClose(at::roll(xa, {1}, {1}), at::roll(a, {1}, {1}));
  ExpectClose(at::constant_pad_nd(xa, {1, 2, 0, 1}, 0.5), at::constant_pad_nd(a, {1, 2, 0, 1}, 0.5));
  ExpectClose(at::tril(xa, 1), at::tril(a, 1));
  ExpectClose(xa.repeat({2, 2}), a.repeat({2, 2}));
  ExpectClose(at::diagonal(xb, -1).clone(), at::diagonal(b, -1).clone());
  for (const char* op : {"xla::cat", "xla::split_copy", "xla::flip", "xla::roll", "xla::constant_pad_nd",
                         "xla::tril", "xla::repeat", "xla::diagonal_copy"})
    ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(ShapesElementwiseTest, MathAndActivations) {
  at::Tensor a = at::randn({3, 4}), b = at::randn({4}) + 3;
  at::Tensor xa = ToXla(a), xb = ToXla(b);
  ExpectClose(at::erf(xa), at::erf(a));
  ExpectClose(at::log1p(xb), at::log1p(b));
  ExpectClose(at::remainder(xa, xb), at::remainder(a, b));
  ExpectClose(at::atan2(xa, xb), at::atan2(a, b));
  ExpectClose(at::silu(xa), at::silu(a));
  ExpectClose(at::leaky_relu(xa, 0.2), at::leaky_relu(a, 0.2));
  ExpectClose(at::sign(xa.to(at::kDouble)), at::sign(a.to(at::kDouble)));
  at::Tensor i = at::arange(1, 13, at::kLong).reshape({3, 4});
  ExpectClose(at::bitwise_and(ToXla(i), 5), at::bitwise_and(i, 5));
  ExpectClose(ToXla(i).__lshift__(2), i.__lshift__(2));
  for (const char* op : {"xla::erf", "xla::log1p", "xla::remainder", "xla::atan2", "xla::silu", "xla::leaky_relu",
                         "xla::sign", "xla::bitwise_and", "xla::bitwise_left_shift"})
    ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(ShapesElementwiseTest, AdamStyleUpdate) {
  at::Tensor p = at::randn({5}), m = at::randn({5}), v = at::rand({5}), g = at::randn({5});
  at::Tensor xp = ToXla(p), xm = ToXla(m), xv = ToXla(v), xg = ToXla(g);
  m.lerp_(g, 0.1);
  xm.lerp_(xg, 0.1);
  v.mul_(0.999).addcmul_(g, g, 0.001);
  xv.mul_(0.999).addcmul_(xg, xg, 0.001);
  p.addcdiv_(m, v.sqrt().add_(1e-8), -0.01);
  xp.addcdiv_(xm, xv.sqrt().add_(1e-8), -0.01);
  ExpectClose(xp, p);
  ExpectClose(xm, m);
  ExpectClose(xv, v);
  for (const char* op : {"xla::lerp", "xla::addcmul", "xla::addcdiv"}) ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(ShapesElementwiseTest, BadInputThrows) {
  at::Tensor x = ToXla(at::ones({2, 3}));
  EXPECT_THROW(at::cat({x, ToXla(at::ones({2, 4}))}), c10::Error);
  EXPECT_THROW(at::flip(x, {0, 0}), c10::Error);
  EXPECT_THROW(at::lerp(x, x.to(at::kDouble), 0.5), c10::Error);
  ExpectClose(at::erf(x), at::erf(at::ones({2, 3})));  // still usable
}

}  // namespace
}  // namespace torch_xla::test
