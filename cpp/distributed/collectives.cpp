#include "distributed/collectives.h"

#include <cmath>
#include <map>

#include "distributed/cross_process.h"
#include "distributed/reduce_type.h"
#include "ops/kernel_util.h"
#include "exec/replication.h"
#include "ir/builder_collectives.h"

namespace torch_xla {
namespace {

using ir::ReduceKind;
using ir::Value;

// Runs `body`, turning the IR layer's std::invalid_argument (whose message names the
// collective already) into a c10::Error.
template <typename F>
auto FromIrErrors(F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK(false, e.what());
  }
}

// The replicas a collective on `device` runs across: those of the running replication
// (or the device alone) in this process, times the processes.
struct Span {
  int64_t local = 1;
  int64_t processes = 1;
  int64_t total() const { return local * processes; }
};

Span SpanOf(int device) {
  std::shared_ptr<exec::Replication> replication = exec::ReplicationOf(device);
  return Span{replication ? replication->size() : 1, GetProcessLayout().count};
}

IrInput CollectiveInput(const at::Tensor& input, const char* op) {
  TORCH_CHECK(IsXlaTensor(input), op, ": expected a tensor on an XLA device, got a ", input.device(), " tensor ",
              DescribeTensor(input));
  return GetIrInput(input, op);
}

// `value` times `scale` (a graph parameter, so another scale does not recompile).
Value Scaled(const Value& value, double scale, const char* op) {
  if (scale == 1.0) return value;
  runtime::ElementType type = value.shape().type;
  bool integral = !runtime::IsFloating(type) && !runtime::IsComplex(type);
  TORCH_CHECK(!integral || scale == std::trunc(scale), op, ": scale ", scale,
              " is not a whole number, so it cannot scale the integer tensor ", value.shape().ToString());
  TORCH_CHECK(type != runtime::ElementType::kPred, op, ": bool tensors take no scale (got ", scale, ")");
  return Mul(value, ir::Broadcast(IrScalar(at::Scalar(scale), type), value.shape().dims));
}

// The collective `checked` describes (a node built for every replica of every process,
// which checked the arguments and gives the result's shape), computed across processes
// from the values of every replica: this process's stacked by an in-process all_gather,
// the rest by the cross-process kernel.
Value AcrossProcesses(ir::CrossProcessKind what, const Value& value, const Value& checked, const Span& span) {
  EnsureCrossProcessKernel();
  std::vector<int64_t> dims = value.shape().dims;
  dims.insert(dims.begin(), 1);
  Value stacked = ir::Reshape(value, dims);
  if (span.local > 1) stacked = ir::AllGather(stacked, 0, {}, span.local);
  ir::CrossProcessAttrs attrs{what, span.local, ir::CollectiveAttrs::FromAttrs(checked.node->attrs())};
  return ir::CrossProcess(attrs, stacked, checked.shape());
}

// XLA's CPU all-reduce costs about as much per operand as for a megabyte of data
// (measured over 4 replicas: 100 operands of 10 KB in one all_reduce 7.5-9 ms, one operand
// of 1 MB 0.4-0.7 ms). Tensors below this size are reduced as one concatenated buffer.
constexpr std::size_t kCoalescedBytes = 1 << 20;

// The values (one element type) reduced together: the small ones flattened and
// concatenated into one operand and sliced back out of its result, the others as operands
// of their own; `reduce_operands` reduces the operands.
template <typename ReduceOperands>
std::vector<Value> ReduceCoalesced(const std::vector<Value>& values, ReduceOperands&& reduce_operands) {
  std::vector<std::size_t> small;
  std::vector<Value> operands;
  std::vector<int> operand_of(values.size(), -1);  // -1: in the concatenated buffer
  for (std::size_t i = 0; i < values.size(); ++i) {
    const ir::Shape& shape = values[i].shape();
    if (shape.numel() * runtime::ElementSize(shape.type) < kCoalescedBytes) small.push_back(i);
  }
  if (small.size() < 2) small.clear();
  std::vector<Value> pieces;
  for (std::size_t i : small) pieces.push_back(ir::Reshape(values[i], {values[i].shape().numel()}));
  if (!pieces.empty()) operands.push_back(ir::Concatenate(pieces, 0));
  for (std::size_t i = 0, k = 0; i < values.size(); ++i) {
    if (k < small.size() && small[k] == i) {
      ++k;
      continue;
    }
    operand_of[i] = static_cast<int>(operands.size());
    operands.push_back(values[i]);
  }
  std::vector<Value> reduced = reduce_operands(operands);
  std::vector<Value> out(values.size());
  int64_t offset = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (operand_of[i] >= 0) {
      out[i] = reduced[operand_of[i]];
      continue;
    }
    int64_t n = values[i].shape().numel();
    out[i] = ir::Reshape(ir::Slice(reduced[0], {offset}, {offset + n}, {1}), values[i].shape().dims);
    offset += n;
  }
  return out;
}

// The values (one element type) reduced over their groups of the span's replicas.
std::vector<Value> Reduce(ReduceKind reduce, const std::vector<Value>& values, const ReplicaGroups& groups,
                          const Span& span) {
  std::vector<Value> checked = ir::AllReduce(reduce, values, groups, span.total());
  if (span.total() == 1) return values;  // one replica's reduction is its own value
  runtime::ElementType type = values[0].shape().type;
  bool integral = !runtime::IsFloating(type) && !runtime::IsComplex(type) && type != runtime::ElementType::kPred;
  bool bitwise = reduce == ReduceKind::kAnd || reduce == ReduceKind::kOr;
  if (span.processes > 1 && !(reduce == ReduceKind::kSum && groups.empty())) {
    std::vector<Value> out;
    for (std::size_t i = 0; i < values.size(); ++i)
      out.push_back(AcrossProcesses(ir::CrossProcessKind::kAllReduce, values[i], checked[i], span));
    return out;
  }
  if (bitwise && integral) {
    // XLA's CPU all-reduce has no bitwise and/or of integers ("Unsupported reduction
    // computation"; bool takes them): gather the group's values and reduce them here.
    std::vector<Value> out;
    for (const Value& v : values) {
      std::vector<int64_t> dims = v.shape().dims;
      dims.insert(dims.begin(), 1);
      out.push_back(ir::Reduce(reduce, ir::AllGather(ir::Reshape(v, dims), 0, groups, span.local), {0}));
    }
    return out;
  }
  return ReduceCoalesced(values, [&](const std::vector<Value>& operands) {
    std::vector<Value> reduced =
        span.local > 1 ? ir::AllReduce(reduce, operands, span.processes > 1 ? ReplicaGroups{} : groups, span.local)
                       : operands;
    if (span.processes == 1) return reduced;
    // The sum of every replica: the process's sum, summed over the processes.
    EnsureCrossProcessKernel();
    ir::CrossProcessAttrs attrs{ir::CrossProcessKind::kAllReduceSum, span.local, {}};
    attrs.collective.num_replicas = span.total();
    for (Value& v : reduced) v = ir::CrossProcess(attrs, v, v.shape());
    return reduced;
  });
}

}  // namespace

std::vector<at::Tensor> AllReduce(const std::string& reduce_type, const std::vector<at::Tensor>& inputs, double scale,
                                  const ReplicaGroups& groups) {
  constexpr const char* kOp = "all_reduce";
  XLA_COUNT("all_reduce");
  ReduceKind reduce = ParseReduceType(reduce_type, kOp);
  TORCH_CHECK(!inputs.empty(), kOp, ": no tensors to reduce");
  std::vector<IrInput> in;
  for (const at::Tensor& t : inputs) {
    in.push_back(CollectiveInput(t, kOp));
    TORCH_CHECK(in.back().device == in[0].device, kOp, ": expected every tensor on one device, got xla:", in[0].device,
                " and xla:", in.back().device);
  }
  int device = in[0].device;
  Span span = SpanOf(device);
  // One collective per element type (a reduction's region has one type).
  std::map<runtime::ElementType, std::vector<std::size_t>> by_type;
  for (std::size_t i = 0; i < in.size(); ++i) by_type[in[i].v.shape().type].push_back(i);
  std::vector<at::Tensor> out(inputs.size());
  FromIrErrors([&] {
    for (const auto& [type, indices] : by_type) {
      std::vector<Value> values;
      for (std::size_t i : indices) values.push_back(in[i].v);
      std::vector<Value> reduced = Reduce(reduce, values, groups, span);
      for (std::size_t k = 0; k < indices.size(); ++k)
        out[indices[k]] = AtenFromIr(Scaled(reduced[k], scale, kOp), device);
    }
    return 0;
  });
  return out;
}

at::Tensor AllGather(const at::Tensor& input, int64_t dim, const ReplicaGroups& groups) {
  constexpr const char* kOp = "all_gather";
  XLA_COUNT("all_gather");
  IrInput in = CollectiveInput(input, kOp);
  int64_t d = WrapDim(dim, in.v.shape().rank(), kOp);
  Span span = SpanOf(in.device);
  return FromIrErrors([&] {
    Value gathered = ir::AllGather(in.v, d, groups, span.total());
    if (span.processes > 1) gathered = AcrossProcesses(ir::CrossProcessKind::kAllGather, in.v, gathered, span);
    return AtenFromIr(span.total() == 1 ? in.v : gathered, in.device);
  });
}

at::Tensor ReduceScatter(const std::string& reduce_type, const at::Tensor& input, double scale, int64_t scatter_dim,
                         int64_t shard_count, const ReplicaGroups& groups) {
  constexpr const char* kOp = "reduce_scatter";
  XLA_COUNT("reduce_scatter");
  ReduceKind reduce = ParseReduceType(reduce_type, kOp);
  IrInput in = CollectiveInput(input, kOp);
  int64_t d = WrapDim(scatter_dim, in.v.shape().rank(), kOp);
  Span span = SpanOf(in.device);
  return FromIrErrors([&] {
    ir::ReplicaGroups full = ir::NormalizeReplicaGroups(groups, span.total(), kOp);
    TORCH_CHECK(shard_count == static_cast<int64_t>(full[0].size()), kOp, ": shard_count ", shard_count,
                " must equal the number of replicas in a group (", full[0].size(), ")");
    Value scattered = ir::ReduceScatter(reduce, in.v, d, full, span.total());
    if (span.processes > 1) scattered = AcrossProcesses(ir::CrossProcessKind::kReduceScatter, in.v, scattered, span);
    return AtenFromIr(Scaled(span.total() == 1 ? in.v : scattered, scale, kOp), in.device);
  });
}

at::Tensor AllToAll(const at::Tensor& input, int64_t split_dim, int64_t concat_dim, int64_t split_count,
                    const ReplicaGroups& groups) {
  constexpr const char* kOp = "all_to_all";
  XLA_COUNT("all_to_all");
  IrInput in = CollectiveInput(input, kOp);
  int64_t rank = in.v.shape().rank();
  int64_t split = WrapDim(split_dim, rank, kOp), concat = WrapDim(concat_dim, rank, kOp);
  Span span = SpanOf(in.device);
  return FromIrErrors([&] {
    Value exchanged = ir::AllToAll(in.v, split, concat, split_count, groups, span.total());
    if (span.processes > 1) exchanged = AcrossProcesses(ir::CrossProcessKind::kAllToAll, in.v, exchanged, span);
    return AtenFromIr(span.total() == 1 ? in.v : exchanged, in.device);
  });
}

at::Tensor CollectivePermute(const at::Tensor& input, const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  constexpr const char* kOp = "collective_permute";
  XLA_COUNT("collective_permute");
  IrInput in = CollectiveInput(input, kOp);
  Span span = SpanOf(in.device);
  return FromIrErrors([&] {
    Value permuted = ir::CollectivePermute(in.v, pairs, span.total());
    // Nothing to send, or one replica that can only send to itself: no exchange at all.
    if (pairs.empty() || span.total() == 1) return AtenFromIr(pairs.empty() ? ScalarLike(0, in.v) : in.v, in.device);
    if (span.processes > 1) permuted = AcrossProcesses(ir::CrossProcessKind::kCollectivePermute, in.v, permuted, span);
    return AtenFromIr(permuted, in.device);
  });
}

void BeginReplication(const std::vector<int>& ordinals) {
  try {
    exec::BeginReplication(ordinals);
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, e.what());
  }
}

double ReplicaTimeoutSeconds() {
  try {
    return exec::ReplicaTimeout().count() / 1000.0;
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, e.what());
  }
}

void EndReplication(const std::string& why) { exec::EndReplication(why); }

void LeaveReplication(int replica, const std::string& why) {
  if (std::shared_ptr<exec::Replication> replication = exec::ActiveReplication())
    replication->rendezvous().Leave(replica, why);
}

void AbortReplication(const std::string& why) {
  if (std::shared_ptr<exec::Replication> replication = exec::ActiveReplication()) replication->rendezvous().Abort(why);
}

std::vector<int> ReplicationDevices() {
  std::shared_ptr<exec::Replication> replication = exec::ActiveReplication();
  return replication ? replication->devices() : std::vector<int>{};
}

}  // namespace torch_xla
