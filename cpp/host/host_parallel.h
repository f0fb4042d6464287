#pragma once
// Parallel parts of a host kernel's work, run on the threads that run the graph.
//
// XLA's CPU runtime runs a graph's operations on its own compute thread pool and calls a
// host kernel on one of those threads. A kernel that splits its work (a convolution by
// batch, say) hands the parts to that same pool through the FFI's thread-pool entry, so
// the parts share the cores with the rest of the graph instead of competing with it from
// threads of their own.
#include <cstdint>
#include <functional>

struct XLA_FFI_Api;
struct XLA_FFI_ExecutionContext;

namespace torch_xla::host {

class HostParallel {
 public:
  // Parts run on the calling thread only.
  HostParallel() = default;
  // Parts run on the pool of the execution behind `ctx` where `api` offers one.
  HostParallel(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx);

  // How many threads the parts can use at once (the pool's size; at least 1).
  int64_t thread_count() const { return threads_; }

  // Runs fn(0) .. fn(count - 1), each once, and returns when all have finished. The
  // calling thread runs parts too, so the call completes even when every pool thread is
  // busy (or blocked in a kernel of its own): a part is run by whichever thread claims
  // it first. Rethrows the first exception a part threw, after all parts have finished.
  void For(int64_t count, const std::function<void(int64_t)>& fn) const;

 private:
  const XLA_FFI_Api* api_ = nullptr;
  XLA_FFI_ExecutionContext* ctx_ = nullptr;
  int64_t threads_ = 1;
};

}  // namespace torch_xla::host
