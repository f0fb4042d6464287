#pragma once
// The subset of XLA's FFI C ABI (xla/ffi/api/c_api.h, API major version 0) that host
// kernels use, declared for the runtime's own files (host_kernel.cpp,
// host_parallel.cpp). Every struct starts with its size; the layouts are those of the
// FFI version with execution stages and handler metadata, which the CPU plugin
// implements.
#include <cstddef>
#include <cstdint>

extern "C" {

struct XLA_FFI_Error;
struct XLA_FFI_ExecutionContext;

struct XLA_FFI_Extension_Base {
  std::size_t struct_size;
  int type;  // 1: handler metadata query
  XLA_FFI_Extension_Base* next;
};

struct XLA_FFI_Api_Version {
  std::size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int major_version;
  int minor_version;
};

struct XLA_FFI_Error_Create_Args {
  std::size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  const char* message;
  int errc;  // XLA_FFI_Error_Code
};

struct XLA_FFI_Error_Destroy_Args {
  std::size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Error* error;
};

using XLA_FFI_Task = void(void* data);

struct XLA_FFI_ThreadPool_Schedule_Args {
  std::size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_Task* task;
  void* data;
};

struct XLA_FFI_ThreadPool_NumThreads_Args {
  std::size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  int64_t* num_threads;  // out
};

// The function table. Entries only ever get appended: an entry exists when
// `struct_size` reaches past it (see HasEntry).
struct XLA_FFI_Api {
  std::size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Api_Version api_version;
  void* internal_api;
  XLA_FFI_Error* (*XLA_FFI_Error_Create)(XLA_FFI_Error_Create_Args* args);
  void* XLA_FFI_Error_GetMessage;
  void (*XLA_FFI_Error_Destroy)(XLA_FFI_Error_Destroy_Args* args);
  void* XLA_FFI_Handler_Register;
  void* XLA_FFI_Stream_Get;
  void* XLA_FFI_TypeId_Register;
  void* XLA_FFI_ExecutionContext_Get;
  void* XLA_FFI_State_Set;
  void* XLA_FFI_State_Get;
  void* XLA_FFI_DeviceMemory_Allocate;
  void* XLA_FFI_DeviceMemory_Free;
  XLA_FFI_Error* (*XLA_FFI_ThreadPool_Schedule)(XLA_FFI_ThreadPool_Schedule_Args* args);
  // Inserted here in the version that also appended XLA_FFI_RunId_Get; in earlier
  // versions this slot held XLA_FFI_Future_Create (see HostParallel::thread_count).
  XLA_FFI_Error* (*XLA_FFI_ThreadPool_NumThreads)(XLA_FFI_ThreadPool_NumThreads_Args* args);
  void* XLA_FFI_Future_Create;
  void* XLA_FFI_Future_SetAvailable;
  void* XLA_FFI_Future_SetError;
  void* XLA_FFI_RunId_Get;
  // further entries are not used
};

struct XLA_FFI_Metadata {
  std::size_t struct_size;
  XLA_FFI_Api_Version api_version;
  uint32_t traits;
};

struct XLA_FFI_Metadata_Extension {
  XLA_FFI_Extension_Base extension_base;
  XLA_FFI_Metadata* metadata;
};

struct XLA_FFI_Buffer {
  std::size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int dtype;  // XLA_FFI_DataType (the values of xla::PrimitiveType)
  void* data;
  int64_t rank;
  int64_t* dims;
};

struct XLA_FFI_ByteSpan {
  const char* ptr;
  std::size_t len;
};

struct XLA_FFI_Array {
  int dtype;
  std::size_t size;
  void* data;
};

struct XLA_FFI_Args {
  std::size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  int* types;  // 1: buffer
  void** args;
};

struct XLA_FFI_Rets {
  std::size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  int* types;  // 1: buffer
  void** rets;
};

struct XLA_FFI_Attrs {
  std::size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  int* types;  // 1: array, 2: dictionary, 3: scalar, 4: string
  XLA_FFI_ByteSpan** names;
  void** attrs;
};

struct XLA_FFI_CallFrame {
  std::size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  const XLA_FFI_Api* api;
  XLA_FFI_ExecutionContext* ctx;
  int stage;
  XLA_FFI_Args args;
  XLA_FFI_Rets rets;
  XLA_FFI_Attrs attrs;
  void* future;
};

}  // extern "C"

namespace torch_xla::host::internal {

// Whether `api`'s function table reaches past `entry` (a member of XLA_FFI_Api).
template <typename Entry>
bool HasEntry(const XLA_FFI_Api* api, Entry XLA_FFI_Api::*entry) {
  const auto* base = reinterpret_cast<const char*>(api);
  const auto* field = reinterpret_cast<const char*>(&(api->*entry));
  return api->struct_size >= static_cast<std::size_t>(field - base) + sizeof(Entry);
}

}  // namespace torch_xla::host::internal
