// How a host ATen op's work splits by batch into parts that run on the graph's compute
// threads at once (host/aten_ops.cpp).
//
// A host ATen call runs PyTorch's kernel single-threaded on one of XLA's compute
// threads (PyTorch's own OpenMP teams would compete with XLA's pool for the cores). An
// op that lies on the graph's critical path, as an LSTM's layers do, then leaves the
// other cores idle. Ops whose samples are independent split instead: each part computes
// a slice of the batch on its own thread, the way host convolutions do.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <vector>

#include "host/host_parallel.h"

namespace torch_xla {

enum class PartKind {
  kWhole,   // every part reads all of it (weights, a mask without a batch dimension)
  kSplit,   // each part reads or writes its slice of the batch along `dim`
  kSum,     // a result the parts compute whole and that is their sum (weight gradients)
  kPieces,  // an opaque 1-D buffer (a workspace): part p's piece starts at p * size / parts
};

struct PartRule {
  PartKind kind = PartKind::kWhole;
  int64_t dim = 0;
};

struct BatchParts {
  std::vector<PartRule> args;     // one per argument of the op's schema
  std::vector<PartRule> results;  // one per result
  int64_t batch = 0;              // the batch size the kSplit rules slice
};

// The rules for `op` with arguments `args` (the op's schema order; tensors may be meta
// tensors), or nothing when the op does not split.
std::optional<BatchParts> BatchPartsOf(const c10::OperatorName& op, const std::vector<c10::IValue>& args);

// out = the sum of `partials` (a kSum result: each part's whole result; added in float32
// for bfloat16 and half), split by element ranges over `parallel`'s threads and written
// straight into `out`. Summing ResNet-18's 44 MB of weight gradients on one thread, into
// a temporary then copied, left the other core idle for 3.5 ms a step.
void SumParts(const host::HostParallel& parallel, const std::vector<at::Tensor>& partials, const at::Tensor& out);

}  // namespace torch_xla
