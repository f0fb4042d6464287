#include "runtime/key_value_store.h"

#include <cstring>

#include "pjrt_c_api.h"

namespace torch_xla::runtime::internal {
namespace {

PJRT_Error* Fail(PJRT_CallbackError* callback_error, PJRT_Error_Code code, const std::string& message) {
  return (*callback_error)(code, message.data(), message.size());
}

// The value handed to the plugin, which copies it and then calls the deleter.
char* CopyOut(const std::string& value) {
  char* out = new char[value.size() + 1];
  std::memcpy(out, value.data(), value.size());
  out[value.size()] = '\0';
  return out;
}

void DeleteValue(char* value) { delete[] value; }

}  // namespace

PJRT_Error* KeyValueGet(PJRT_KeyValueGetCallback_Args* args) {
  auto* store = static_cast<KeyValueStore*>(args->user_arg);
  std::string key(args->key, args->key_size);
  try {
    std::string value = store->Get(key, std::chrono::milliseconds(args->timeout_in_ms));
    args->value = CopyOut(value);
    args->value_size = value.size();
    args->value_deleter_callback = DeleteValue;
    return nullptr;
  } catch (const KeyValueStore::Timeout& e) {
    return Fail(args->callback_error, PJRT_Error_Code_DEADLINE_EXCEEDED,
                "key-value store: no process set '" + key + "' within " + std::to_string(args->timeout_in_ms) +
                    " ms: " + e.what());
  } catch (const std::exception& e) {
    return Fail(args->callback_error, PJRT_Error_Code_UNAVAILABLE, "key-value store: get '" + key + "': " + e.what());
  }
}

PJRT_Error* KeyValueTryGet(PJRT_KeyValueTryGetCallback_Args* args) {
  auto* store = static_cast<KeyValueStore*>(args->user_arg);
  std::string key(args->key, args->key_size);
  try {
    std::optional<std::string> value = store->TryGet(key);
    if (!value) return Fail(args->callback_error, PJRT_Error_Code_NOT_FOUND, "key-value store: no key '" + key + "'");
    args->value = CopyOut(*value);
    args->value_size = value->size();
    args->value_deleter_callback = DeleteValue;
    return nullptr;
  } catch (const std::exception& e) {
    return Fail(args->callback_error, PJRT_Error_Code_UNAVAILABLE, "key-value store: get '" + key + "': " + e.what());
  }
}

PJRT_Error* KeyValuePut(PJRT_KeyValuePutCallback_Args* args) {
  auto* store = static_cast<KeyValueStore*>(args->user_arg);
  std::string key(args->key, args->key_size);
  try {
    store->Put(key, std::string(args->value, args->value_size));
    return nullptr;
  } catch (const std::exception& e) {
    return Fail(args->callback_error, PJRT_Error_Code_UNAVAILABLE, "key-value store: put '" + key + "': " + e.what());
  }
}

}  // namespace torch_xla::runtime::internal
