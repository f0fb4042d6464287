#pragma once
// Eager mode (torch_xla.experimental.eager_mode): each op on the XLA device is compiled
// and run as soon as it is called, instead of joining the pending graph that a sync runs.
//
// Every XLA kernel runs inside an EagerOpScope (the generated registrations open one; see
// cmake/run_torchgen.py). When the outermost scope of a thread closes in eager mode, the
// op's results, which are the only pending tensors left, run as one graph: an op with
// several results (batch norm, svd) is one execution. Each op's graph is found in the
// compile cache by its hash like any other, so an op repeated with the same shapes
// compiles once. Execution stays asynchronous: the sync launches the graph and returns.
namespace torch_xla {

void SetEagerMode(bool enabled);
bool EagerMode();

class EagerOpScope {
 public:
  EagerOpScope();
  // Runs the op's results when this is the thread's outermost scope and the op returned
  // (not while an exception unwinds it); a failure to run them is the op's error.
  ~EagerOpScope() noexcept(false);
  EagerOpScope(const EagerOpScope&) = delete;
  EagerOpScope& operator=(const EagerOpScope&) = delete;

 private:
  bool outermost_;
  int exceptions_;  // std::uncaught_exceptions() when the scope opened
};

// In eager mode, runs every pending tensor now, as the graph of one op. For operations
// that make pending tensors outside a kernel (the Python bindings' collectives and
// optimization barrier).
void SyncIfEager();

}  // namespace torch_xla
