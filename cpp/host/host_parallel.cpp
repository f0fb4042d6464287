#include "host/host_parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>

#include "host/xla_ffi_abi.h"

namespace torch_xla::host {
namespace {

// What the threads of one For call share. Pool tasks hold it by shared_ptr: a task the
// pool starts only after For has returned finds no part left and just drops it.
struct Parts {
  const std::function<void(int64_t)>* fn;  // valid until `finished` reaches `count`
  int64_t count;
  std::atomic<int64_t> next{0};
  std::mutex mutex;
  std::condition_variable all_finished;
  int64_t finished = 0;            // guarded by mutex
  std::exception_ptr first_error;  // guarded by mutex
};

// Claims and runs parts until none is left.
void RunParts(Parts& parts) {
  for (int64_t i = parts.next.fetch_add(1); i < parts.count; i = parts.next.fetch_add(1)) {
    std::exception_ptr error;
    try {
      (*parts.fn)(i);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(parts.mutex);
    if (error && !parts.first_error) parts.first_error = error;
    if (++parts.finished == parts.count) parts.all_finished.notify_all();
  }
}

void PoolTask(void* data) {
  std::unique_ptr<std::shared_ptr<Parts>> parts(static_cast<std::shared_ptr<Parts>*>(data));
  RunParts(**parts);
}

void DestroyError(const XLA_FFI_Api* api, XLA_FFI_Error* error) {
  XLA_FFI_Error_Destroy_Args args{};
  args.struct_size = sizeof(args);
  args.error = error;
  api->XLA_FFI_Error_Destroy(&args);
}

}  // namespace

HostParallel::HostParallel(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx) {
  using internal::HasEntry;
  if (api == nullptr || ctx == nullptr || !HasEntry(api, &XLA_FFI_Api::XLA_FFI_ThreadPool_Schedule)) return;
  api_ = api;
  ctx_ = ctx;
  // The slot of the thread count held another function before XLA_FFI_RunId_Get was
  // appended (xla_ffi_abi.h); a table without that entry leaves the count at 1, and
  // the parts run on the calling thread.
  if (!HasEntry(api, &XLA_FFI_Api::XLA_FFI_RunId_Get)) return;
  int64_t threads = 0;
  XLA_FFI_ThreadPool_NumThreads_Args args{};
  args.struct_size = sizeof(args);
  args.ctx = ctx;
  args.num_threads = &threads;
  if (XLA_FFI_Error* error = api->XLA_FFI_ThreadPool_NumThreads(&args)) {
    DestroyError(api, error);
    return;
  }
  threads_ = std::max<int64_t>(threads, 1);
}

void HostParallel::For(int64_t count, const std::function<void(int64_t)>& fn) const {
  if (count <= 0) return;
  auto parts = std::make_shared<Parts>();
  parts->fn = &fn;
  parts->count = count;
  // Offer the pool one task per thread that could help (the caller is one of them).
  const int64_t helpers = api_ == nullptr ? 0 : std::min(count, threads_) - 1;
  for (int64_t i = 0; i < helpers; ++i) {
    auto* data = new std::shared_ptr<Parts>(parts);
    XLA_FFI_ThreadPool_Schedule_Args args{};
    args.struct_size = sizeof(args);
    args.ctx = ctx_;
    args.task = PoolTask;
    args.data = data;
    if (XLA_FFI_Error* error = api_->XLA_FFI_ThreadPool_Schedule(&args)) {
      DestroyError(api_, error);
      delete data;
      break;  // the caller runs what the pool will not
    }
  }
  RunParts(*parts);
  std::unique_lock<std::mutex> lock(parts->mutex);
  parts->all_finished.wait(lock, [&] { return parts->finished == parts->count; });
  if (parts->first_error) std::rethrow_exception(parts->first_error);
}

}  // namespace torch_xla::host
