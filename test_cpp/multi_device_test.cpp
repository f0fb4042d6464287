// Several XLA devices (the CPU plugin exposes CPU_NUM_DEVICES=3 of them in this binary):
// tensors on xla:1 and xla:2 compute correctly and stay on their device.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class MultiDeviceTest : public XlaTest {
 protected:
  void SetUp() override {
    XlaTest::SetUp();
    if (DeviceCount() < 3) GTEST_SKIP() << "needs 3 XLA devices, have " << DeviceCount();
  }
};

TEST_F(MultiDeviceTest, DeviceNamesAndCount) {
  EXPECT_EQ(DeviceCount(), 3);
  EXPECT_EQ(XlaDevice(1).index(), 1);
  EXPECT_EQ(XlaDevice(2).str(), "xla:2");
}

TEST_F(MultiDeviceTest, ComputesOnDevicesOneAndTwo) {
  at::Tensor a = at::randn({3, 4}), b = at::randn({4, 2});
  for (int ordinal : {1, 2}) {
    SCOPED_TRACE("xla:" + std::to_string(ordinal));
    at::Tensor xa = ToXla(a, ordinal), xb = ToXla(b, ordinal);
    EXPECT_EQ(xa.device(), XlaDevice(ordinal));
    at::Tensor y = at::relu(xa.mm(xb) + 1).sum(0);
    EXPECT_EQ(y.device(), XlaDevice(ordinal));
    ExpectClose(y, at::relu(a.mm(b) + 1).sum(0), 1e-4, 1e-5);
    at::Tensor z = at::ones({2, 2}, XlaOptions(at::kFloat, ordinal)) * 3;
    EXPECT_EQ(z.device(), XlaDevice(ordinal));
    ExpectClose(z, at::full({2, 2}, 3.0));
  }
  ExpectNoFallback();
}

TEST_F(MultiDeviceTest, PendingGraphsOnSeveralDevicesSyncTogether) {
  at::Tensor a = at::randn({8});
  std::vector<at::Tensor> results;
  for (int ordinal = 0; ordinal < 3; ++ordinal) results.push_back(ToXla(a, ordinal) * (ordinal + 1));
  Sync(/*wait=*/true);
  for (int ordinal = 0; ordinal < 3; ++ordinal) ExpectClose(results[ordinal], a * (ordinal + 1));
  SyncDevices({1, 2}, /*wait=*/true);
}

TEST_F(MultiDeviceTest, CopiesBetweenDevices) {
  at::Tensor a = at::randn({2, 3});
  at::Tensor on1 = ToXla(a, 1) + 1;
  at::Tensor on2 = on1.to(XlaDevice(2));
  EXPECT_EQ(on2.device(), XlaDevice(2));
  ExpectClose(on2 * 2, (a + 1) * 2, 1e-5, 1e-5);
  ExpectClose(on1, a + 1);
}

TEST_F(MultiDeviceTest, MixingDevicesInOneOpThrows) {
  at::Tensor x1 = at::ones({2}, XlaOptions(at::kFloat, 1));
  at::Tensor x2 = at::ones({2}, XlaOptions(at::kFloat, 2));
  EXPECT_THROW(x1 + x2, c10::Error);
  ExpectClose(x1 + x1, at::full({2}, 2.0));
}

}  // namespace
}  // namespace torch_xla::test
