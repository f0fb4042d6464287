// Transformer-layer ops from LibTorch on the XLA device: layer norm, GELU, softmax and
// attention (forward and backward) against eager CPU, dropout's mask, and the counters
// (xla::<op> moved, no aten::<op> CPU fallback).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class TransformerTest : public XlaTest {};

TEST_F(TransformerTest, LayerNormForwardBackward) {
  at::manual_seed(0);
  at::Tensor x = at::randn({4, 5, 8});
  at::Tensor w = at::randn({8});
  at::Tensor b = at::randn({8});
  auto cpu = at::native_layer_norm(x, {8}, w, b, 1e-5);
  auto xla = at::native_layer_norm(ToXla(x), {8}, ToXla(w), ToXla(b), 1e-5);
  ExpectClose(std::get<0>(xla), std::get<0>(cpu), 1e-5, 1e-5);
  ExpectClose(std::get<1>(xla), std::get<1>(cpu), 1e-5, 1e-5);
  ExpectClose(std::get<2>(xla), std::get<2>(cpu), 1e-4, 1e-5);

  at::Tensor g = at::randn({4, 5, 8});
  auto gc = at::native_layer_norm_backward(g, x, {8}, std::get<1>(cpu), std::get<2>(cpu), w, b, {true, true, true});
  auto gx = at::native_layer_norm_backward(ToXla(g), ToXla(x), {8}, std::get<1>(xla), std::get<2>(xla), ToXla(w),
                                           ToXla(b), {true, true, true});
  ExpectClose(std::get<0>(gx), std::get<0>(gc), 1e-4, 1e-4);
  ExpectClose(std::get<1>(gx), std::get<1>(gc), 1e-4, 1e-4);
  ExpectClose(std::get<2>(gx), std::get<2>(gc), 1e-4, 1e-4);
  ExpectCounterChanged("xla::native_layer_norm");
  ExpectCounterChanged("xla::native_layer_norm_backward");
  ExpectNoFallback();
}

TEST_F(TransformerTest, GeluAndSoftmaxThroughAutograd) {
  at::manual_seed(1);
  at::Tensor x = at::randn({3, 7});
  for (const char* approximate : {"none", "tanh"}) {
    at::Tensor xc = x.clone().requires_grad_();
    at::Tensor xx = ToXla(x).requires_grad_();
    at::Tensor yc = at::softmax(at::gelu(xc, approximate), -1);
    at::Tensor yx = at::softmax(at::gelu(xx, approximate), -1);
    ExpectClose(yx, yc);
    at::Tensor w = at::randn({3, 7});
    (yc * w).sum().backward();
    (yx * ToXla(w)).sum().backward();
    ExpectClose(xx.grad(), xc.grad(), 1e-5, 1e-4);
  }
  for (const char* op : {"xla::gelu", "xla::gelu_backward", "xla::_softmax", "xla::_softmax_backward_data"})
    ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(TransformerTest, ScaledDotProductAttentionWithMask) {
  at::manual_seed(2);
  at::Tensor q = at::randn({2, 2, 5, 4}), k = at::randn({2, 2, 6, 4}), v = at::randn({2, 2, 6, 3});
  at::Tensor mask = at::randn({5, 6});
  at::Tensor cpu = at::scaled_dot_product_attention(q, k, v, mask);
  at::Tensor xla = at::scaled_dot_product_attention(ToXla(q), ToXla(k), ToXla(v), ToXla(mask));
  ExpectClose(xla, cpu, 1e-5, 1e-5);
  ExpectCounterChanged("xla::_safe_softmax");
  ExpectNoFallback();
}

TEST_F(TransformerTest, DropoutMaskAndScale) {
  at::Tensor x = at::ones({64, 64}, XlaOptions());
  at::Tensor y = at::dropout(x, 0.25, /*train=*/true).cpu();
  at::Tensor kept = y != 0;
  EXPECT_TRUE(at::allclose(y.masked_select(kept), at::full({1}, 1 / 0.75)));
  double rate = kept.to(at::kFloat).mean().item<double>();
  EXPECT_NEAR(rate, 0.75, 0.03);
  ExpectCounterChanged("xla::bernoulli");
  ExpectNoFallback();
}

TEST_F(TransformerTest, BaddbmmMatchesEager) {
  at::manual_seed(3);
  at::Tensor s = at::randn({2, 3, 5}), a = at::randn({2, 3, 4}), b = at::randn({2, 4, 5});
  ExpectClose(at::baddbmm(ToXla(s), ToXla(a), ToXla(b), 0.5, 2), at::baddbmm(s, a, b, 0.5, 2), 1e-5, 1e-5);
  at::Tensor nan = at::full({2, 3, 5}, std::nan(""));
  ExpectClose(at::baddbmm(ToXla(nan), ToXla(a), ToXla(b), 0, 1), at::baddbmm(nan, a, b, 0, 1), 1e-5, 1e-5);
  ExpectCounterChanged("xla::baddbmm");
  ExpectNoFallback();
}

TEST_F(TransformerTest, RandintRepeatsWithSeed) {
  auto draw = [](uint64_t seed) {
    SetRngState(seed, 0);
    return at::randint(2, 9, {40, 40}, XlaOptions(at::kLong)).cpu();
  };
  at::Tensor a = draw(5), b = draw(5), c = draw(6);
  EXPECT_TRUE(at::equal(a, b));
  EXPECT_FALSE(at::equal(a, c));
  EXPECT_EQ(a.scalar_type(), at::kLong);
  EXPECT_EQ(a.min().item<int64_t>(), 2);
  EXPECT_EQ(a.max().item<int64_t>(), 8);
  ExpectCounterChanged("xla::random");
  ExpectNoFallback();
}

TEST_F(TransformerTest, BadInputRaises) {
  at::Tensor x = at::ones({4, 6}, XlaOptions());
  EXPECT_THROW(at::native_layer_norm(x, {5}, {}, {}, 1e-5), c10::Error);
  EXPECT_THROW(at::gelu(x, "fast"), c10::Error);
  EXPECT_THROW(at::_softmax(x, 3, false), c10::Error);
  ExpectClose(x + 1, at::full({4, 6}, 2.0f));
}

}  // namespace
}  // namespace torch_xla::test
