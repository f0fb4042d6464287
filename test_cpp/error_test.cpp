// Bad input to lowered ops throws c10::Error naming the shapes; the device stays usable.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "xla_test_util.h"

namespace torch_xla::test {
namespace {

class ErrorTest : public XlaTest {};

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const c10::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected c10::Error";
  return "";
}

// "[2, 3]", "2x3", "(2, 3)" ... : accept any spelling that keeps the two sizes adjacent.
bool NamesShape(const std::string& message, int64_t d0, int64_t d1) {
  std::string a = std::to_string(d0), b = std::to_string(d1);
  for (const std::string& sep : {", ", ",", "x", " x ", " "})
    if (message.find(a + sep + b) != std::string::npos) return true;
  return false;
}

TEST_F(ErrorTest, AddShapeMismatchNamesShapes) {
  at::Tensor a = at::ones({2, 3}, XlaOptions()), b = at::ones({4, 5}, XlaOptions());
  EXPECT_THROW(at::add(a, b), c10::Error);
  std::string message = ErrorOf([&] { at::add(a, b); });
  EXPECT_TRUE(NamesShape(message, 2, 3)) << message;
  EXPECT_TRUE(NamesShape(message, 4, 5)) << message;
  // Later ops, including ones on the same tensors, still work.
  ExpectClose(a + a, at::full({2, 3}, 2.0));
  ExpectClose(b.sum(), at::scalar_tensor(20.0f));
}

TEST_F(ErrorTest, MmShapeMismatchNamesShapes) {
  at::Tensor a = at::ones({2, 3}, XlaOptions()), b = at::ones({4, 5}, XlaOptions());
  EXPECT_THROW(at::mm(a, b), c10::Error);
  std::string message = ErrorOf([&] { at::mm(a, b); });
  EXPECT_TRUE(NamesShape(message, 2, 3)) << message;
  EXPECT_TRUE(NamesShape(message, 4, 5)) << message;
  EXPECT_THROW(at::mm(a, at::ones({3}, XlaOptions())), c10::Error);  // not a matrix
  EXPECT_THROW(at::bmm(at::ones({2, 2, 3}, XlaOptions()), at::ones({3, 3, 2}, XlaOptions())), c10::Error);
  ExpectClose(at::mm(a, a.t()), at::full({2, 2}, 3.0));
  Sync(/*wait=*/true);
  ExpectClose(at::mm(a.t(), a), at::full({3, 3}, 2.0));
}

TEST_F(ErrorTest, BadViewAndDeviceArguments) {
  at::Tensor a = at::ones({2, 3}, XlaOptions());
  EXPECT_THROW(a.view({4, 2}), c10::Error);
  EXPECT_THROW(a.select(0, 5), c10::Error);
  EXPECT_THROW(a.permute({0, 0}), c10::Error);
  EXPECT_THROW(XlaDevice(DeviceCount()), c10::Error);
  EXPECT_THROW(XlaDevice(-2), c10::Error);
  ExpectClose(a.view({3, 2}) * 2, at::full({3, 2}, 2.0));
}

}  // namespace
}  // namespace torch_xla::test
