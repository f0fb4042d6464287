// Every op without a lowering still works: the boxed fallback copies the XLA operands
// to the CPU, runs the CPU kernel, copies mutated inputs back into their XLA tensors and
// moves new outputs to the device. Each use bumps the counter "aten::<op>", which tests
// check to prove an op was lowered.
//
// PyTorch ships at::native::cpu_fallback, but it does not write back mutated optional
// tensor arguments (e.g. native_batch_norm's running_mean), so this one is our own.
#include "aten/cpu_fallback.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "aten/api.h"
#include "aten/bridge.h"
#include "exec/graph_debug.h"
#include "ir/debug_location.h"
#include "runtime/metrics.h"

namespace torch_xla {
namespace {

metrics::Counter* FallbackCounter(const c10::OperatorName& name) {
  static std::mutex mu;
  static std::unordered_map<std::string, metrics::Counter*> counters;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = counters[name.name];  // "aten::nonzero" (overload names are not part of the counter)
  if (!slot) slot = metrics::GetCounter(name.name);
  return slot;
}

// With PT_XLA_DEBUG_LEVEL >= 1: how often each op ran on the CPU fallback, by the user's
// line that called it.
struct FallbackCallerCounts {
  std::mutex mu;
  std::map<std::pair<std::string, std::string>, int64_t> counts;
};

FallbackCallerCounts& CallerCounts() {
  static FallbackCallerCounts* counts = new FallbackCallerCounts;
  return *counts;
}

void RecordCaller(const c10::OperatorName& name) {
  std::string caller = ir::CurrentCaller();
  FallbackCallerCounts& c = CallerCounts();
  std::lock_guard<std::mutex> lock(c.mu);
  ++c.counts[{name.name, caller}];
}

at::Tensor ToCpu(const at::Tensor& t) { return IsXlaTensor(t) ? t.cpu() : t; }

// Ops whose CPU kernels update arguments that their schema does not mark as written
// (native_batch_norm's running_mean and running_var), by argument position.
const std::vector<std::size_t>* UnmarkedWrites(const c10::OperatorName& name) {
  static const std::unordered_map<std::string, std::vector<std::size_t>> table = {
      {"aten::native_batch_norm", {3, 4}},
  };
  auto it = table.find(name.name);
  return it == table.end() ? nullptr : &it->second;
}

bool IsWritten(const c10::FunctionSchema& schema, const c10::OperatorName& name, std::size_t i) {
  const c10::Argument& arg = schema.arguments()[i];
  if (arg.alias_info() != nullptr && arg.alias_info()->isWrite()) return true;
  const std::vector<std::size_t>* unmarked = UnmarkedWrites(name);
  return unmarked && std::find(unmarked->begin(), unmarked->end(), i) != unmarked->end();
}

}  // namespace

void XlaCpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  FallbackCounter(op.operator_name())->Add();
  if (exec::DebugLevel() >= 1) RecordCaller(op.operator_name());
  const c10::FunctionSchema& schema = op.schema();
  const std::size_t num_args = schema.arguments().size();
  const std::size_t args_begin = stack->size() - num_args;
  auto arg = [&](std::size_t i) -> c10::IValue& { return (*stack)[args_begin + i]; };

  // Originals of the XLA tensors, by argument position, and the device results go to.
  std::vector<c10::IValue> originals(stack->begin() + args_begin, stack->end());
  std::optional<c10::Device> device;
  for (std::size_t i = 0; i < num_args; ++i) {
    c10::IValue& v = arg(i);
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (IsXlaTensor(t)) {
        if (!device) device = t.device();
        v = c10::IValue(ToCpu(t));
      }
    } else if (v.isTensorList()) {
      std::vector<at::Tensor> list = v.toTensorVector();
      for (at::Tensor& t : list) {
        if (IsXlaTensor(t) && !device) device = t.device();
        t = ToCpu(t);
      }
      v = c10::IValue(c10::List<at::Tensor>(list));
    } else if (v.isOptionalTensorList()) {
      c10::List<std::optional<at::Tensor>> list = v.toOptionalTensorList();
      c10::List<std::optional<at::Tensor>> cpu_list;
      for (std::optional<at::Tensor> t : list) {
        if (t && t->defined() && IsXlaTensor(*t) && !device) device = t->device();
        cpu_list.push_back(t && t->defined() ? std::optional<at::Tensor>(ToCpu(*t)) : t);
      }
      v = c10::IValue(cpu_list);
    } else if (v.isDevice() && v.toDevice().type() == c10::DeviceType::XLA) {
      if (!device) device = v.toDevice();
      v = c10::IValue(c10::Device(c10::kCPU));
    }
  }
  // Keep the CPU inputs: a mutated argument's new value is read from them.
  std::vector<c10::IValue> cpu_args(stack->begin() + args_begin, stack->end());

  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);

  for (std::size_t i = 0; i < num_args; ++i) {
    if (!IsWritten(schema, op.operator_name(), i)) continue;
    const c10::IValue& orig = originals[i];
    if (orig.isTensor() && IsXlaTensor(orig.toTensor())) {
      at::_copy_from_and_resize(cpu_args[i].toTensor(), orig.toTensor());
    } else if (orig.isTensorList()) {
      std::vector<at::Tensor> xs = orig.toTensorVector(), cs = cpu_args[i].toTensorVector();
      for (std::size_t k = 0; k < xs.size(); ++k)
        if (IsXlaTensor(xs[k])) at::_copy_from_and_resize(cs[k], xs[k]);
    }
  }

  // Outputs: a returned alias of a mutated input is that input; anything else moves
  // to the device of the XLA inputs.
  const std::size_t num_returns = schema.returns().size();
  const std::size_t returns_begin = stack->size() - num_returns;
  for (std::size_t r = 0; r < num_returns; ++r) {
    const c10::Argument& ret = schema.returns()[r];
    if (ret.alias_info() != nullptr && ret.alias_info()->isWrite()) {
      for (std::size_t i = 0; i < num_args; ++i) {
        const c10::AliasInfo* in = schema.arguments()[i].alias_info();
        if (in && in->beforeSets() == ret.alias_info()->beforeSets()) {
          (*stack)[returns_begin + r] = originals[i];
          break;
        }
      }
      continue;
    }
    if (!device) continue;
    c10::IValue& v = (*stack)[returns_begin + r];
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (t.defined() && t.device().is_cpu()) v = c10::IValue(t.to(*device));
    } else if (v.isTensorList()) {
      std::vector<at::Tensor> list = v.toTensorVector();
      for (at::Tensor& t : list)
        if (t.defined() && t.device().is_cpu()) t = t.to(*device);
      v = c10::IValue(c10::List<at::Tensor>(list));
    }
  }
}

TORCH_LIBRARY_IMPL(_, XLA, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&XlaCpuFallback>()); }

std::vector<FallbackCaller> FallbackCallers() {
  FallbackCallerCounts& c = CallerCounts();
  std::lock_guard<std::mutex> lock(c.mu);
  std::vector<FallbackCaller> out;
  for (const auto& [key, count] : c.counts) out.push_back(FallbackCaller{key.first, key.second, count});
  return out;
}

}  // namespace torch_xla
