// Weight gradients, grad.t() @ input, on the CPU device by PyTorch's product (MKL).
//
// XLA's CPU backend folds a transposed operand into its product and runs the form where
// both operands contract over their rows (a linear layer's weight gradient) through
// Eigen, which packs both operands first: 3.6 ms against eager's 2.5 at 2048 x 256 x
// 768, including the graph's launch (an explicit transpose first costs more than it
// saves). PyTorch's product reads the transposed operand in place. The op
// torch_xla_host::weight_gradient(grad, input) = grad.t() @ input
// (host/weight_gradient.cpp) is a host ATen op split over the compute threads
// (host/aten_parts.cpp) by the contracted rows, with the parts' products summed:
// 2.6-2.8 ms. The other forms stay
// with XLA: as host calls (split by the result's rows) x @ w.t() measured 3.0 against
// XLA's 2.6 and g @ w 2.8 against 2.4, each part's result being computed apart and
// then copied into the graph's buffer.
#include "ops/host_matmul.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include "aten/bridge.h"
#include "host/aten_ops.h"
#include "ir/op_kind.h"

namespace torch_xla {
namespace {

// Below these sizes XLA's product is as fast (MNIST's layers: 128 rows).
constexpr int64_t kMinRows = 512;
constexpr int64_t kMinOutputs = 16384;

bool IsTranspose(const ir::Value& v) {
  static const ir::OpKind kTranspose = ir::OpKind::Get("stablehlo.transpose");
  return v.node->op() == kTranspose;
}

}  // namespace

std::optional<at::Tensor> HostMatrixProduct(const ir::Value& a, const ir::Value& b, int device) {
  const runtime::ElementType f32 = runtime::ElementType::kF32;
  if (a.shape().rank() != 2 || b.shape().rank() != 2 || a.shape().type != f32 || b.shape().type != f32) {
    return std::nullopt;
  }
  const int64_t n = a.shape().dims[0], k = a.shape().dims[1], m = b.shape().dims[1];
  // Only the weight-gradient form, a = grad.t(): k contracted rows, split over the threads.
  if (!IsTranspose(a) || IsTranspose(b) || k < kMinRows || n * m < kMinOutputs || !host::HostAtenAvailable()) {
    return std::nullopt;
  }
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("torch_xla_host::weight_gradient", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return op.call(AtenFromIr(a.node->operand(0), device), AtenFromIr(b, device));
}

}  // namespace torch_xla
