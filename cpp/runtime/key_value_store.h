#pragma once
// The key-value store that a multi-process PJRT runtime (the CUDA plugin's) uses to
// exchange its topology and communicator ids between the processes of a run, and the
// PJRT_Client_Create callbacks that reach it. The store itself is the caller's (the
// ATen layer backs it with torch's c10d::TCPStore); nothing here knows PyTorch.
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

struct PJRT_Error;
struct PJRT_KeyValueGetCallback_Args;
struct PJRT_KeyValueTryGetCallback_Args;
struct PJRT_KeyValuePutCallback_Args;

namespace torch_xla::runtime {

class KeyValueStore {
 public:
  // Thrown by Get when no process set the key in time.
  class Timeout : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
  };

  virtual ~KeyValueStore() = default;
  // The value of `key`, waiting up to `timeout` for a process to set it.
  virtual std::string Get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  // The value of `key` if some process set it.
  virtual std::optional<std::string> TryGet(const std::string& key) = 0;
  virtual void Put(const std::string& key, const std::string& value) = 0;
};

namespace internal {

// The PJRT_Client_Create callbacks; user_arg is the KeyValueStore*. Errors reach the
// plugin through the callback_error it passes: DEADLINE_EXCEEDED for a Get that timed
// out, NOT_FOUND for a TryGet of a missing key, UNAVAILABLE for a store that failed.
PJRT_Error* KeyValueGet(PJRT_KeyValueGetCallback_Args* args);
PJRT_Error* KeyValueTryGet(PJRT_KeyValueTryGetCallback_Args* args);
PJRT_Error* KeyValuePut(PJRT_KeyValuePutCallback_Args* args);

}  // namespace internal
}  // namespace torch_xla::runtime
