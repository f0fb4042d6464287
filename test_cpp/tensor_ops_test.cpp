// Lowered ATen ops on the XLA device: each result matches the same op on the CPU, the op's
// "xla::<op>" counter moved, and nothing went through the CPU fallback ("aten::<op>").
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class TensorOpsTest : public XlaTest {};

TEST_F(TensorOpsTest, ArithmeticWithBroadcastingAndScalars) {
  at::Tensor a = at::randn({2, 3});
  at::Tensor b = at::randn({3});         // broadcast along dim 0
  at::Tensor c = at::rand({2, 1}) + 0.5;  // broadcast along dim 1, away from 0
  at::Tensor xa = ToXla(a), xb = ToXla(b), xc = ToXla(c);

  ExpectClose(xa + xb, a + b);
  ExpectClose(xa - xc, a - c);
  ExpectClose(xa * xb, a * b);
  ExpectClose(xa / xc, a / c);
  ExpectClose(at::add(xa, xb, /*alpha=*/2.5), at::add(a, b, 2.5));
  ExpectClose(at::sub(xa, xc, /*alpha=*/-1), at::sub(a, c, -1));
  // Python-number scalars and a 0-dim CPU tensor as the second operand.
  ExpectClose(xa + 2, a + 2);
  ExpectClose(xa * 0.5, a * 0.5);
  ExpectClose(xa - 1.25, a - 1.25);
  ExpectClose(xa / 4, a / 4);
  ExpectClose(xa * at::scalar_tensor(3.0), a * at::scalar_tensor(3.0));
  // Integer arithmetic stays integral; true division promotes to float.
  at::Tensor i = at::arange(1, 7, at::kLong).reshape({2, 3});
  at::Tensor xi = ToXla(i);
  ExpectClose(xi * 3 + xi, i * 3 + i);
  ExpectClose(xi / 2, i / 2);
  ExpectClose(at::div(xi, 4, "floor"), at::div(i, 4, "floor"));
  ExpectClose(at::div(xa, xc, "trunc"), at::div(a, c, "trunc"));
  // int + float tensor promotes.
  ExpectClose(xi + xa, i + a);

  for (const char* op : {"xla::add", "xla::sub", "xla::mul", "xla::div"}) ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(TensorOpsTest, ComparisonsAndWhere) {
  at::Tensor a = at::tensor({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}).reshape({2, 3});
  at::Tensor b = at::tensor({3.0f, 2.0f, 1.0f});
  at::Tensor xa = ToXla(a), xb = ToXla(b);

  ExpectClose(xa.eq(xb), a.eq(b));
  ExpectClose(xa.ne(xb), a.ne(b));
  ExpectClose(xa.lt(xb), a.lt(b));
  ExpectClose(xa.le(xb), a.le(b));
  ExpectClose(xa.gt(xb), a.gt(b));
  ExpectClose(xa.ge(xb), a.ge(b));
  ExpectClose(xa > 3, a > 3);
  ExpectClose(xa == 2, a == 2);
  EXPECT_EQ((xa > 3).scalar_type(), at::kBool);

  at::Tensor cond = a > 2.5;
  ExpectClose(at::where(ToXla(cond), xa, xb), at::where(cond, a, b));
  ExpectClose(at::where(xa > xb, xa, at::zeros_like(xa)), at::where(a > b, a, at::zeros_like(a)));
  ExpectClose(at::logical_and(xa > 1, xa < 5), at::logical_and(a > 1, a < 5));
  ExpectClose(at::logical_not(xa > 3), at::logical_not(a > 3));

  for (const char* op : {"xla::eq", "xla::ne", "xla::lt", "xla::le", "xla::gt", "xla::ge", "xla::where"})
    ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(TensorOpsTest, UnaryMath) {
  at::Tensor a = at::randn({4, 5});
  at::Tensor pos = at::rand({4, 5}) + 0.1;
  at::Tensor xa = ToXla(a), xpos = ToXla(pos);

  ExpectClose(at::relu(xa), at::relu(a));
  ExpectClose(at::exp(xa), at::exp(a), 1e-5, 1e-5);
  ExpectClose(at::log(xpos), at::log(pos), 1e-5, 1e-5);
  ExpectClose(at::tanh(xa), at::tanh(a), 1e-5, 1e-5);
  ExpectClose(at::sigmoid(xa), at::sigmoid(a), 1e-5, 1e-5);
  ExpectClose(at::sqrt(xpos), at::sqrt(pos));
  ExpectClose(at::neg(xa), at::neg(a));
  ExpectClose(at::abs(xa), at::abs(a));
  ExpectClose(at::clamp(xa, -0.5, 0.5), at::clamp(a, -0.5, 0.5));
  ExpectClose(at::pow(xpos, 2), at::pow(pos, 2), 1e-5, 1e-5);
  ExpectClose(at::maximum(xa, xpos), at::maximum(a, pos));

  for (const char* op : {"xla::relu", "xla::exp", "xla::log", "xla::tanh", "xla::sigmoid", "xla::sqrt",
                         "xla::neg", "xla::abs", "xla::clamp", "xla::pow", "xla::maximum"})
    ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(TensorOpsTest, SumAndMeanOverDims) {
  at::Tensor a = at::randn({2, 3, 4});
  at::Tensor xa = ToXla(a);

  ExpectClose(xa.sum(), a.sum(), 1e-4, 1e-5);
  ExpectClose(xa.mean(), a.mean(), 1e-5, 1e-5);
  ExpectClose(xa.sum(1), a.sum(1), 1e-5, 1e-5);
  // Dimension lists spelt as IntArrayRef: torch releases with named tensors also take a
  // list of names there, and a bare brace list would be ambiguous.
  ExpectClose(xa.sum(at::IntArrayRef{0, 2}), a.sum(at::IntArrayRef{0, 2}), 1e-5, 1e-5);
  ExpectClose(xa.sum(-1, /*keepdim=*/true), a.sum(-1, true), 1e-5, 1e-5);
  ExpectClose(xa.mean(at::IntArrayRef{1}), a.mean(at::IntArrayRef{1}), 1e-5, 1e-5);
  ExpectClose(xa.mean(at::IntArrayRef{0, 1}, /*keepdim=*/true), a.mean(at::IntArrayRef{0, 1}, true), 1e-5, 1e-5);
  // Integer sums accumulate in int64, like on the CPU.
  at::Tensor i = at::arange(24, at::kInt).reshape({2, 3, 4});
  ExpectClose(ToXla(i).sum(), i.sum());
  ExpectClose(ToXla(i).sum(2), i.sum(2));

  ExpectCounterChanged("xla::sum");
  ExpectCounterChanged("xla::mean");
  ExpectNoFallback();
}

TEST_F(TensorOpsTest, MatrixProducts) {
  at::Tensor a = at::randn({3, 4}), b = at::randn({4, 5}), bias = at::randn({5});
  at::Tensor ba = at::randn({2, 3, 4}), bb = at::randn({2, 4, 5});
  at::Tensor v = at::randn({4});

  ExpectClose(at::mm(ToXla(a), ToXla(b)), at::mm(a, b), 1e-4, 1e-4);
  ExpectClose(at::bmm(ToXla(ba), ToXla(bb)), at::bmm(ba, bb), 1e-4, 1e-4);
  ExpectClose(at::addmm(ToXla(bias), ToXla(a), ToXla(b)), at::addmm(bias, a, b), 1e-4, 1e-4);
  ExpectClose(at::addmm(ToXla(bias), ToXla(a), ToXla(b), /*beta=*/0.5, /*alpha=*/2),
              at::addmm(bias, a, b, 0.5, 2), 1e-4, 1e-4);
  // matmul decomposes into mm / bmm plus views.
  ExpectClose(at::matmul(ToXla(a), ToXla(b)), at::matmul(a, b), 1e-4, 1e-4);
  ExpectClose(at::matmul(ToXla(ba), ToXla(bb)), at::matmul(ba, bb), 1e-4, 1e-4);
  ExpectClose(at::matmul(ToXla(ba), ToXla(b)), at::matmul(ba, b), 1e-4, 1e-4);  // broadcast batch

  ExpectCounterChanged("xla::mm");
  ExpectCounterChanged("xla::bmm");
  ExpectCounterChanged("xla::addmm");
  ExpectNoFallback();

  // matrix-vector matmul goes through mv -> addmv_ (functionalized to addmv).
  ExpectClose(at::matmul(ToXla(a), ToXla(v)), at::matmul(a, v), 1e-4, 1e-4);
  ExpectCounterChanged("xla::addmv");
  ExpectNoFallback();
}

TEST_F(TensorOpsTest, ViewsAndShapes) {
  at::Tensor a = at::arange(24, at::kFloat).reshape({2, 3, 4});
  at::Tensor xa = ToXla(a);

  ExpectClose(xa.view({6, 4}), a.view({6, 4}));
  ExpectClose(xa.reshape({4, -1}), a.reshape({4, -1}));
  ExpectClose(xa.permute({2, 0, 1}), a.permute({2, 0, 1}));
  ExpectClose(xa.transpose(0, 2), a.transpose(0, 2));
  ExpectClose(xa.select(1, 0).t(), a.select(1, 0).t());
  ExpectClose(xa.slice(2, 1, 4, 2), a.slice(2, 1, 4, 2));
  ExpectClose(xa.select(1, -1), a.select(1, -1));
  ExpectClose(xa.unsqueeze(1), a.unsqueeze(1));
  ExpectClose(xa.unsqueeze(-1).squeeze(-1), a);
  ExpectClose(xa.slice(0, 0, 1).squeeze(), a.slice(0, 0, 1).squeeze());
  ExpectClose(xa.slice(0, 0, 1).squeeze(0), a.slice(0, 0, 1).squeeze(0));
  at::Tensor col = at::randn({3, 1});
  ExpectClose(ToXla(col).expand({3, 5}), col.expand({3, 5}));
  ExpectClose(ToXla(col).expand({2, 3, 4}), col.expand({2, 3, 4}));
  // Chains of views, then compute on the result (a non-contiguous transpose feeding mm).
  ExpectClose(xa.permute({1, 0, 2}).reshape({3, 8}).t().mm(xa.view({6, 4}).slice(0, 0, 3)),
              a.permute({1, 0, 2}).reshape({3, 8}).t().mm(a.view({6, 4}).slice(0, 0, 3)), 1e-3, 1e-5);
  EXPECT_EQ(xa.transpose(0, 1).sizes(), (std::vector<int64_t>{3, 2, 4}));

  for (const char* op : {"xla::view_copy", "xla::permute_copy", "xla::transpose_copy", "xla::slice_copy",
                         "xla::select_copy", "xla::unsqueeze_copy", "xla::squeeze_copy", "xla::expand_copy"})
    ExpectCounterChanged(op);
  ExpectNoFallback();
}

TEST_F(TensorOpsTest, Factories) {
  ExpectClose(at::zeros({2, 3}, XlaOptions()), at::zeros({2, 3}));
  ExpectClose(at::ones({4}, XlaOptions(at::kInt)), at::ones({4}, at::kInt));
  ExpectClose(at::full({2, 2}, 7.5, XlaOptions()), at::full({2, 2}, 7.5));
  ExpectClose(at::full({3}, -2, XlaOptions(at::kLong)), at::full({3}, -2, at::kLong));
  ExpectClose(at::arange(5, XlaOptions(at::kLong)), at::arange(5, at::kLong));
  ExpectClose(at::arange(1, 10, 3, XlaOptions(at::kLong)), at::arange(1, 10, 3, at::kLong));
  ExpectClose(at::arange(0.0, 1.0, 0.25, XlaOptions()), at::arange(0.0, 1.0, 0.25, at::kFloat));
  ExpectClose(at::zeros_like(ToXla(at::randn({3, 2}))), at::zeros({3, 2}));
  ExpectClose(at::ones({2, 2}, XlaOptions()) * at::arange(2, XlaOptions()),
              at::ones({2, 2}) * at::arange(2, at::kFloat));
  at::Tensor empty = at::empty({0, 3}, XlaOptions());
  EXPECT_EQ(empty.sizes(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(empty.cpu().numel(), 0);

  ExpectCounterChanged("xla::arange");
  ExpectCounterChanged("xla::fill");
  ExpectNoFallback();
}

TEST_F(TensorOpsTest, DtypeCasts) {
  at::Tensor f = at::tensor({-2.7f, -0.5f, 0.0f, 1.5f, 3.9f});
  at::Tensor xf = ToXla(f);
  ExpectClose(xf.to(at::kInt), f.to(at::kInt));  // truncation toward zero
  ExpectClose(xf.to(at::kLong), f.to(at::kLong));
  ExpectClose(xf.to(at::kDouble), f.to(at::kDouble));
  ExpectClose(xf.to(at::kBool), f.to(at::kBool));
  ExpectClose(xf.to(at::kHalf), f.to(at::kHalf), 1e-3, 1e-3);
  ExpectClose(xf.to(at::kBFloat16), f.to(at::kBFloat16), 1e-2, 1e-2);
  at::Tensor i = at::tensor({0, 1, -3, 300}, at::kInt);
  ExpectClose(ToXla(i).to(at::kFloat), i.to(at::kFloat));
  ExpectClose(ToXla(i).to(at::kBool), i.to(at::kBool));
  ExpectClose((ToXla(i) > 0).to(at::kFloat), (i > 0).to(at::kFloat));
  // Casting to another dtype on the device keeps the result on the device.
  EXPECT_TRUE(xf.to(at::kDouble).device().is_xla());

  ExpectCounterChanged("xla::_to_copy");
  ExpectNoFallback();
}

TEST_F(TensorOpsTest, InPlaceOps) {
  at::Tensor a = at::randn({3, 4}), b = at::randn({4});
  at::Tensor xa = ToXla(a), xb = ToXla(b);
  xa.add_(xb);
  a.add_(b);
  xa.mul_(2);
  a.mul_(2);
  xa.sub_(xb, /*alpha=*/0.5);
  a.sub_(b, 0.5);
  xa.div_(3);
  a.div_(3);
  xa.relu_();
  a.relu_();
  ExpectClose(xa, a);
  xa.zero_();
  ExpectClose(xa, at::zeros({3, 4}));
  xa.fill_(1.5);
  ExpectClose(xa, at::full({3, 4}, 1.5));
  at::Tensor other = ToXla(at::randn({3, 4}));
  xa.copy_(other);
  ExpectClose(xa, other.cpu());

  ExpectCounterChanged("xla::add");
  ExpectCounterChanged("xla::zero");
  ExpectNoFallback();
}

TEST_F(TensorOpsTest, InPlaceThroughViewsUpdatesTheBase) {
  at::Tensor a = at::arange(12, at::kFloat).reshape({3, 4});
  at::Tensor xa = ToXla(a);

  at::Tensor row = xa.select(0, 1);
  row.add_(100);
  a.select(0, 1).add_(100);
  at::Tensor cols = xa.slice(1, 1, 3);
  cols.mul_(-1);
  a.slice(1, 1, 3).mul_(-1);
  xa.t().select(0, 3).fill_(7);  // a view of a view
  a.t().select(0, 3).fill_(7);
  at::Tensor flat = xa.view({12});
  flat.slice(0, 0, 2).zero_();
  a.view({12}).slice(0, 0, 2).zero_();

  ExpectClose(xa, a);
  ExpectClose(row, a.select(0, 1));  // the view sees later writes to the base
  ExpectClose(flat, a.view({12}));

  ExpectCounterChanged("xla::slice_scatter");
  ExpectCounterChanged("xla::select_scatter");
  ExpectNoFallback();
}

TEST_F(TensorOpsTest, SyncMaterializesPendingResults) {
  at::Tensor xa = ToXla(at::tensor({1.0f, 2.0f}));
  at::Tensor y = (xa * 3 + 1).exp();
  torch_xla::Sync(/*wait=*/true);
  ExpectClose(y, (at::tensor({1.0f, 2.0f}) * 3 + 1).exp(), 1e-4, 1e-5);
  EXPECT_FLOAT_EQ(xa.sum().item<float>(), 3.0f);
}

}  // namespace
}  // namespace torch_xla::test
