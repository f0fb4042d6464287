#include "distributed/cross_process.h"

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/GroupRegistry.hpp>

#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

#include "aten/bridge.h"
#include "host/single_thread_scope.h"
#include "ir/builder_collectives.h"
#include "host/kernel_targets.h"
#include "runtime/client.h"
#include "host/host_kernel.h"
#include "runtime/metrics.h"

namespace torch_xla {
namespace {

using ir::CrossProcessKind;
using ir::ReduceKind;

std::atomic<int> g_process_index{0};
std::atomic<int> g_process_count{1};

// The first failure of a cross-process collective: the processes are out of step for good.
std::mutex g_failure_mutex;
std::string g_failure;

void RecordFailure(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_failure_mutex);
  if (g_failure.empty()) g_failure = message;
}

at::Tensor Wrap(const host::HostBuffer& buffer) {
  return at::from_blob(buffer.data, buffer.dims, at::TensorOptions().dtype(DeviceScalarTypeOf(buffer.type)));
}

// `rows` [n, ...] reduced over dimension 0, in their own dtype.
at::Tensor ReduceRows(ReduceKind reduce, const at::Tensor& rows) {
  bool pred = rows.scalar_type() == at::kBool;
  switch (reduce) {
    case ReduceKind::kSum: return rows.sum(0, false, rows.scalar_type());
    case ReduceKind::kProd: return rows.prod(0, false, rows.scalar_type());
    case ReduceKind::kMax: return pred ? rows.any(0) : rows.amax(0);
    case ReduceKind::kMin: return pred ? rows.all(0) : rows.amin(0);
    case ReduceKind::kAnd:
    case ReduceKind::kOr: {
      if (pred) return reduce == ReduceKind::kAnd ? rows.all(0) : rows.any(0);
      at::Tensor out = rows[0].clone();
      for (int64_t i = 1; i < rows.size(0); ++i)
        out = reduce == ReduceKind::kAnd ? at::bitwise_and(out, rows[i]) : at::bitwise_or(out, rows[i]);
      return out;
    }
  }
  TORCH_CHECK(false, "cross-process collective: unknown reduction");
}

// The result of collective `a` for global replica `me`, from every replica's value
// (`values` [replicas, ...], in global ordinal order).
at::Tensor Compute(const ir::CrossProcessAttrs& a, const at::Tensor& values, int64_t me) {
  const ir::CollectiveAttrs& c = a.collective;
  if (a.what == CrossProcessKind::kCollectivePermute) {
    for (const auto& pair : c.groups)
      if (pair[1] == me) return values[pair[0]];
    return at::zeros_like(values[0]);
  }
  std::vector<int64_t> members;
  for (const auto& group : c.groups)
    if (std::find(group.begin(), group.end(), me) != group.end()) members = group;
  TORCH_CHECK(!members.empty(), "cross-process collective: replica ", me, " is in no group");
  int64_t size = static_cast<int64_t>(members.size());
  int64_t position = std::find(members.begin(), members.end(), me) - members.begin();
  at::Tensor rows = values.index_select(0, at::tensor(members, at::kLong));
  switch (a.what) {
    case CrossProcessKind::kAllReduce: return ReduceRows(c.reduce, rows);
    case CrossProcessKind::kAllGather: return at::cat(rows.unbind(0), c.dim);
    case CrossProcessKind::kReduceScatter: return ReduceRows(c.reduce, rows).chunk(size, c.dim)[position];
    case CrossProcessKind::kAllToAll: {
      std::vector<at::Tensor> received;
      for (int64_t m = 0; m < size; ++m) received.push_back(rows[m].chunk(size, c.dim)[position]);
      return at::cat(received, c.concat_dim);
    }
    default: TORCH_CHECK(false, "cross-process collective: unknown kind ", static_cast<int64_t>(a.what));
  }
}

void Exchange(const host::HostKernelCall& call);

// The kernel: operands are the node's operand and the replica's index in its process (then,
// but for a graph's first exchange, the previous exchange's result, which only orders it). A
// failure (a lost process: its connections closed; or a timeout) is also kept for
// CrossProcessFailure(), so that the next sync raises it: the executions that follow,
// whose inputs it poisoned, fail silently until something reads them.
void RunCrossProcess(const host::HostKernelCall& call) {
  try {
    Exchange(call);
  } catch (const c10::Error& e) {
    RecordFailure(e.what_without_backtrace());
    throw std::runtime_error(e.what_without_backtrace());
  } catch (const std::exception& e) {
    RecordFailure(e.what());
    throw;
  }
}

void Exchange(const host::HostKernelCall& call) {
  static metrics::Counter* runs = metrics::GetCounter("CrossProcessCollective");
  runs->Add();
  ir::Attrs attrs;
  attrs.ints = call.config;
  const ir::CrossProcessAttrs a = ir::CrossProcessAttrs::FromAttrs(attrs);
  uint32_t replica = 0;
  std::memcpy(&replica, call.operands[1].data, sizeof replica);
  const int processes = g_process_count.load();
  const int64_t local = a.local_replicas;
  TORCH_CHECK(processes * local == a.collective.num_replicas, "cross-process collective: compiled for ",
              a.collective.num_replicas, " replicas, but ", processes, " processes run ", local, " each");
  c10::intrusive_ptr<c10d::Backend> rail =
      c10d::resolve_process_group(RailGroupName(static_cast<int>(replica)))->getBackend(c10::DeviceType::CPU);
  SingleThreadedAtenScope single_threaded;  // on XLA's pool: no OpenMP teams of PyTorch's
  at::Tensor input = Wrap(call.operands[0]);
  at::Tensor output = Wrap(call.results[0]);
  if (a.what == CrossProcessKind::kAllReduceSum) {
    output.copy_(input);
    std::vector<at::Tensor> tensors{output};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::SUM;
    rail->allreduce(tensors, options)->wait();
    return;
  }
  // Every replica's value: this process's block [local, ...] from each process.
  std::vector<int64_t> dims = input.sizes().vec();
  dims[0] = processes * local;
  at::Tensor values = at::empty(dims, input.options());
  std::vector<std::vector<at::Tensor>> blocks(1);
  for (int p = 0; p < processes; ++p) blocks[0].push_back(values.narrow(0, p * local, local));
  std::vector<at::Tensor> inputs{input};
  rail->allgather(blocks, inputs)->wait();
  output.copy_(Compute(a, values, g_process_index.load() * local + replica));
}

}  // namespace

void SetProcessLayout(int index, int count) {
  TORCH_CHECK(count >= 1 && index >= 0 && index < count, "process ", index, " of ", count,
              ": the index must lie in [0, count)");
  g_process_index.store(index);
  g_process_count.store(count);
}

ProcessLayout GetProcessLayout() { return ProcessLayout{g_process_index.load(), g_process_count.load()}; }

std::string CrossProcessFailure() {
  std::lock_guard<std::mutex> lock(g_failure_mutex);
  return g_failure;
}

std::string RailGroupName(int replica) { return "torch_xla_rail_" + std::to_string(replica); }

void EnsureCrossProcessKernel() {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    runtime::Client& client = runtime::Client::Get();
    if (client.device_kind() != "CPU") {
      error = "collectives across processes run on the CPU device; the " + client.device_kind() +
              " plugin's own multi-process runtime is not wired up";
      return;
    }
    try {
      host::RegisterHostKernel(client.api(), host::kCrossProcessTarget,
                                  host::HostKernelHandler<RunCrossProcess>);
    } catch (const runtime::RuntimeError& e) {
      error = std::string("collectives across processes need host kernels: ") + e.what();
    }
  });
  TORCH_CHECK(error.empty(), error);
}

}  // namespace torch_xla
