#pragma once
// Sharing the memory of XLA tensors with other frameworks, for DLPack
// (torch_xla.utils.dlpack): on the CPU device a buffer is host memory, which a CPU
// tensor can view, and host memory can back a buffer.
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace torch_xla {

// A CPU tensor over the memory of the XLA tensor's buffer (computed first when the tensor
// is pending): writes through either are seen by the other while the XLA tensor keeps that
// buffer (an in-place update of the XLA tensor gives it a new one). The view keeps the
// buffer alive and in place. Its dtype is the element type the device holds, which a
// precision mode (XLA_USE_BF16) may make differ from the XLA tensor's. Throws
// c10::NotImplementedError off the CPU device, whose buffers are not host memory.
at::Tensor HostViewOfXlaTensor(const at::Tensor& xla_tensor);

// An XLA tensor on device `ordinal` holding the CPU tensor's data: over its memory
// (shared, no copy) when it is contiguous, of a dtype the device holds as is, and the
// plugin can make a buffer over it (PJRT_Client_CreateViewOfDeviceBuffer); else a copy.
// `shared` tells which.
at::Tensor XlaTensorFromHostMemory(const at::Tensor& cpu_tensor, int ordinal, bool* shared);

// The address of the XLA tensor's buffer memory (computed first when pending), as the
// plugin reports it.
uint64_t UnsafeBufferPointer(const at::Tensor& xla_tensor);

}  // namespace torch_xla
