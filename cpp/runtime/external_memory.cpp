#include "runtime/external_memory.h"

#include <cstddef>

#include "pjrt_c_api.h"
#include "runtime/device_dims.h"
#include "runtime/live_api.h"
#include "runtime/pjrt_call.h"
#include "runtime/pjrt_element_type.h"

namespace torch_xla::runtime {
namespace {

// Whether the plugin's API table has the entry at `offset` (tables of older minor
// versions are shorter).
bool HasEntry(const PJRT_Api* api, std::size_t offset) { return offset < api->struct_size; }

const PJRT_Api* RequireApi(const char* what) {
  const PJRT_Api* api = internal::LiveApi();
  if (api == nullptr) throw RuntimeError(std::string(what) + ": the PJRT client was shut down");
  return api;
}

}  // namespace

uintptr_t BufferAddress(const Buffer& buffer) {
  const PJRT_Api* api = RequireApi("BufferAddress");
  buffer.Await();
  if (HasEntry(api, offsetof(PJRT_Api, PJRT_Buffer_UnsafePointer)) && api->PJRT_Buffer_UnsafePointer) {
    auto args = PJRT_ARGS(PJRT_Buffer_UnsafePointer_Args);
    args.buffer = buffer.pjrt();
    PJRT_CALL(api, PJRT_Buffer_UnsafePointer, args);
    return args.buffer_pointer;
  }
  if (HasEntry(api, offsetof(PJRT_Api, PJRT_Buffer_OpaqueDeviceMemoryDataPointer)) &&
      api->PJRT_Buffer_OpaqueDeviceMemoryDataPointer) {
    auto args = PJRT_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args);
    args.buffer = buffer.pjrt();
    PJRT_CALL(api, PJRT_Buffer_OpaqueDeviceMemoryDataPointer, args);
    return reinterpret_cast<uintptr_t>(args.device_memory_ptr);
  }
  throw RuntimeError("BufferAddress: the PJRT plugin does not report the address of a buffer's memory");
}

ExternalReference::ExternalReference(BufferPtr buffer) : buffer_(std::move(buffer)) {
  const PJRT_Api* api = RequireApi("ExternalReference");
  if (!HasEntry(api, offsetof(PJRT_Api, PJRT_Buffer_IncreaseExternalReferenceCount)) ||
      !api->PJRT_Buffer_IncreaseExternalReferenceCount)
    return;
  auto args = PJRT_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args);
  args.buffer = buffer_->pjrt();
  PJRT_CALL(api, PJRT_Buffer_IncreaseExternalReferenceCount, args);
  counted_ = true;
}

ExternalReference::~ExternalReference() {
  const PJRT_Api* api = internal::LiveApi();
  if (!counted_ || api == nullptr) return;
  auto args = PJRT_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args);
  args.buffer = buffer_->pjrt();
  // A destructor cannot throw; a failed release only drops its error.
  if (PJRT_Error* error = api->PJRT_Buffer_DecreaseExternalReferenceCount(&args)) internal::ConsumeError(api, error);
}

BufferPtr Client::ViewOfMemory(void* data, ElementType type, const std::vector<int64_t>& dims, int device_index,
                               void (*on_delete)(void* data, void* arg), void* arg) {
  PJRT_Device* target = device(device_index);
  if (!HasEntry(api_, offsetof(PJRT_Api, PJRT_Client_CreateViewOfDeviceBuffer)) ||
      !api_->PJRT_Client_CreateViewOfDeviceBuffer)
    throw RuntimeError("ViewOfMemory: the " + device_kind_ + " plugin cannot make a buffer over existing memory");
  // PJRT holds the buffer in its device form (runtime/device_dims.h): the same bytes.
  const std::vector<int64_t> device_dims = DeviceDims(type, dims);
  auto args = PJRT_ARGS(PJRT_Client_CreateViewOfDeviceBuffer_Args);
  args.client = client_;
  args.device_buffer_ptr = data;
  args.dims = device_dims.data();
  args.num_dims = device_dims.size();
  args.element_type = internal::ToPjrtType(type);
  args.layout = nullptr;  // the default: dense, row-major
  args.device = target;
  args.on_delete_callback = on_delete;
  args.on_delete_callback_arg = arg;
  PJRT_CALL(api_, PJRT_Client_CreateViewOfDeviceBuffer, args);
  return std::make_shared<Buffer>(args.buffer, type, dims, device_index);
}

}  // namespace torch_xla::runtime
