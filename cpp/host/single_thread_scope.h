#pragma once
// Runs PyTorch's CPU kernels single-threaded on the current thread, for host kernels.
//
// A host kernel runs on a thread of XLA's compute pool and splits its work over that pool
// (host/host_parallel.h). PyTorch's kernels would otherwise start OpenMP teams of
// their own from each pool thread (oneDNN and MKL share PyTorch's OpenMP runtime), which
// then compete with the pool for the cores and keep spinning after the call, slowing
// down whatever runs next, eager PyTorch on the main thread included. Both thread counts
// changed here are per-thread settings (OpenMP's nthreads ICV, MKL's local thread count),
// so the rest of the process keeps its own.
namespace torch_xla {

class SingleThreadedAtenScope {
 public:
  // Whether PyTorch's OpenMP thread controls were found (looked up through the
  // process's libtorch_cpu, with MKL's where PyTorch has MKL); without them the scope
  // changes nothing.
  static bool Available();

  SingleThreadedAtenScope();
  ~SingleThreadedAtenScope();
  SingleThreadedAtenScope(const SingleThreadedAtenScope&) = delete;
  SingleThreadedAtenScope& operator=(const SingleThreadedAtenScope&) = delete;

 private:
  int previous_omp_ = 0;
  int previous_mkl_ = 0;
};

}  // namespace torch_xla
