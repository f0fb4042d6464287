// Recurrent layers from LibTorch on the XLA device (at::gru, at::lstm): outputs, final
// states and gradients against eager CPU, taken by the loop over the time steps
// (ops/rnn_loop.cpp, counters xla::gru and xla::lstm) with no CPU fallback.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class RnnLayersTest : public XlaTest {};

// Weights of `layers` layers in both directions: w_ih, w_hh, b_ih, b_hh each.
std::vector<at::Tensor> Weights(int64_t gates, int64_t input, int64_t hidden, int64_t layers) {
  std::vector<at::Tensor> params;
  for (int64_t layer = 0; layer < layers; ++layer) {
    for (int direction = 0; direction < 2; ++direction) {
      const int64_t features = layer == 0 ? input : 2 * hidden;
      params.push_back(at::randn({gates * hidden, features}) * 0.3);
      params.push_back(at::randn({gates * hidden, hidden}) * 0.3);
      params.push_back(at::randn({gates * hidden}) * 0.1);
      params.push_back(at::randn({gates * hidden}) * 0.1);
    }
  }
  return params;
}

std::vector<at::Tensor> Leaves(const std::vector<at::Tensor>& tensors, bool to_xla) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : tensors) out.push_back((to_xla ? ToXla(t) : t.clone()).requires_grad_());
  return out;
}

void ExpectGradsClose(const std::vector<at::Tensor>& actual, const std::vector<at::Tensor>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) ExpectClose(actual[i].grad(), expected[i].grad(), 1e-4, 1e-5);
}

TEST_F(RnnLayersTest, BidirectionalGruMatchesEager) {
  at::manual_seed(0);
  const std::vector<at::Tensor> weights = Weights(3, 5, 4, 2);
  const at::Tensor x = at::randn({6, 3, 5}), h0 = at::randn({4, 3, 4});
  std::vector<at::Tensor> cpu = Leaves(weights, false), xla = Leaves(weights, true);
  at::Tensor cx = x.clone().requires_grad_(), xx = ToXla(x).requires_grad_();
  auto [cy, ch] = at::gru(cx, h0, cpu, true, 2, 0.0, true, true, false);
  auto [xy, xh] = at::gru(xx, ToXla(h0), xla, true, 2, 0.0, true, true, false);
  ExpectClose(xy, cy, 1e-4, 1e-5);
  ExpectClose(xh, ch, 1e-4, 1e-5);
  (cy.square().sum() + ch.sum()).backward();
  (xy.square().sum() + xh.sum()).backward();
  ExpectClose(xx.grad(), cx.grad(), 1e-4, 1e-5);
  ExpectGradsClose(xla, cpu);
  ExpectCounterChanged("xla::gru");
  ExpectNoFallback();
}

TEST_F(RnnLayersTest, LstmLoopWithoutOneDnnMatchesEager) {
  at::manual_seed(1);
  const bool onednn = at::globalContext().userEnabledMkldnn();
  at::globalContext().setUserEnabledMkldnn(false);  // the loop, as every device but the CPU runs it
  const std::vector<at::Tensor> weights = Weights(4, 5, 4, 1);
  const at::Tensor x = at::randn({5, 2, 5}), h0 = at::randn({2, 2, 4}), c0 = at::randn({2, 2, 4});
  std::vector<at::Tensor> cpu = Leaves(weights, false), xla = Leaves(weights, true);
  auto [cy, ch, cc] = at::lstm(x, {h0, c0}, cpu, true, 1, 0.0, true, true, false);
  auto [xy, xh, xc] = at::lstm(ToXla(x), {ToXla(h0), ToXla(c0)}, xla, true, 1, 0.0, true, true, false);
  at::globalContext().setUserEnabledMkldnn(onednn);
  ExpectClose(xy, cy, 1e-4, 1e-5);
  ExpectClose(xh, ch, 1e-4, 1e-5);
  ExpectClose(xc, cc, 1e-4, 1e-5);
  (cy.square().sum() + ch.sum() + 2 * cc.sum()).backward();
  (xy.square().sum() + xh.sum() + 2 * xc.sum()).backward();
  ExpectGradsClose(xla, cpu);
  ExpectCounterChanged("xla::lstm");
  ExpectNoFallback();
}

}  // namespace
}  // namespace torch_xla::test
