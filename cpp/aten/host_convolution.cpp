#include "aten/host_convolution.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "aten/bridge.h"
#include "ir/builder.h"
#include "lowering/host_kernel_targets.h"
#include "runtime/client.h"
#include "runtime/host_kernel.h"
#include "runtime/metrics.h"

namespace torch_xla {
namespace {

at::Tensor Wrap(const runtime::HostBuffer& b) {
  return at::from_blob(b.data, b.dims, at::TensorOptions().dtype(ScalarTypeOf(b.type)).device(at::kCPU));
}

// config: [what, n, stride (n), padding (n), dilation (n), output_padding (n), transposed,
// groups] (ir::HostConvolution).
void RunConvolution(const runtime::HostKernelCall& call) {
  const auto& c = call.config;
  if (call.operands.size() != 2 || call.results.size() != 1 || c.size() < 2 ||
      c.size() != 4 + 4 * static_cast<std::size_t>(c[1]))
    throw std::invalid_argument("host convolution: malformed call (" + std::to_string(call.operands.size()) +
                                " operands, " + std::to_string(call.results.size()) + " results, " +
                                std::to_string(c.size()) + " config values)");
  const std::size_t n = static_cast<std::size_t>(c[1]);
  auto list = [&](std::size_t which) {
    return at::IntArrayRef(c.data() + 2 + which * n, n);
  };
  at::IntArrayRef stride = list(0), padding = list(1), dilation = list(2), output_padding = list(3);
  bool transposed = c[2 + 4 * n] != 0;
  int64_t groups = c[3 + 4 * n];
  // Inference mode: the tensors need no autograd or view tracking on this thread.
  c10::InferenceMode guard;
  at::Tensor a = Wrap(call.operands[0]), b = Wrap(call.operands[1]), out = Wrap(call.results[0]);
  at::Tensor r;
  switch (static_cast<ir::HostConvolutionResult>(c[0])) {
    case ir::HostConvolutionResult::kForward:
      r = at::convolution(a, b, std::nullopt, stride, padding, dilation, transposed, output_padding, groups);
      break;
    case ir::HostConvolutionResult::kGradInput:
      // PyTorch reads only the sizes of the input for this gradient; `out` has them.
      r = std::get<0>(at::convolution_backward(a, out, b, std::nullopt, stride, padding, dilation, transposed,
                                               output_padding, groups, {true, false, false}));
      break;
    case ir::HostConvolutionResult::kGradWeight:
      // ... and only the sizes of the weight for this one.
      r = std::get<1>(at::convolution_backward(a, b, out, std::nullopt, stride, padding, dilation, transposed,
                                               output_padding, groups, {false, true, false}));
      break;
    default:
      throw std::invalid_argument("host convolution: unknown result kind " + std::to_string(c[0]));
  }
  if (r.sizes() != out.sizes())
    throw std::runtime_error("host convolution: PyTorch computed a result of size " + c10::str(r.sizes()) + " for a result buffer of size " + c10::str(out.sizes()));
  out.copy_(r);
  static metrics::Counter* runs = metrics::GetCounter("HostConvolutionRun");
  runs->Add();
}

// PyTorch's kernel allocates its result (and oneDNN its scratch space) on every call and
// frees it on return. glibc gives those blocks back to the system as soon as the free
// space at the top of the heap passes its trim threshold, so the next call faults the
// pages in and zeroes them again: MNIST's first convolution took 4.0 ms that way, 0.9
// ms without. Turning host convolutions on therefore pins glibc's thresholds at the
// values its own adaptive tuning reaches at most (blocks up to 32 MB from the heap, 64
// MB of free heap kept), for the whole process.
void KeepHostKernelTemporariesMapped() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

bool TurnedOn() {
  const char* v = std::getenv("XLA_HOST_CONVOLUTION");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace

bool UseHostConvolution(at::ScalarType type) {
  if (type != at::kFloat && type != at::kDouble && type != at::kBFloat16) return false;
  static const bool available = [] {
    if (!TurnedOn()) return false;
    runtime::Client& client = runtime::Client::Get();
    if (client.device_kind() != "CPU") return false;
    try {
      runtime::RegisterHostKernel(client.api(), lowering::kHostConvolutionTarget,
                                  runtime::HostKernelHandler<RunConvolution>);
    } catch (const runtime::RuntimeError&) {
      return false;  // a plugin without the FFI extension: XLA's convolution
    }
    KeepHostKernelTemporariesMapped();
    return true;
  }();
  return available;
}

}  // namespace torch_xla
