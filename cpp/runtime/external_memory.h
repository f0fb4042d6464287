#pragma once
// Device buffers whose memory another framework reads and writes (DLPack): the address
// of a buffer's memory, and holding that memory in place while it is shared. Buffers over
// memory another framework owns are made by Client::ViewOfMemory (defined here too).
#include <cstdint>

#include "runtime/client.h"

namespace torch_xla::runtime {

// The address of the buffer's memory as the plugin reports it (PJRT_Buffer_UnsafePointer,
// else PJRT_Buffer_OpaqueDeviceMemoryDataPointer): host memory on the CPU device. Waits
// until the buffer's contents are ready. Valid while the buffer lives; throws
// RuntimeError where the plugin reports no address.
uintptr_t BufferAddress(const Buffer& buffer);

// While one lives, PJRT neither frees nor moves the buffer's memory (an external
// reference of the buffer, PJRT_Buffer_IncreaseExternalReferenceCount), and the buffer
// itself stays alive.
class ExternalReference {
 public:
  explicit ExternalReference(BufferPtr buffer);
  ~ExternalReference();
  ExternalReference(const ExternalReference&) = delete;
  ExternalReference& operator=(const ExternalReference&) = delete;
  const BufferPtr& buffer() const { return buffer_; }

 private:
  BufferPtr buffer_;
  bool counted_ = false;  // whether the plugin took the reference (older plugins lack the call)
};

}  // namespace torch_xla::runtime
