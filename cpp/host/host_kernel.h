#pragma once
// Host kernels: C++ functions that a compiled graph calls on the CPU device, as XLA
// custom calls of the typed FFI (api_version 4). A lowering emits
//   "stablehlo.custom_call"(operands) {call_target_name = "<name>", api_version = 4 : i32,
//                                      backend_config = {config = array<i64: ...>}}
// and the plugin runs the kernel registered under <name> with the operands' and
// results' buffers (row-major) and the `config` integers.
//
// The PJRT C API reaches XLA's FFI through its FFI extension; the few structs of XLA's
// FFI C ABI this needs are declared in host_kernel.cpp. Nothing here knows PyTorch.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/element_type.h"
#include "host/host_parallel.h"

struct PJRT_Api;
struct XLA_FFI_CallFrame;
struct XLA_FFI_Error;

namespace torch_xla::host {

// A buffer the graph passes to a host kernel: dense, row-major.
struct HostBuffer {
  runtime::ElementType type;
  void* data;
  std::vector<int64_t> dims;
};

struct HostKernelCall {
  std::vector<HostBuffer> operands;
  std::vector<HostBuffer> results;
  std::vector<int64_t> config;
  // The graph's compute threads, for a kernel that splits its work.
  HostParallel parallel;
};

// Computes `call.results` from `call.operands`. A thrown exception fails the execution
// with its message (the graph's execution reports it; the process lives on).
using HostKernel = void (*)(const HostKernelCall& call);

// Decodes `frame` and runs `kernel` (the body of every registered handler).
XLA_FFI_Error* RunHostKernel(XLA_FFI_CallFrame* frame, HostKernel kernel);

// The C handler XLA calls for `Kernel`.
template <HostKernel Kernel>
XLA_FFI_Error* HostKernelHandler(XLA_FFI_CallFrame* frame) {
  return RunHostKernel(frame, Kernel);
}

// Registers `handler` (a HostKernelHandler<...>) as custom-call target `name` of the
// plugin behind `api` for the host platform. Throws runtime::RuntimeError when the plugin has no
// FFI extension or refuses the registration. Registration is process-wide and must
// precede the compile of a graph that calls the target.
void RegisterHostKernel(const PJRT_Api* api, const std::string& name, XLA_FFI_Error* (*handler)(XLA_FFI_CallFrame*));

// On the CPU device, registers `handler` as target `name` with the current client's
// plugin and returns true; false on other devices and where the plugin takes no host
// kernels. (Callers register once, from a function-local static.)
bool RegisterCpuHostKernel(const std::string& name, XLA_FFI_Error* (*handler)(XLA_FFI_CallFrame*));

}  // namespace torch_xla::host
