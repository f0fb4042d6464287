// Autograd on the XLA device: backward through lowered ops gives the gradients the CPU gives.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class AutogradTest : public XlaTest {};

TEST_F(AutogradTest, MlpGradientsMatchCpu) {
  at::Tensor x = at::randn({4, 3}), w1 = at::randn({3, 5}), b1 = at::randn({5}), w2 = at::randn({5, 2});
  auto loss_of = [](const at::Tensor& x, const at::Tensor& w1, const at::Tensor& b1, const at::Tensor& w2) {
    at::Tensor h = at::relu(at::addmm(b1, x, w1));
    at::Tensor y = at::tanh(h.mm(w2));
    return (at::sigmoid(y) * y).mean();
  };
  std::vector<at::Tensor> cpu = {w1.clone().requires_grad_(), b1.clone().requires_grad_(),
                                 w2.clone().requires_grad_()};
  std::vector<at::Tensor> xla = {ToXla(w1).requires_grad_(), ToXla(b1).requires_grad_(),
                                 ToXla(w2).requires_grad_()};
  at::Tensor cpu_loss = loss_of(x, cpu[0], cpu[1], cpu[2]);
  at::Tensor xla_loss = loss_of(ToXla(x), xla[0], xla[1], xla[2]);
  cpu_loss.backward();
  xla_loss.backward();
  Sync(/*wait=*/true);

  ExpectClose(xla_loss.detach(), cpu_loss.detach(), 1e-5, 1e-4);
  for (size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_TRUE(xla[i].grad().defined()) << "no grad for parameter " << i;
    EXPECT_TRUE(xla[i].grad().device().is_xla());
    ExpectClose(xla[i].grad(), cpu[i].grad(), 1e-5, 1e-4);
  }
  ExpectCounterChanged("xla::threshold_backward");
  ExpectCounterChanged("xla::tanh_backward");
  ExpectCounterChanged("xla::sigmoid_backward");
  ExpectNoFallback();
}

TEST_F(AutogradTest, GradientsThroughViewsBroadcastAndReductions) {
  at::Tensor a = at::randn({2, 3, 4});
  at::Tensor b = at::randn({4});
  at::Tensor ca = a.clone().requires_grad_(), cb = b.clone().requires_grad_();
  at::Tensor xa = ToXla(a).requires_grad_(), xb = ToXla(b).requires_grad_();
  auto f = [](const at::Tensor& a, const at::Tensor& b) {
    at::Tensor t = (a * b).permute({2, 0, 1}).reshape({4, 6});
    return (t.exp().sum(0) / (b.pow(2).sum() + 1)).mean() + t.t().unsqueeze(0).expand({2, 6, 4}).sum();
  };
  f(ca, cb).backward();
  f(xa, xb).backward();
  ExpectClose(xa.grad(), ca.grad(), 1e-4, 1e-4);
  ExpectClose(xb.grad(), cb.grad(), 1e-4, 1e-4);
  ExpectNoFallback();
}

TEST_F(AutogradTest, SelectBackwardIsLowered) {
  at::Tensor a = at::randn({4, 4});
  at::Tensor ca = a.clone().requires_grad_(), xa = ToXla(a).requires_grad_();
  (ca.select(0, 1) * ca.select(1, 2)).sum().backward();
  (xa.select(0, 1) * xa.select(1, 2)).sum().backward();
  ExpectClose(xa.grad(), ca.grad(), 1e-5, 1e-5);
  EXPECT_GT(Counter("xla::select_backward"), 0) << Join(metrics::CounterNames());
  EXPECT_EQ(Counter("aten::select_backward"), 0);
}

// slice_backward is lowered: PyTorch's own kernel (zeros + slice + copy_) would write
// into a view below functionalization, which a backend cannot do.
TEST_F(AutogradTest, SliceBackward) {
  at::Tensor a = at::randn({3, 5});
  at::Tensor w = at::arange(6, at::kFloat).reshape({3, 2}) + 1;
  at::Tensor ca = a.clone().requires_grad_(), xa = ToXla(a).requires_grad_();
  (ca.slice(1, 1, 5, 2) * w).sum().backward();
  (xa.slice(1, 1, 5, 2) * ToXla(w)).sum().backward();
  at::Tensor direct = at::slice_backward(ToXla(w), {3, 5}, 1, 1, 5, 2);
  EXPECT_EQ(Counter("aten::as_strided"), 0);
  ExpectClose(xa.grad(), ca.grad(), 1e-5, 1e-5);
  ExpectClose(direct, at::slice_backward(w, {3, 5}, 1, 1, 5, 2));
}

TEST_F(AutogradTest, GradAccumulatesOverTwoBackwards) {
  at::Tensor w = at::randn({3, 3});
  at::Tensor cw = w.clone().requires_grad_(), xw = ToXla(w).requires_grad_();
  for (int i = 0; i < 2; ++i) {
    (cw.mm(cw) * (i + 1)).sum().backward();
    (xw.mm(xw) * (i + 1)).sum().backward();
    Sync();
  }
  ExpectClose(xw.grad(), cw.grad(), 1e-4, 1e-4);
  at::Tensor xy = torch::autograd::grad({(xw * xw).sum()}, {xw})[0];
  ExpectClose(xy, 2 * w, 1e-5, 1e-5);
}

TEST_F(AutogradTest, NoGradModeRecordsNothing) {
  at::Tensor xw = ToXla(at::randn({2})).requires_grad_();
  at::Tensor y;
  {
    at::NoGradGuard guard;
    y = xw * 2;
  }
  EXPECT_FALSE(y.requires_grad());
  EXPECT_TRUE((xw * 2).requires_grad());
}

}  // namespace
}  // namespace torch_xla::test
