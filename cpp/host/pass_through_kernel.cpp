#include "host/pass_through_kernel.h"

#include <cstring>
#include <stdexcept>

#include "host/host_kernel.h"

namespace torch_xla::host {
namespace {

void PassThrough(const HostKernelCall& call) {
  if (call.operands.size() != 1 || call.results.size() != 1 || call.operands[0].dims != call.results[0].dims ||
      call.operands[0].type != call.results[0].type)
    throw std::invalid_argument("pass-through kernel: expected one operand and a result of its shape");
  const HostBuffer& in = call.operands[0];
  const HostBuffer& out = call.results[0];
  if (in.data == out.data) return;  // the usual case: the result aliases the operand
  std::size_t bytes = runtime::ElementSize(in.type);
  for (int64_t d : in.dims) bytes *= static_cast<std::size_t>(d);
  std::memcpy(out.data, in.data, bytes);
}

}  // namespace

bool PassThroughKernelAvailable() {
  static const bool available = RegisterCpuHostKernel(kPassThroughTarget, HostKernelHandler<PassThrough>);
  return available;
}

}  // namespace torch_xla::host
