#include "host/convolution.h"

#include <ATen/ATen.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/aten_parts.h"
#include "host/cpu_tensor.h"
#include "host/host_kernel.h"
#include "host/kernel_targets.h"
#include "host/provided_cpu_memory.h"
#include "host/single_thread_scope.h"
#include "runtime/bounded_map.h"
#include "runtime/metrics.h"

namespace torch_xla::host {
namespace {

ConvolutionConfig ParseConfig(const HostKernelCall& call) {
  if (call.operands.size() != 2 || call.results.size() != 1 || call.operands[0].dims.empty() ||
      call.results[0].dims.empty())
    throw std::invalid_argument("host convolution: malformed call (" + std::to_string(call.operands.size()) +
                                " operands, " + std::to_string(call.results.size()) + " results)");
  return ConvolutionConfig::FromInts(call.config);
}

// PyTorch's result for the batch rows of `a` (and of `out` for the input gradient) that
// the caller passes: operands and result as in ir::HostConvolution.
at::Tensor Compute(const ConvolutionConfig& c, const at::Tensor& a, const at::Tensor& b, const at::Tensor& out) {
  switch (c.what) {
    case ConvolutionResult::kForward:
      return at::convolution(a, b, std::nullopt, c.stride, c.padding, c.dilation, c.transposed, c.output_padding,
                             c.groups);
    case ConvolutionResult::kGradInput:
      // PyTorch reads only the sizes of the input for this gradient; `out` has them.
      return std::get<0>(at::convolution_backward(a, out, b, std::nullopt, c.stride, c.padding, c.dilation,
                                                  c.transposed, c.output_padding, c.groups, {true, false, false}));
    default:
      // ... and only the sizes of the weight for this one.
      return std::get<1>(at::convolution_backward(a, b, out, std::nullopt, c.stride, c.padding, c.dilation,
                                                  c.transposed, c.output_padding, c.groups, {false, true, false}));
  }
}

void CheckSize(const at::Tensor& r, const at::Tensor& out) {
  if (r.sizes() != out.sizes())
    throw std::runtime_error("host convolution: PyTorch computed a result of size " + c10::str(r.sizes()) +
                             " for a result buffer of size " + c10::str(out.sizes()));
}

// Which of PyTorch's allocations of a part's result size is its result, by the call's
// config, the element type and the part's shapes: oneDNN's convolutions on NCHW tensors
// first allocate the input in its blocked layout (of the result's size where input and
// output are) and the result in the blocked layout, then the result, into which they
// reorder. Learnt from the first call of each kind (provided_cpu_memory.h); kNever where
// the result was none of the recorded allocations, or once an offer missed it.
constexpr int kNever = -1;
using ResultOrdinals = runtime::BoundedMap<std::vector<int64_t>, int, std::map<std::vector<int64_t>, int>>;

// Computes a part's result into `target`, a view of the result buffer: in place where
// the view is dense and PyTorch's kernel allocates its result where it is offered (the
// copy of each part's result cost ResNet-18 about 2.3 core-ms a step), else by a copy.
void ComputeInto(const HostKernelCall& call, const ConvolutionConfig& c, const at::Tensor& a,
                 const at::Tensor& b, const at::Tensor& target) {
  static ResultOrdinals ordinals;
  static metrics::Counter* in_place = metrics::GetCounter("HostConvolutionResultInPlace");
  const bool offerable =
      target.is_contiguous() && reinterpret_cast<uintptr_t>(target.data_ptr()) % 64 == 0 && target.numel() > 0;
  std::vector<int64_t> key;
  std::optional<int> ordinal = kNever;  // nullopt: not learnt yet
  if (offerable) {
    key.assign(call.config.begin(), call.config.end());
    key.push_back(static_cast<int64_t>(target.scalar_type()));
    for (const at::Tensor* t : {&a, &b, &target}) {
      key.push_back(-1);  // separates the shapes
      key.insert(key.end(), t->sizes().begin(), t->sizes().end());
      key.insert(key.end(), t->strides().begin(), t->strides().end());
    }
    ordinal = ordinals.Find(key);
  }
  const bool offered = ordinal != kNever;
  ProvidedBlock block;
  if (offered) {
    block.memory = target.data_ptr();
    block.bytes = target.nbytes();
    block.skip = ordinal.value_or(ProvidedBlock::kRecorded);
  }
  at::Tensor r;
  {
    ProvidedCpuMemory provided(std::span<ProvidedBlock>(&block, offered ? 1 : 0));
    r = Compute(c, a, b, target);
  }
  CheckSize(r, target);
  if (r.data_ptr() == target.data_ptr() && r.is_contiguous()) {
    in_place->Add();
    return;
  }
  if (!ordinal) {
    ordinals.Keep(std::move(key), r.is_contiguous() ? block.ResultOrdinal(r.data_ptr()) : kNever);
  } else if (offered) {
    ordinals.Keep(std::move(key), kNever);
  }
  target.copy_(r);
}

// Output channels a part takes at least where the call splits by channels.
constexpr int64_t kMinChannelsPerPart = 16;

// The most bytes of a weight gradient's rows one part computes where the call splits by
// channels: a larger gradient takes more parts (a multiple of the threads, which claim
// them as they free up). oneDNN's weight-gradient kernel slows down as a part's rows
// outgrow the caches: ResNet-18's 512x512x3x3 gradient (9.4 MB, batch 16 on 2x2, with
// its forward) took 4.55 ms in 2 parts of 4.7 MB, 3.90 in 4, 3.69 in 6, 3.20 in 8 (1.2 MB)
// and 3.40 in 12; the 256x256x3x3 one (2.4 MB) 1.65 ms in 2 parts, 1.75 in 8.
constexpr int64_t kMaxGradWeightPartBytes = int64_t{5} << 18;  // 1.25 MB

// Whether the call splits by output channels rather than by batch: where the weight
// has at least as many elements as the input. Each part of a batch split reads (and
// oneDNN reorders into its blocked layout) the whole weight, and each part of a weight
// gradient computes it whole; a channel split does that for the activations instead.
// Single-threaded parts on ResNet-18's shapes (batch 16, 3x3, ms; batch half against
// channel half): 512 channels on 2x2, forward 1.93 vs 1.37, input gradient 1.89 vs
// 1.31, weight gradient 9.5 vs 3.6; 256 on 4x4, 1.05 vs 0.94, 0.97 vs 0.85, 2.7 vs 1.2;
// 128 on 8x8 (weight and input of equal size) ties; 64 on 16x16, 0.90 vs 1.19, 0.91 vs
// 1.81, 0.96 vs 1.53. Grouped and transposed convolutions split by batch.
bool SplitsByChannels(const ConvolutionConfig& c, const at::Tensor& a, const at::Tensor& b, const at::Tensor& out,
                      int64_t threads) {
  if (c.transposed || c.groups != 1 || threads < 2) return false;
  const at::Tensor& weight = c.what == ConvolutionResult::kGradWeight ? out : b;
  const at::Tensor& input = c.what == ConvolutionResult::kForward     ? a
                            : c.what == ConvolutionResult::kGradInput ? out
                                                                              : b;
  return weight.size(0) >= 2 * kMinChannelsPerPart && weight.numel() >= input.numel();
}

// Output channels [begin, end) of each part: the forward's output channels and the
// weight gradient's rows are the part's own; the input gradient is the sum over the
// parts of each one's channels' contribution. One part per thread, and more for a large
// weight gradient (kMaxGradWeightPartBytes); counter HostConvolutionChannelParts.
void RunByChannels(const HostKernelCall& call, const ConvolutionConfig& c, const at::Tensor& a,
                   const at::Tensor& b, const at::Tensor& out) {
  const bool forward = c.what == ConvolutionResult::kForward;
  const int64_t channels = forward || c.what == ConvolutionResult::kGradInput ? b.size(0) : out.size(0);
  const int64_t threads = call.parallel.thread_count();
  int64_t parts = threads;
  if (c.what == ConvolutionResult::kGradWeight) {
    const int64_t by_size = (static_cast<int64_t>(out.nbytes()) + kMaxGradWeightPartBytes - 1) / kMaxGradWeightPartBytes;
    parts = std::max(parts, (by_size + threads - 1) / threads * threads);
  }
  parts = std::min(parts, channels / kMinChannelsPerPart);
  static metrics::Counter* part_count = metrics::GetCounter("HostConvolutionChannelParts");
  part_count->Add(parts);
  std::vector<at::Tensor> partial_input_grads(c.what == ConvolutionResult::kGradInput ? parts : 0);
  call.parallel.For(parts, [&](int64_t part) {
    c10::InferenceMode guard;
    SingleThreadedAtenScope one_thread;
    const int64_t begin = channels * part / parts, count = channels * (part + 1) / parts - begin;
    switch (c.what) {
      case ConvolutionResult::kForward:
        ComputeInto(call, c, a, b.narrow(0, begin, count), out.narrow(1, begin, count));
        break;
      case ConvolutionResult::kGradInput: {
        at::Tensor r = Compute(c, a.narrow(1, begin, count), b.narrow(0, begin, count), out);
        CheckSize(r, out);
        partial_input_grads[part] = std::move(r);
        break;
      }
      default:
        ComputeInto(call, c, a.narrow(1, begin, count), b, out.narrow(0, begin, count));
    }
  });
  if (!partial_input_grads.empty()) SumParts(call.parallel, partial_input_grads, out);
}

// The batch is split into one part per compute thread, each part computed by
// PyTorch's kernel on one thread: the forward result and the input gradient are
// per-sample, so each part writes its rows of the result; the weight gradient sums over
// the batch, so the parts' gradients are summed (in float32 for bfloat16).
void RunByBatch(const HostKernelCall& call, const ConvolutionConfig& c, const at::Tensor& a,
                const at::Tensor& b, const at::Tensor& out) {
  const int64_t batch = a.size(0);
  const int64_t parts = std::max<int64_t>(1, std::min(batch, call.parallel.thread_count()));
  const bool per_sample = c.what != ConvolutionResult::kGradWeight;
  std::vector<at::Tensor> partial_weight_grads(per_sample ? 0 : parts);
  call.parallel.For(parts, [&](int64_t part) {
    // Inference mode: the tensors need no autograd or view tracking on this thread.
    c10::InferenceMode guard;
    SingleThreadedAtenScope one_thread;
    const int64_t begin = batch * part / parts, end = batch * (part + 1) / parts;
    const at::Tensor rows = a.narrow(0, begin, end - begin);
    if (per_sample) {
      ComputeInto(call, c, rows, b, out.narrow(0, begin, end - begin));
    } else {
      at::Tensor r = Compute(c, rows, b.narrow(0, begin, end - begin), out);
      CheckSize(r, out);
      partial_weight_grads[part] = std::move(r);
    }
  });
  if (!per_sample) SumParts(call.parallel, partial_weight_grads, out);
}

void RunConvolution(const HostKernelCall& call) {
  const ConvolutionConfig c = ParseConfig(call);
  const at::Tensor a = CpuTensorOf(call.operands[0]), b = CpuTensorOf(call.operands[1]), out = CpuTensorOf(call.results[0]);
  if (SplitsByChannels(c, a, b, out, call.parallel.thread_count())) {
    RunByChannels(call, c, a, b, out);
    static metrics::Counter* by_channels = metrics::GetCounter("HostConvolutionSplitByChannels");
    by_channels->Add();
  } else {
    RunByBatch(call, c, a, b, out);
  }
  static metrics::Counter* runs = metrics::GetCounter("HostConvolutionRun");
  runs->Add();
}

// PyTorch's kernel allocates its result (and oneDNN its scratch space) on every call and
// frees it on return. glibc gives those blocks back to the system as soon as the free
// space at the top of the heap passes its trim threshold, so the next call faults the
// pages in and zeroes them again: MNIST's first convolution took 4.0 ms that way, 0.9
// ms without. The first host convolution therefore pins glibc's thresholds at the
// values its own adaptive tuning reaches at most (blocks up to 32 MB from the heap, 64
// MB of free heap kept), for the whole process.
void KeepHostKernelTemporariesMapped() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

}  // namespace

// Whether the kernel can run here: the CPU device of a plugin that takes host kernels
// (registered on the first yes), and PyTorch's thread controls found.
bool HostConvolutionAvailable() {
  static const bool available = [] {
    // Elsewhere, or with a plugin without the FFI extension: XLA's convolution.
    if (!SingleThreadedAtenScope::Available() ||
        !RegisterCpuHostKernel(kHostConvolutionTarget, HostKernelHandler<RunConvolution>))
      return false;
    KeepHostKernelTemporariesMapped();
    ProvidedCpuMemory::Install();  // results computed in place where it can (ComputeInto)
    return true;
  }();
  return available;
}

}  // namespace torch_xla::host
