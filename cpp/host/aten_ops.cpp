// The run-time side of host ATen calls (host/aten_ops.h).
#include "host/aten_ops.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "host/aten_parts.h"
#include "host/cpu_tensor.h"
#include "host/host_kernel.h"
#include "host/kernel_targets.h"
#include "host/provided_cpu_memory.h"
#include "host/single_thread_scope.h"
#include "runtime/metrics.h"

namespace torch_xla::host {

int64_t HostAtenOpId(const c10::OperatorName& name) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  };
  mix(name.name);
  mix(".");
  mix(name.overload_name);
  return static_cast<int64_t>(h);
}

// How each non-tensor argument is encoded in the config: a tag, then its value.
enum class Tag : int64_t { kNone = 0, kTensor = 1, kInt = 2, kBool = 3, kDouble = 4, kString = 5, kIntList = 6 };

bool EncodeHostAtenArgument(const c10::IValue& v, std::vector<int64_t>& config) {
  if (v.isNone()) {
    config.push_back(static_cast<int64_t>(Tag::kNone));
  } else if (v.isTensor()) {
    config.push_back(static_cast<int64_t>(v.toTensor().defined() ? Tag::kTensor : Tag::kNone));
  } else if (v.isBool()) {
    config.insert(config.end(), {static_cast<int64_t>(Tag::kBool), v.toBool() ? 1 : 0});
  } else if (v.isInt()) {
    config.insert(config.end(), {static_cast<int64_t>(Tag::kInt), v.toInt()});
  } else if (v.isDouble()) {
    config.insert(config.end(), {static_cast<int64_t>(Tag::kDouble), std::bit_cast<int64_t>(v.toDouble())});
  } else if (v.isString()) {
    const std::string& s = v.toStringRef();
    config.insert(config.end(), {static_cast<int64_t>(Tag::kString), static_cast<int64_t>(s.size())});
    for (unsigned char c : s) config.push_back(c);
  } else if (v.isIntList()) {
    std::vector<int64_t> list = v.toIntVector();
    config.insert(config.end(), {static_cast<int64_t>(Tag::kIntList), static_cast<int64_t>(list.size())});
    config.insert(config.end(), list.begin(), list.end());
  } else {
    return false;
  }
  return true;
}

namespace {

// The arguments back from the config (from `pos` on), tensors from `tensors` in order.
std::vector<c10::IValue> Decode(const std::vector<int64_t>& config, std::size_t pos, std::size_t num_args,
                                const std::vector<at::Tensor>& tensors) {
  std::vector<c10::IValue> args;
  std::size_t next_tensor = 0;
  auto take = [&]() {
    if (pos >= config.size()) throw std::invalid_argument("host ATen call: truncated config");
    return config[pos++];
  };
  for (std::size_t i = 0; i < num_args; ++i) {
    switch (static_cast<Tag>(take())) {
      case Tag::kNone: args.emplace_back(); break;
      case Tag::kTensor:
        if (next_tensor >= tensors.size()) throw std::invalid_argument("host ATen call: too few operands");
        args.emplace_back(tensors[next_tensor++]);
        break;
      case Tag::kInt: args.emplace_back(take()); break;
      case Tag::kBool: args.emplace_back(take() != 0); break;
      case Tag::kDouble: args.emplace_back(std::bit_cast<double>(take())); break;
      case Tag::kString: {
        std::string s(static_cast<std::size_t>(take()), '\0');
        for (char& c : s) c = static_cast<char>(take());
        args.emplace_back(std::move(s));
        break;
      }
      case Tag::kIntList: {
        std::vector<int64_t> list(static_cast<std::size_t>(take()));
        for (int64_t& x : list) x = take();
        args.emplace_back(std::move(list));
        break;
      }
      default: throw std::invalid_argument("host ATen call: unknown argument tag");
    }
  }
  return args;
}

// The operator behind an op id (ops of kHostAtenOps and kHostOwnOps only).
const c10::OperatorHandle& OperatorOf(int64_t id) {
  static const auto* table = [] {
    auto* t = new std::unordered_map<int64_t, c10::OperatorHandle>;
    auto add = [&](const std::string& ns, const char* full) {
      std::string s(full);
      std::size_t dot = s.find('.');
      std::string name = ns + "::" + s.substr(0, dot), overload = dot == std::string::npos ? "" : s.substr(dot + 1);
      c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), overload.c_str());
      t->emplace(HostAtenOpId(op.operator_name()), op);
    };
    for (const char* full : kHostAtenOps) add("aten", full);
    for (const char* full : kHostOwnOps) add("torch_xla_host", full);
    return t;
  }();
  auto it = table->find(id);
  if (it == table->end()) throw std::invalid_argument("host ATen call: unknown op id " + std::to_string(id));
  return it->second;
}

// The host kernel: config = [op id, encoded arguments...].
// Runs one part of a call split by batch (host/aten_parts.h): slices the arguments,
// calls the op and writes the part's slices of the results (kSum results go to `sums`).
void RunPart(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args, const BatchParts& rules,
             int64_t part, int64_t parts, const std::vector<at::Tensor>& results, std::vector<at::Tensor>& sums) {
  const int64_t begin = rules.batch * part / parts, length = rules.batch * (part + 1) / parts - begin;
  // A view of this part's slice (results are written through it).
  auto slice = [&](const at::Tensor& t, const PartRule& rule) {
    if (rule.kind == PartKind::kSplit) return t.narrow(rule.dim, begin, length);
    if (rule.kind == PartKind::kPieces) return t.narrow(0, t.numel() / parts * part, t.numel() / parts);
    return t;
  };
  torch::jit::Stack stack;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const c10::IValue& v = args[i];
    // Kernels get their slices contiguous, as PyTorch's callers hand them over.
    stack.push_back(v.isTensor() && v.toTensor().defined() ? c10::IValue(slice(v.toTensor(), rules.args[i]).contiguous())
                                                           : v);
  }
  // The kernel may allocate an opaque result (a workspace) right in its piece of the
  // result buffer (provided_cpu_memory.h); whole 64-byte aligned pieces only, the
  // alignment PyTorch's CPU allocator gives.
  std::vector<ProvidedBlock> pieces;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (rules.results[i].kind != PartKind::kPieces) continue;
    at::Tensor piece = slice(results[i], rules.results[i]);
    if (reinterpret_cast<uintptr_t>(piece.data_ptr()) % 64 == 0) pieces.push_back({piece.data_ptr(), piece.nbytes()});
  }
  {
    ProvidedCpuMemory provided(pieces);
    op.callBoxed(stack);
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    const at::Tensor& r = stack[i].toTensor();
    const PartRule& rule = rules.results[i];
    if (rule.kind == PartKind::kSum) {
      sums[part * results.size() + i] = r;
      continue;
    }
    at::Tensor out = slice(results[i], rule);
    if (rule.kind == PartKind::kPieces) {
      if (r.data_ptr() == out.data_ptr() && r.nbytes() == out.nbytes()) {
        static metrics::Counter* in_place = metrics::GetCounter("HostAtenPieceInPlace");
        in_place->Add();
        continue;  // computed in place
      }
      if (r.numel() > out.numel())
        throw std::runtime_error(op.operator_name().name + ": part " + std::to_string(part) + "'s output " +
                                 std::to_string(i) + " has " + std::to_string(r.numel()) +
                                 " elements, more than its piece of " + std::to_string(out.numel()));
      out.narrow(0, 0, r.numel()).copy_(r.reshape(-1));
      continue;
    }
    if (r.sizes() != out.sizes())
      throw std::runtime_error(op.operator_name().name + ": part " + std::to_string(part) + "'s output " +
                               std::to_string(i) + " has size " + c10::str(r.sizes()) + ", expected " +
                               c10::str(out.sizes()));
    if (out.numel() > 0) out.copy_(r);
  }
}

void RunHostAten(const HostKernelCall& call) {
  if (call.config.size() < 2) throw std::invalid_argument("host ATen call: truncated config");
  const c10::OperatorHandle& op = OperatorOf(call.config[0]);
  const int64_t parts = call.config[1];
  std::vector<at::Tensor> operands, results;
  for (const HostBuffer& b : call.operands) operands.push_back(CpuTensorOf(b));
  for (const HostBuffer& b : call.results) results.push_back(CpuTensorOf(b));
  const std::vector<c10::IValue> args = Decode(call.config, 2, op.schema().arguments().size(), operands);
  if (op.schema().returns().size() != results.size())
    throw std::runtime_error(op.operator_name().name + ": " + std::to_string(op.schema().returns().size()) +
                             " outputs for " + std::to_string(results.size()) + " result buffers");
  // One part covering the whole batch when the op does not split.
  std::optional<BatchParts> rules = parts > 1 ? BatchPartsOf(op.operator_name(), args) : std::nullopt;
  const int64_t count = rules ? parts : 1;
  if (!rules) rules = BatchParts{std::vector<PartRule>(args.size()), std::vector<PartRule>(results.size()), 1};
  std::vector<at::Tensor> sums(count * results.size());
  call.parallel.For(count, [&](int64_t part) {
    c10::InferenceMode inference;
    // Grad mode on: some kernels decide by it whether to produce what their backward
    // reads (mkldnn_rnn_layer's workspace), and the traced shapes assumed it.
    at::AutoGradMode grad_mode(true);
    SingleThreadedAtenScope one_thread;
    RunPart(op, args, *rules, part, count, results, sums);
  });
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (rules->results[i].kind != PartKind::kSum) continue;
    std::vector<at::Tensor> partials;
    for (int64_t p = 0; p < count; ++p) partials.push_back(sums[p * results.size() + i]);
    SumParts(call.parallel, partials, results[i]);
  }
}

}  // namespace

bool HostAtenAvailable() {
  static const bool available =
      SingleThreadedAtenScope::Available() &&
      RegisterCpuHostKernel(kHostAtenTarget, HostKernelHandler<RunHostAten>) &&
      (ProvidedCpuMemory::Install(), true);  // only where host calls run
  return available;
}

}  // namespace torch_xla::host
