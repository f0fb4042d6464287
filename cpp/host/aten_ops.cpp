// PyTorch's own CPU kernels inside the compiled graph on the CPU device, as a host
// kernel (host/host_kernel.h), the way convolutions run (host/convolution.h): linear
// algebra (LAPACK; StableHLO has no factorizations), and kernels of CPU libraries that
// XLA's code does not match (flash attention, oneDNN's LSTM layers, large matrix
// products: host/attention.cpp, host/lstm.cpp, host/matmul.cpp). The graph around the
// call stays compiled and fused, nothing syncs and no aten:: fallback runs.
//
// One boxed kernel serves every op in kHostAtenOps and kHostOwnOps. At trace time it
// finds the outputs' shapes with the op's meta kernel, records the op, the number of
// parts its batch splits into (host/aten_parts.h; 1 for most ops) and its non-tensor
// arguments as the custom call's config, and the tensor arguments as operands. At run
// time the host kernel decodes the config, wraps the operand buffers as CPU tensors,
// calls the op through the dispatcher once per part and copies each output into its
// result buffer.
//
// On other devices (no host kernels there) the op goes to the CPU fallback instead.
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

#include "aten/bridge.h"
#include "aten/cpu_fallback.h"
#include "host/aten_ops.h"
#include "host/aten_parts.h"
#include "host/provided_cpu_memory.h"
#include "host/single_thread_scope.h"
#include "ir/builder.h"
#include "host/kernel_targets.h"
#include "runtime/bounded_map.h"
#include "host/host_kernel.h"
#include "runtime/metrics.h"

namespace torch_xla {
namespace {

// The ops served this way, "name" or "name.overload" as in native_functions.yaml. Each
// has a meta kernel or an entry in MetaWithoutKernel (its outputs' shapes follow from
// its inputs' shapes). Not linalg_lstsq: the size of its residuals depends on the ranks
// of the matrices.
constexpr const char* kHostAtenOps[] = {
    "cholesky",
    "cholesky_inverse",
    "_cholesky_solve_helper",
    "geqrf",
    "ormqr",
    "linalg_householder_product",
    "linalg_cholesky_ex",
    "linalg_inv_ex",
    "_linalg_solve_ex",
    "linalg_solve_triangular",
    "triangular_solve",
    "linalg_lu",
    "linalg_lu_factor_ex",
    "linalg_lu_solve",
    "lu_unpack",
    "_linalg_det",
    "_linalg_slogdet",
    "linalg_ldl_factor_ex",
    "linalg_ldl_solve",
    "linalg_qr",
    "_linalg_svd",
    "_linalg_eigh",
    "linalg_eig",
    "linalg_matrix_exp",
    "linalg_pinv.atol_rtol_tensor",
    // Attention by PyTorch's CPU flash-attention kernels (host/attention.cpp).
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    // LSTM layers by PyTorch's CPU (oneDNN) kernels (host/lstm.cpp).
    "mkldnn_rnn_layer",
    "mkldnn_rnn_layer_backward",
};

// Ops of this library's own namespace served the same way (defined in host/matmul.cpp).
constexpr const char* kHostOwnOps[] = {
    "weight_gradient",
};

// The config's first value: a stable identity of the op (a cached executable from
// another process must find the same op), FNV-1a of its name.
int64_t OpId(const c10::OperatorName& name) {
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

// Appends the encoding of `v`; false for a kind of argument this kernel does not carry
// (the op then goes to the CPU fallback).
bool Encode(const c10::IValue& v, std::vector<int64_t>& config) {
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
      t->emplace(OpId(op.operator_name()), op);
    };
    for (const char* full : kHostAtenOps) add("aten", full);
    for (const char* full : kHostOwnOps) add("torch_xla_host", full);
    return t;
  }();
  auto it = table->find(id);
  if (it == table->end()) throw std::invalid_argument("host ATen call: unknown op id " + std::to_string(id));
  return it->second;
}

at::Tensor Wrap(const host::HostBuffer& b) {
  return at::from_blob(b.data, b.dims, at::TensorOptions().dtype(DeviceScalarTypeOf(b.type)).device(at::kCPU));
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

void RunHostAten(const host::HostKernelCall& call) {
  if (call.config.size() < 2) throw std::invalid_argument("host ATen call: truncated config");
  const c10::OperatorHandle& op = OperatorOf(call.config[0]);
  const int64_t parts = call.config[1];
  std::vector<at::Tensor> operands, results;
  for (const host::HostBuffer& b : call.operands) operands.push_back(Wrap(b));
  for (const host::HostBuffer& b : call.results) results.push_back(Wrap(b));
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

metrics::Counter* OpCounter(const c10::OperatorName& name) {
  static std::mutex mu;
  static std::unordered_map<std::string, metrics::Counter*> counters;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = counters[name.name];
  if (!slot) slot = metrics::GetCounter("xla::" + name.name.substr(name.name.find("::") + 2));
  return slot;
}

at::Tensor MetaLike(const at::Tensor& t) {
  return at::empty_strided(t.sizes(), t.strides(), at::TensorOptions().dtype(t.scalar_type()).device(at::kMeta));
}

// Output shapes of a meta computation: each output's sizes and type.
using MetaShapes = std::vector<std::pair<std::vector<int64_t>, at::ScalarType>>;

// A key for the outputs' shapes of a call with these meta arguments: each tensor's sizes,
// strides and type, each other argument's value (numbers and lists of them written
// directly; an output stream per argument cost more than the lookup). Empty where an
// argument is of another kind (it would need c10::str, which may not tell values apart).
std::string MetaArgumentsKey(int64_t op_id, const torch::jit::Stack& meta_args) {
  std::string key;
  auto add = [&key](int64_t x) {
    key += std::to_string(x);
    key += ',';
  };
  add(op_id);
  for (const c10::IValue& v : meta_args) {
    if (v.isTensor() && !v.toTensor().defined()) {
      key += 'u';
    } else if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      for (int64_t d : t.sizes()) add(d);
      key += '/';
      for (int64_t d : t.strides()) add(d);
      add(static_cast<int64_t>(t.scalar_type()));
    } else if (v.isNone()) {
      key += 'n';
    } else if (v.isInt()) {
      add(v.toInt());
    } else if (v.isBool()) {
      add(v.toBool());
    } else if (v.isDouble()) {
      key += 'd';
      add(std::bit_cast<int64_t>(v.toDouble()));
    } else if (v.isIntList()) {
      key += '[';
      for (int64_t x : v.toIntVector()) add(x);
    } else {
      return {};
    }
    key += ';';
  }
  return key;
}

// Meta tensors of `shapes`.
torch::jit::Stack MetaTensorsOf(const MetaShapes& shapes) {
  torch::jit::Stack results;
  for (const auto& [sizes, type] : shapes)
    results.emplace_back(at::empty(sizes, at::TensorOptions().dtype(type).device(at::kMeta)));
  return results;
}

// mkldnn_rnn_layer's outputs for meta arguments. Its meta kernel reports an empty
// workspace, whose real size oneDNN decides: the CPU kernel runs on zeros of the
// arguments' shapes (once per shapes: RunMeta keeps its outputs' shapes).
torch::jit::Stack RnnLayerShapes(const torch::jit::Stack& meta_args) {
  static const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::mkldnn_rnn_layer", "");
  torch::jit::Stack cpu_args;
  for (const c10::IValue& v : meta_args) {
    if (v.isTensor()) {
      cpu_args.emplace_back(at::zeros(v.toTensor().sizes(), v.toTensor().options().device(at::kCPU)));
    } else {
      cpu_args.push_back(v);
    }
  }
  c10::InferenceMode inference;
  at::AutoGradMode grad_mode(true);  // as RunHostAten runs it
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &cpu_args);
  MetaShapes shapes;
  for (const c10::IValue& r : cpu_args) shapes.emplace_back(r.toTensor().sizes().vec(), r.toTensor().scalar_type());
  return MetaTensorsOf(shapes);
}

// The outputs (meta tensors) of the ops of kHostAtenOps that PyTorch gives no meta
// kernel (or a wrong one), from their meta arguments; false for any other op.
bool MetaWithoutKernel(const c10::OperatorName& name, torch::jit::Stack& stack) {
  auto meta = [](std::vector<int64_t> sizes, at::ScalarType type) {
    return at::empty(sizes, at::TensorOptions().dtype(type).device(at::kMeta));
  };
  if (name.name == "aten::geqrf") {
    // (a [..., m, n]) -> (the factored a, tau [..., min(m, n)])
    const at::Tensor a = stack[0].toTensor();
    TORCH_CHECK(a.dim() >= 2, "geqrf: input must have at least 2 dimensions, got ", a.dim());
    std::vector<int64_t> tau(a.sizes().begin(), a.sizes().end() - 2);
    tau.push_back(std::min(a.size(-2), a.size(-1)));
    stack = {meta(a.sizes().vec(), a.scalar_type()), meta(tau, a.scalar_type())};
    return true;
  }
  if (name.name == "aten::mkldnn_rnn_layer") {
    stack = RnnLayerShapes(stack);
    return true;
  }
  if (name.name == "aten::linalg_pinv" && name.overload_name == "atol_rtol_tensor") {
    // (a [..., m, n], ...) -> [..., n, m]
    const at::Tensor a = stack[0].toTensor();
    TORCH_CHECK(a.dim() >= 2, "linalg.pinv: input must have at least 2 dimensions, got ", a.dim());
    std::vector<int64_t> sizes(a.sizes().begin(), a.sizes().end() - 2);
    sizes.insert(sizes.end(), {a.size(-1), a.size(-2)});
    stack = {meta(sizes, a.scalar_type())};
    return true;
  }
  return false;
}

// Runs the op's meta computation on `stack` (its meta arguments), leaving its outputs.
// Outputs are kept by the arguments' key: a step traces the same calls again, and some
// meta computations are slow (mkldnn_rnn_layer's runs the CPU kernel; PyTorch's meta
// kernel of mkldnn_rnn_layer_backward is a Python one, 28 us a call, six calls an LSTM
// step). A call whose arguments failed the kernel's checks is not kept, so the same
// arguments fail again with the kernel's message. Counter HostAtenMetaShapesReused.
void RunMeta(const c10::OperatorHandle& op, torch::jit::Stack& stack) {
  static runtime::BoundedMap<std::string, MetaShapes> kept;
  const std::string key = MetaArgumentsKey(OpId(op.operator_name()), stack);
  if (!key.empty()) {
    if (std::optional<MetaShapes> shapes = kept.Find(key)) {
      static metrics::Counter* reused = metrics::GetCounter("HostAtenMetaShapesReused");
      reused->Add();
      stack = MetaTensorsOf(*shapes);
      return;
    }
  }
  if (!MetaWithoutKernel(op.operator_name(), stack)) op.callBoxed(stack);
  if (key.empty()) return;
  MetaShapes shapes;
  for (const c10::IValue& r : stack) {
    // Outputs that are not all tensors (the caller falls back to the CPU) are not kept.
    if (!r.isTensor() || !r.toTensor().defined()) return;
    shapes.emplace_back(r.toTensor().sizes().vec(), r.toTensor().scalar_type());
  }
  kept.Keep(key, std::move(shapes));
}

// The meta arguments of one part of `length` samples.
torch::jit::Stack PartMetaArgs(const std::vector<c10::IValue>& meta_args, const BatchParts& rules, int64_t length,
                               int64_t parts) {
  torch::jit::Stack stack;
  for (std::size_t i = 0; i < meta_args.size(); ++i) {
    const c10::IValue& v = meta_args[i];
    if (!v.isTensor() || !v.toTensor().defined() || rules.args[i].kind == PartKind::kWhole) {
      stack.push_back(v);
    } else if (rules.args[i].kind == PartKind::kSplit) {
      // A new contiguous meta tensor, as the part's kernel gets its slice: `contiguous()`
      // on a meta slice clones it through a meta kernel PyTorch registers from Python
      // (0.18 ms of an LSTM step's tracing).
      const at::Tensor& t = v.toTensor();
      std::vector<int64_t> sizes = t.sizes().vec();
      sizes[rules.args[i].dim] = length;
      stack.emplace_back(at::empty(sizes, t.options()));
    } else {
      stack.emplace_back(v.toTensor().narrow(0, 0, v.toTensor().numel() / parts));
    }
  }
  return stack;
}

void HostAtenKernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const std::size_t num_args = schema.arguments().size();
  const std::size_t args_begin = stack->size() - num_args;
  // Tensor arguments must be XLA tensors of one device, the rest encodable.
  std::vector<int64_t> config{OpId(op.operator_name()), /*parts, set below*/ 1};
  std::vector<ir::Value> operands;
  torch::jit::Stack meta_stack;
  std::optional<int> device;
  bool hostable = HostAtenAvailable();
  for (std::size_t i = 0; hostable && i < num_args; ++i) {
    const c10::IValue& v = (*stack)[args_begin + i];
    if (v.isTensor() && v.toTensor().defined()) {
      const at::Tensor& t = v.toTensor();
      // (Under a precision mode a tensor's device type can differ from its dtype.)
      if (!IsXlaTensor(t) || DeviceScalarTypeOf(ElementTypeOf(t.scalar_type())) != t.scalar_type()) {
        hostable = false;
        break;
      }
      XlaTensorPtr x = GetXlaTensor(t, op.operator_name().name.c_str());
      if (device && *device != x->device()) hostable = false;
      device = x->device();
      operands.push_back(x->GetIrValue());
      meta_stack.emplace_back(MetaLike(t));
    } else {
      meta_stack.push_back(v);
    }
    hostable = hostable && Encode(v, config);
  }
  if (!hostable || !device) {
    XlaCpuFallback(op, stack);
    return;
  }
  const std::vector<c10::IValue> meta_args(meta_stack.begin(), meta_stack.end());
  // The outputs' shapes, from the meta kernel (which also checks the arguments as the
  // CPU kernel would, with the same messages).
  RunMeta(op, meta_stack);
  std::vector<ir::Shape> results;
  for (const c10::IValue& r : meta_stack) {
    if (!r.isTensor() || !r.toTensor().defined()) {
      XlaCpuFallback(op, stack);
      return;
    }
    const at::Tensor& t = r.toTensor();
    results.emplace_back(ElementTypeOf(t.scalar_type()), t.sizes().vec());
  }
  // Ops that split by batch run in one part per compute thread (PyTorch's intra-op
  // thread count, which matches XLA's pool unless the user changed it); the count is
  // fixed here, since pieces of a workspace are laid out by it.
  if (std::optional<BatchParts> rules = BatchPartsOf(op.operator_name(), meta_args)) {
    const int64_t parts = std::min<int64_t>(rules->batch, at::get_num_threads());
    if (parts > 1) {
      config[1] = parts;
      for (std::size_t i = 0; i < results.size(); ++i) {
        if (rules->results[i].kind != PartKind::kPieces) continue;
        int64_t piece = 0;
        for (int64_t length : {rules->batch / parts, (rules->batch + parts - 1) / parts}) {
          torch::jit::Stack part_stack = PartMetaArgs(meta_args, *rules, length, parts);
          RunMeta(op, part_stack);
          piece = std::max<int64_t>(piece, part_stack.at(i).toTensor().numel());
        }
        results[i] = ir::Shape(results[i].type, {parts * piece});
      }
    }
  }
  std::vector<ir::Value> outputs = ir::HostAtenCall(std::move(operands), std::move(results), std::move(config));
  torch::jit::drop(*stack, num_args);
  for (const ir::Value& out : outputs) stack->emplace_back(AtenFromIr(out, *device));
  OpCounter(op.operator_name())->Add();
}

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  for (const char* name : kHostAtenOps) m.impl(name, torch::CppFunction::makeFromBoxedFunction<&HostAtenKernel>());
}
TORCH_LIBRARY_IMPL(torch_xla_host, XLA, m) {
  for (const char* name : kHostOwnOps) m.impl(name, torch::CppFunction::makeFromBoxedFunction<&HostAtenKernel>());
}

}  // namespace

// The CPU device of a plugin that takes host kernels (the kernel is registered on the
// first yes).
bool HostAtenAvailable() {
  static const bool available =
      SingleThreadedAtenScope::Available() &&
      host::RegisterCpuHostKernel(host::kHostAtenTarget, host::HostKernelHandler<RunHostAten>) &&
      (ProvidedCpuMemory::Install(), true);  // only where host calls run
  return available;
}

}  // namespace torch_xla
