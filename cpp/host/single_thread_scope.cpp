#include "host/single_thread_scope.h"

#include <dlfcn.h>

#include <ATen/Parallel.h>

namespace torch_xla {
namespace {

struct ThreadControls {
  int (*omp_get_max_threads)() = nullptr;
  void (*omp_set_num_threads)(int) = nullptr;
  // Sets this thread's MKL thread count (0: the global one) and returns the previous;
  // absent from builds without MKL.
  int (*mkl_set_num_threads_local)(int) = nullptr;
};

// Looked up through libtorch_cpu's handle, which searches its dependencies too: the
// OpenMP runtime is the one PyTorch ships (a second libgomp would have settings of its
// own), and MKL is linked into libtorch_cpu.
const ThreadControls& Controls() {
  static const ThreadControls controls = [] {
    ThreadControls c;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&at::get_num_threads), &info) == 0 || info.dli_fname == nullptr) return c;
    void* torch_cpu = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (torch_cpu == nullptr) return c;
    c.omp_get_max_threads = reinterpret_cast<int (*)()>(dlsym(torch_cpu, "omp_get_max_threads"));
    c.omp_set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(torch_cpu, "omp_set_num_threads"));
    // MKL's C entry (mkl.h maps mkl_set_num_threads_local to it); the lower-case
    // symbols are its Fortran entries, which take pointers.
    c.mkl_set_num_threads_local = reinterpret_cast<int (*)(int)>(dlsym(torch_cpu, "MKL_Set_Num_Threads_Local"));
    return c;
  }();
  return controls;
}

}  // namespace

bool SingleThreadedAtenScope::Available() {
  const ThreadControls& c = Controls();
  return c.omp_get_max_threads != nullptr && c.omp_set_num_threads != nullptr;
}

SingleThreadedAtenScope::SingleThreadedAtenScope() {
  if (!Available()) return;
  const ThreadControls& c = Controls();
  // ATen sets a thread's OpenMP thread count on its first parallel call from that
  // thread; asking for the count now makes that happen before, not after, ours.
  (void)at::get_num_threads();
  previous_omp_ = c.omp_get_max_threads();
  c.omp_set_num_threads(1);
  if (c.mkl_set_num_threads_local != nullptr) previous_mkl_ = c.mkl_set_num_threads_local(1);
}

SingleThreadedAtenScope::~SingleThreadedAtenScope() {
  if (!Available()) return;
  const ThreadControls& c = Controls();
  c.omp_set_num_threads(previous_omp_);
  if (c.mkl_set_num_threads_local != nullptr) c.mkl_set_num_threads_local(previous_mkl_);
}

}  // namespace torch_xla
