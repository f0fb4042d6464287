// The XLA kernel of the ops PyTorch's CPU kernels run inside the graph on the CPU device
// (host/aten_ops.h): at trace time it finds the outputs' shapes with the op's meta
// kernel, records the op, the number of parts its batch splits into
// (host/aten_parts.h; 1 for most ops) and its non-tensor arguments as the custom call's
// config, and the tensor arguments as operands. On other devices (no host kernels
// there) the op goes to the CPU fallback instead.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "aten/bridge.h"
#include "aten/cpu_fallback.h"
#include "host/aten_ops.h"
#include "host/aten_parts.h"
#include "ir/builder.h"
#include "runtime/bounded_map.h"
#include "runtime/metrics.h"

namespace torch_xla {
namespace {

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
  const std::string key = MetaArgumentsKey(host::HostAtenOpId(op.operator_name()), stack);
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
  std::vector<int64_t> config{host::HostAtenOpId(op.operator_name()), /*parts, set below*/ 1};
  std::vector<ir::Value> operands;
  torch::jit::Stack meta_stack;
  std::optional<int> device;
  bool hostable = host::HostAtenAvailable();
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
    hostable = hostable && host::EncodeHostAtenArgument(v, config);
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
  for (const char* name : host::kHostAtenOps) m.impl(name, torch::CppFunction::makeFromBoxedFunction<&HostAtenKernel>());
}
TORCH_LIBRARY_IMPL(torch_xla_host, XLA, m) {
  for (const char* name : host::kHostOwnOps) m.impl(name, torch::CppFunction::makeFromBoxedFunction<&HostAtenKernel>());
}

}  // namespace

}  // namespace torch_xla
