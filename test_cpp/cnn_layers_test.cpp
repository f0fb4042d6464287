// CNN layers from LibTorch on the XLA device: log_softmax + nll_loss, batch norm (with its
// running statistics), max / avg / adaptive pooling and interpolation, forward and
// backward, against eager CPU, with the xla:: counters moved and no CPU fallback.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class CnnLayersTest : public XlaTest {};

TEST_F(CnnLayersTest, LogSoftmaxAndNllLoss) {
  at::Tensor x = at::randn({6, 5}) * 10;
  at::Tensor t = at::tensor({0, 4, 2, 2, 1, 3}, at::kLong);
  at::Tensor w = at::rand({5}) + 0.5;
  at::Tensor xx = ToXla(x), xt = ToXla(t), xw = ToXla(w);

  at::Tensor y = at::_log_softmax(x, 1, false);
  at::Tensor xy = at::_log_softmax(xx, 1, false);
  ExpectClose(xy, y);
  at::Tensor g = at::randn({6, 5});
  ExpectClose(at::_log_softmax_backward_data(ToXla(g), xy, 1, at::kFloat), at::_log_softmax_backward_data(g, y, 1, at::kFloat));
  for (int64_t reduction : {0, 1, 2}) {
    auto expected = at::nll_loss_forward(y, t, w, reduction, /*ignore_index=*/2);
    auto actual = at::nll_loss_forward(xy, xt, xw, reduction, 2);
    ExpectClose(std::get<0>(actual), std::get<0>(expected));
    ExpectClose(std::get<1>(actual), std::get<1>(expected));
    at::Tensor go = reduction == 0 ? at::randn({6}) : at::scalar_tensor(1.5);
    ExpectClose(at::nll_loss_backward(ToXla(go), xy, xt, xw, reduction, 2, std::get<1>(actual)),
                at::nll_loss_backward(go, y, t, w, reduction, 2, std::get<1>(expected)));
  }
  for (const char* op : {"xla::_log_softmax", "xla::_log_softmax_backward_data", "xla::nll_loss_forward",
                         "xla::nll_loss_backward"})
    ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(CnnLayersTest, BatchNormTrainingUpdatesRunningStats) {
  at::Tensor x = at::randn({4, 3, 5, 5}) * 2 + 1;
  at::Tensor w = at::rand({3}) + 0.5, b = at::randn({3});
  at::Tensor rm = at::zeros({3}), rv = at::ones({3});
  at::Tensor xrm = ToXla(rm), xrv = ToXla(rv);
  auto expected = at::native_batch_norm(x, w, b, rm, rv, /*training=*/true, 0.1, 1e-5);
  auto actual = at::native_batch_norm(ToXla(x), ToXla(w), ToXla(b), xrm, xrv, true, 0.1, 1e-5);
  ExpectClose(std::get<0>(actual), std::get<0>(expected), 1e-4, 1e-4);
  ExpectClose(std::get<1>(actual), std::get<1>(expected), 1e-5, 1e-5);
  ExpectClose(std::get<2>(actual), std::get<2>(expected), 1e-4, 1e-4);
  // The running statistics were updated in place on the device, as on the CPU.
  ExpectClose(xrm, rm, 1e-5, 1e-5);
  ExpectClose(xrv, rv, 1e-5, 1e-5);

  at::Tensor g = at::randn({4, 3, 5, 5});
  auto grads_c = at::native_batch_norm_backward(g, x, w, rm, rv, std::get<1>(expected), std::get<2>(expected), true,
                                                1e-5, {true, true, true});
  auto grads_x = at::native_batch_norm_backward(ToXla(g), ToXla(x), ToXla(w), xrm, xrv, std::get<1>(actual),
                                                std::get<2>(actual), true, 1e-5, {true, true, true});
  ExpectClose(std::get<0>(grads_x), std::get<0>(grads_c), 1e-4, 1e-4);
  ExpectClose(std::get<1>(grads_x), std::get<1>(grads_c), 1e-4, 1e-4);
  ExpectClose(std::get<2>(grads_x), std::get<2>(grads_c), 1e-4, 1e-4);

  // Evaluation mode normalizes with the running statistics.
  auto eval_c = at::native_batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5);
  auto eval_x = at::native_batch_norm(ToXla(x), ToXla(w), ToXla(b), xrm, xrv, false, 0.1, 1e-5);
  ExpectClose(std::get<0>(eval_x), std::get<0>(eval_c), 1e-4, 1e-4);
  ExpectCounterChanged("xla::native_batch_norm");
  ExpectCounterChanged("xla::native_batch_norm_backward");
  ExpectNoFallback();
}

TEST_F(CnnLayersTest, PoolingForwardAndBackward) {
  at::Tensor x = at::randn({2, 3, 9, 8});
  at::Tensor xx = ToXla(x);
  auto mp_c = at::max_pool2d_with_indices(x, {3, 3}, {2, 2}, {1, 1}, {1, 1}, /*ceil_mode=*/true);
  auto mp_x = at::max_pool2d_with_indices(xx, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true);
  ExpectClose(std::get<0>(mp_x), std::get<0>(mp_c));
  ExpectClose(std::get<1>(mp_x), std::get<1>(mp_c));
  at::Tensor g = at::randn(std::get<0>(mp_c).sizes());
  ExpectClose(at::max_pool2d_with_indices_backward(ToXla(g), xx, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true, std::get<1>(mp_x)),
              at::max_pool2d_with_indices_backward(g, x, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true, std::get<1>(mp_c)));

  at::Tensor ap_c = at::avg_pool2d(x, {3, 2}, {2, 2}, {1, 1}, false, /*count_include_pad=*/false, std::nullopt);
  at::Tensor ap_x = at::avg_pool2d(xx, {3, 2}, {2, 2}, {1, 1}, false, false, std::nullopt);
  ExpectClose(ap_x, ap_c);
  at::Tensor ga = at::randn(ap_c.sizes());
  ExpectClose(at::avg_pool2d_backward(ToXla(ga), xx, {3, 2}, {2, 2}, {1, 1}, false, false, std::nullopt),
              at::avg_pool2d_backward(ga, x, {3, 2}, {2, 2}, {1, 1}, false, false, std::nullopt));

  ExpectClose(at::_adaptive_avg_pool2d(xx, {4, 3}), at::_adaptive_avg_pool2d(x, {4, 3}));
  at::Tensor gd = at::randn({2, 3, 4, 3});
  ExpectClose(at::_adaptive_avg_pool2d_backward(ToXla(gd), xx), at::_adaptive_avg_pool2d_backward(gd, x));
  auto am_c = at::adaptive_max_pool2d(x, {4, 3});
  auto am_x = at::adaptive_max_pool2d(xx, {4, 3});
  ExpectClose(std::get<0>(am_x), std::get<0>(am_c));
  ExpectClose(std::get<1>(am_x), std::get<1>(am_c));
  ExpectClose(at::adaptive_max_pool2d_backward(ToXla(gd), xx, std::get<1>(am_x)),
              at::adaptive_max_pool2d_backward(gd, x, std::get<1>(am_c)));
  ExpectCounterChanged("xla::adaptive_max_pool2d");
  ExpectCounterChanged("xla::adaptive_max_pool2d_backward");
  for (const char* op : {"xla::max_pool2d_with_indices", "xla::max_pool2d_with_indices_backward", "xla::avg_pool2d",
                         "xla::avg_pool2d_backward", "xla::_adaptive_avg_pool2d", "xla::_adaptive_avg_pool2d_backward"})
    ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(CnnLayersTest, Interpolation) {
  at::Tensor x = at::randn({1, 2, 5, 4});
  at::Tensor xx = ToXla(x);
  ExpectClose(at::upsample_nearest2d(xx, {10, 6}), at::upsample_nearest2d(x, {10, 6}));
  for (bool align : {false, true})
    ExpectClose(at::upsample_bilinear2d(xx, {7, 9}, align), at::upsample_bilinear2d(x, {7, 9}, align));
  at::Tensor g = at::randn({1, 2, 7, 9});
  ExpectClose(at::upsample_bilinear2d_backward(ToXla(g), {7, 9}, {1, 2, 5, 4}, false),
              at::upsample_bilinear2d_backward(g, {7, 9}, {1, 2, 5, 4}, false));
  ExpectClose(at::upsample_nearest2d_backward(ToXla(g), {7, 9}, {1, 2, 5, 4}),
              at::upsample_nearest2d_backward(g, {7, 9}, {1, 2, 5, 4}));
  for (const char* op : {"xla::upsample_nearest2d", "xla::upsample_bilinear2d", "xla::upsample_bilinear2d_backward",
                         "xla::upsample_nearest2d_backward"})
    ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(CnnLayersTest, BadInputThrowsNamingTheOp) {
  at::Tensor x = ToXla(at::randn({2, 3, 4, 4}));
  try {
    at::max_pool2d_with_indices(x, {2, 2}, {2, 2}, {3, 3}, {1, 1}, false);
    FAIL() << "expected an error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_pool2d"), std::string::npos) << e.what();
  }
  try {
    at::native_batch_norm(x, at::nullopt, at::nullopt, at::nullopt, at::nullopt, /*training=*/false, 0.1, 1e-5);
    FAIL() << "expected an error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("native_batch_norm"), std::string::npos) << e.what();
  }
  ExpectClose(x + 1, x.cpu() + 1);
}

}  // namespace
}  // namespace torch_xla::test
