#pragma once
// Internal helpers for calling the PJRT C API: argument structs that always carry their
// struct_size, and turning a returned PJRT_Error into a RuntimeError.
#include <string>
#include <string_view>

#include "pjrt_c_api.h"

namespace torch_xla::runtime::internal {

// A zeroed argument struct with struct_size set; PJRT uses struct_size for versioning,
// so a missing one makes the plugin read garbage.
template <typename Args>
Args MakeArgs(std::size_t struct_size) {
  Args args{};
  args.struct_size = struct_size;
  return args;
}

// Returns the message of `error` and destroys it.
std::string ConsumeError(const PJRT_Api* api, PJRT_Error* error);

// Throws RuntimeError("<function>: <message>") when `error` is set, destroying it first.
void CheckPjrt(const PJRT_Api* api, PJRT_Error* error, std::string_view function);

}  // namespace torch_xla::runtime::internal

// `auto args = PJRT_ARGS(PJRT_Foo_Args);` — value-initialised with struct_size set.
#define PJRT_ARGS(Type) ::torch_xla::runtime::internal::MakeArgs<Type>(Type##_STRUCT_SIZE)

// `PJRT_CALL(api, PJRT_Foo, args);` — calls api->PJRT_Foo(&args) and throws on error,
// naming the function in the message.
#define PJRT_CALL(api, Function, args) \
  ::torch_xla::runtime::internal::CheckPjrt((api), (api)->Function(&(args)), #Function)
