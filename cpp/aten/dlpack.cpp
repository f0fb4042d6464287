#include "aten/dlpack.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include "aten/bridge.h"
#include "aten/transfer.h"
#include "exec/graph_executor.h"
#include "runtime/external_memory.h"

namespace torch_xla {
namespace {

// The buffer holding the XLA tensor's value, computing it first when it is pending.
runtime::BufferPtr ComputedBuffer(const at::Tensor& tensor, const char* op) {
  TORCH_CHECK(IsXlaTensor(tensor), op, ": expected a tensor on an XLA device, got a ", tensor.device(), " tensor ",
              DescribeTensor(tensor));
  XlaTensorPtr x = GetXlaTensor(tensor, op);
  exec::SyncTensors({x});
  runtime::BufferPtr buffer = x->buffer();
  TORCH_CHECK(buffer != nullptr, op, ": the tensor ", DescribeTensor(tensor), " has no device buffer");
  return buffer;
}

// PJRT's on_delete callback of a buffer over a CPU tensor's memory: drops the tensor
// that kept the memory alive.
void ReleaseHostTensor(void* /*data*/, void* owner) { delete static_cast<at::Tensor*>(owner); }

}  // namespace

at::Tensor HostViewOfXlaTensor(const at::Tensor& xla_tensor) {
  constexpr const char* kOp = "to_dlpack";
  const std::string& kind = runtime::Client::Get().device_kind();
  TORCH_CHECK_NOT_IMPLEMENTED(kind == "CPU", kOp, ": the memory of a ", kind,
                              " device is not host memory; only the CPU device's tensors can be shared");
  runtime::BufferPtr buffer = ComputedBuffer(xla_tensor, kOp);
  TORCH_CHECK_NOT_IMPLEMENTED(!buffer->is_sharded(), kOp,
                              ": the tensor is laid out over the devices of the SPMD mesh; it has no single "
                              "buffer to share (read it with .cpu())");
  void* data = reinterpret_cast<void*>(runtime::BufferAddress(*buffer));
  auto* hold = new runtime::ExternalReference(buffer);
  // The bytes of the buffer's device form (runtime/device_dims.h) are those of the
  // tensor's dimensions, row-major.
  return at::from_blob(
      data, buffer->dims(), [hold](void*) { delete hold; },
      at::TensorOptions().dtype(DeviceScalarTypeOf(buffer->type())));
}

at::Tensor XlaTensorFromHostMemory(const at::Tensor& cpu_tensor, int ordinal, bool* shared) {
  constexpr const char* kOp = "from_dlpack";
  TORCH_CHECK_VALUE(cpu_tensor.device().is_cpu(), kOp, ": expected a CPU tensor, got a ", cpu_tensor.device(),
                    " tensor");
  const int device = OrdinalOf(XlaDeviceOf(ordinal));
  runtime::Client& client = runtime::Client::Get();
  const runtime::ElementType type = ElementTypeOf(cpu_tensor.scalar_type());
  *shared = false;
  const bool viewable = client.device_kind() == "CPU" && cpu_tensor.is_contiguous() && !cpu_tensor.is_conj() &&
                        !cpu_tensor.is_neg() && DeviceScalarTypeOf(type) == cpu_tensor.scalar_type() &&
                        cpu_tensor.numel() > 0 && !runtime::spmd::Enabled();
  if (viewable) {
    auto* owner = new at::Tensor(cpu_tensor);
    try {
      runtime::BufferPtr buffer = client.ViewOfMemory(cpu_tensor.data_ptr(), type, cpu_tensor.sizes().vec(), device,
                                                      ReleaseHostTensor, owner);
      *shared = true;
      return AtenFromXla(XlaTensor::FromBuffer(std::move(buffer)));
    } catch (const runtime::RuntimeError&) {
      // The plugin refused the view (it may require more alignment than the tensor's
      // memory has): the data is copied below. PJRT did not take the owner.
      delete owner;
    }
  }
  return AtenFromXla(FromCpuTensor(cpu_tensor, device));
}

uint64_t UnsafeBufferPointer(const at::Tensor& xla_tensor) {
  return runtime::BufferAddress(*ComputedBuffer(xla_tensor, "_unsafe_buffer_pointer"));
}

}  // namespace torch_xla
