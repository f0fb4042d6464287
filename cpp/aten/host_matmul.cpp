// Weight gradients, grad.t() @ input, on the CPU device by PyTorch's product (MKL).
//
// XLA's CPU backend folds a transposed operand into its product and runs the form where
// both operands contract over their rows (a linear layer's weight gradient) through
// Eigen, which packs both operands first: 3.6 ms against eager's 2.5 at 2048 x 256 x
// 768, including the graph's launch (an explicit transpose first costs more than it
// saves). PyTorch's product reads the transposed operand in place. The op below,
// torch_xla_host::product(a, b, a_transposed, b_transposed) = op(a) @ op(b), is a host
// ATen op (host_aten_ops.cpp) split over the compute threads (host_aten_parts.cpp), by
// the contracted rows with the parts' products summed: 2.6-2.8 ms. The other forms stay
// with XLA: as host calls (split by the result's rows) x @ w.t() measured 3.0 against
// XLA's 2.6 and g @ w 2.8 against 2.4, each part's result being computed apart and
// then copied into the graph's buffer.
#include "aten/host_matmul.h"

#include <ATen/ATen.h>
#include <torch/library.h>

#include "aten/bridge.h"
#include "aten/host_aten_ops.h"
#include "ir/op_kind.h"

namespace torch_xla {
namespace {

at::Tensor Oriented(const at::Tensor& t, bool transposed) { return transposed ? t.t() : t; }

at::Tensor ProductCpu(const at::Tensor& a, const at::Tensor& b, bool a_transposed, bool b_transposed) {
  return at::mm(Oriented(a, a_transposed), Oriented(b, b_transposed));
}

at::Tensor ProductMeta(const at::Tensor& a, const at::Tensor& b, bool a_transposed, bool b_transposed) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2, "product: expected matrices, got ", a.sizes(), " and ", b.sizes());
  const int64_t n = a.size(a_transposed ? 1 : 0), k = a.size(a_transposed ? 0 : 1);
  const int64_t k2 = b.size(b_transposed ? 1 : 0), m = b.size(b_transposed ? 0 : 1);
  TORCH_CHECK(k == k2, "product: shapes cannot be multiplied (", n, "x", k, " and ", k2, "x", m, ")");
  return at::empty({n, m}, a.options());
}

TORCH_LIBRARY(torch_xla_host, m) {
  m.def("product(Tensor a, Tensor b, bool a_transposed, bool b_transposed) -> Tensor");
}
TORCH_LIBRARY_IMPL(torch_xla_host, CPU, m) { m.impl("product", TORCH_FN(ProductCpu)); }
TORCH_LIBRARY_IMPL(torch_xla_host, Meta, m) { m.impl("product", TORCH_FN(ProductMeta)); }

// Below these sizes XLA's product is as fast (MNIST's layers: 128 rows).
constexpr int64_t kMinRows = 512;
constexpr int64_t kMinOutputs = 16384;

// v's source and whether v is its transpose.
std::pair<ir::Value, bool> Unwrapped(const ir::Value& v) {
  static const ir::OpKind kTranspose = ir::OpKind::Get("stablehlo.transpose");
  if (v.node->op() == kTranspose) return {v.node->operand(0), true};
  return {v, false};
}

}  // namespace

std::optional<at::Tensor> HostMatrixProduct(const ir::Value& a, const ir::Value& b, int device) {
  const runtime::ElementType f32 = runtime::ElementType::kF32;
  if (a.shape().rank() != 2 || b.shape().rank() != 2 || a.shape().type != f32 || b.shape().type != f32) {
    return std::nullopt;
  }
  const int64_t n = a.shape().dims[0], k = a.shape().dims[1], m = b.shape().dims[1];
  auto [a_source, a_transposed] = Unwrapped(a);
  auto [b_source, b_transposed] = Unwrapped(b);
  // Only the weight-gradient form: k contracted rows, split over the threads.
  if (!a_transposed || b_transposed || k < kMinRows || n * m < kMinOutputs || !HostAtenAvailable()) {
    return std::nullopt;
  }
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("torch_xla_host::product", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, bool, bool)>();
  return op.call(AtenFromIr(a_source, device), AtenFromIr(b_source, device), a_transposed, b_transposed);
}

}  // namespace torch_xla
