#include "host/host_kernel.h"

#include <cstddef>
#include <exception>
#include <string_view>

#include "runtime/client.h"
#include "runtime/pjrt_call.h"
#include "host/xla_ffi_abi.h"

extern "C" {

// The PJRT FFI extension (xla/pjrt/c/pjrt_c_api_ffi_extension.h).
struct PJRT_FFI_Register_Handler_Args {
  std::size_t struct_size;
  const char* target_name;
  std::size_t target_name_size;
  void* handler;
  const char* platform_name;
  std::size_t platform_name_size;
  int traits;
};

struct PJRT_FFI_Extension {
  PJRT_Extension_Base base;
  void* type_register;
  void* user_data_add;
  PJRT_Error* (*register_handler)(PJRT_FFI_Register_Handler_Args* args);
};

}  // extern "C"

namespace torch_xla::host {
namespace {

constexpr int kMetadataExtension = 1;
constexpr int kExecuteStage = 3;
constexpr int kBufferKind = 1;
constexpr int kArrayAttr = 1;
constexpr int kS64Type = 5;  // XLA_FFI_DataType of int64
constexpr int kErrorInternal = 13;
constexpr int kErrorInvalidArgument = 3;

XLA_FFI_Error* MakeError(const XLA_FFI_CallFrame* frame, int code, const std::string& message) {
  XLA_FFI_Error_Create_Args args{};
  args.struct_size = offsetof(XLA_FFI_Error_Create_Args, errc) + sizeof(int);
  args.message = message.c_str();  // copied by the callee
  args.errc = code;
  return frame->api->XLA_FFI_Error_Create(&args);
}

// xla::PrimitiveType numbers, as XLA_FFI_DataType uses them.
bool TypeFromFfi(int dtype, runtime::ElementType* type) {
  switch (dtype) {
    case 1: *type = runtime::ElementType::kPred; return true;
    case 2: *type = runtime::ElementType::kS8; return true;
    case 3: *type = runtime::ElementType::kS16; return true;
    case 4: *type = runtime::ElementType::kS32; return true;
    case kS64Type: *type = runtime::ElementType::kS64; return true;
    case 6: *type = runtime::ElementType::kU8; return true;
    case 7: *type = runtime::ElementType::kU16; return true;
    case 8: *type = runtime::ElementType::kU32; return true;
    case 9: *type = runtime::ElementType::kU64; return true;
    case 10: *type = runtime::ElementType::kF16; return true;
    case 11: *type = runtime::ElementType::kF32; return true;
    case 12: *type = runtime::ElementType::kF64; return true;
    case 15: *type = runtime::ElementType::kC64; return true;
    case 16: *type = runtime::ElementType::kBF16; return true;
    case 18: *type = runtime::ElementType::kC128; return true;
    default: return false;
  }
}

bool DecodeBuffers(int64_t count, const int* kinds, void* const* items, std::vector<HostBuffer>* out) {
  out->reserve(static_cast<std::size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    if (kinds[i] != kBufferKind) return false;
    const auto* b = static_cast<const XLA_FFI_Buffer*>(items[i]);
    HostBuffer buffer{};
    if (!TypeFromFfi(b->dtype, &buffer.type)) return false;
    buffer.data = b->data;
    buffer.dims.assign(b->dims, b->dims + b->rank);
    out->push_back(std::move(buffer));
  }
  return true;
}

}  // namespace

XLA_FFI_Error* RunHostKernel(XLA_FFI_CallFrame* frame, HostKernel kernel) {
  // XLA asks a handler for its metadata (the FFI version it was built for) once, at
  // registration: the call frame then carries the metadata extension and no buffers.
  if (frame->extension_start != nullptr && frame->extension_start->type == kMetadataExtension) {
    auto* ext = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
    ext->metadata->api_version.major_version = frame->api->api_version.major_version;
    ext->metadata->api_version.minor_version = frame->api->api_version.minor_version;
    ext->metadata->traits = 0;
    return nullptr;
  }
  if (frame->stage != kExecuteStage) return nullptr;
  HostKernelCall call;
  call.parallel = HostParallel(frame->api, frame->ctx);
  if (!DecodeBuffers(frame->args.size, frame->args.types, frame->args.args, &call.operands) ||
      !DecodeBuffers(frame->rets.size, frame->rets.types, frame->rets.rets, &call.results))
    return MakeError(frame, kErrorInvalidArgument, "host kernel: operands and results must be dense buffers");
  for (int64_t i = 0; i < frame->attrs.size; ++i) {
    std::string_view name(frame->attrs.names[i]->ptr, frame->attrs.names[i]->len);
    if (name != "config") continue;
    const auto* array = static_cast<const XLA_FFI_Array*>(frame->attrs.attrs[i]);
    if (frame->attrs.types[i] != kArrayAttr || array->dtype != kS64Type)
      return MakeError(frame, kErrorInvalidArgument, "host kernel: `config` must be an array<i64>");
    const auto* values = static_cast<const int64_t*>(array->data);
    call.config.assign(values, values + array->size);
  }
  try {
    kernel(call);
  } catch (const std::exception& e) {
    return MakeError(frame, kErrorInternal, e.what());
  } catch (...) {
    return MakeError(frame, kErrorInternal, "host kernel failed with an unknown exception");
  }
  return nullptr;
}

void RegisterHostKernel(const PJRT_Api* api, const std::string& name,
                        XLA_FFI_Error* (*handler)(XLA_FFI_CallFrame*)) {
  const PJRT_FFI_Extension* ffi = nullptr;
  for (const PJRT_Extension_Base* e = api->extension_start; e != nullptr; e = e->next)
    if (e->type == PJRT_Extension_Type_FFI) ffi = reinterpret_cast<const PJRT_FFI_Extension*>(e);
  if (ffi == nullptr) throw runtime::RuntimeError("RegisterHostKernel(" + name + "): the plugin has no FFI extension");
  PJRT_FFI_Register_Handler_Args args{};
  args.struct_size = offsetof(PJRT_FFI_Register_Handler_Args, traits) + sizeof(int);
  args.target_name = name.data();
  args.target_name_size = name.size();
  args.handler = reinterpret_cast<void*>(handler);
  static constexpr std::string_view kPlatform = "Host";
  args.platform_name = kPlatform.data();
  args.platform_name_size = kPlatform.size();
  runtime::internal::CheckPjrt(api, ffi->register_handler(&args), "PJRT_FFI_Register_Handler(" + name + ")");
}

bool RegisterCpuHostKernel(const std::string& name, XLA_FFI_Error* (*handler)(XLA_FFI_CallFrame*)) {
  runtime::Client& client = runtime::Client::Get();
  if (client.device_kind() != "CPU" || !client.LowersForCpu()) return false;
  try {
    RegisterHostKernel(client.api(), name, handler);
  } catch (const runtime::RuntimeError&) {
    return false;  // a plugin without the FFI extension
  }
  return true;
}

}  // namespace torch_xla::host
