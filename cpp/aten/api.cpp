#include "aten/api.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <sstream>

#include "aten/bridge.h"
#include "aten/eager_mode.h"
#include "distributed/cross_process.h"
#include "exec/graph_executor.h"
#include "ir/builder_control.h"
#include "ops/host_convolution.h"
#include "runtime/metrics.h"
#include "tensor/rng_state.h"

namespace torch_xla {

c10::Device XlaDevice(int ordinal) {
  c10::Device device = XlaDeviceOf(ordinal);
  OrdinalOf(device);  // validates
  return device;
}

int DeviceCount() { return runtime::Client::Get().device_count(); }

std::string DeviceKind() { return runtime::Client::Get().device_kind(); }

int CurrentDevice() { return c10::impl::getDeviceGuardImpl(c10::DeviceType::XLA)->getDevice().index(); }

void SetCurrentDevice(int ordinal) {
  c10::impl::getDeviceGuardImpl(c10::DeviceType::XLA)->setDevice(XlaDevice(ordinal));
}

namespace {

// Once a collective across processes failed, the processes are out of step: a sync
// raises that failure instead of running graphs whose inputs it poisoned.
void CheckProcessesInStep() {
  std::string failure = CrossProcessFailure();
  TORCH_CHECK(failure.empty(), "a collective across processes failed, so the processes are out of step: ", failure);
}

}  // namespace

namespace {

// A step boundary (mark_step, torch_xla.sync()).
void CountStep() {
  static metrics::Counter* steps = metrics::GetCounter("MarkStep");
  steps->Add();
}

}  // namespace

void Sync(bool wait) {
  CheckProcessesInStep();
  CountStep();
  exec::SyncAll(wait);
}

void SyncDevices(const std::vector<int>& ordinals, bool wait) {
  CheckProcessesInStep();
  CountStep();
  std::vector<int> devices;
  for (int ordinal : ordinals) devices.push_back(OrdinalOf(XlaDeviceOf(ordinal)));
  exec::SyncDevices(devices, wait);
}

void SyncTensors(const std::vector<at::Tensor>& tensors, bool wait) {
  CheckProcessesInStep();
  std::vector<XlaTensorPtr> xs;
  for (const at::Tensor& t : tensors) xs.push_back(GetXlaTensor(t, "sync_tensors"));
  exec::SyncTensors(xs);
  if (wait) runtime::Client::Get().WaitAll();
}

void WaitDeviceOps() { runtime::Client::Get().WaitAll(); }

std::string GetStableHlo(const std::vector<at::Tensor>& tensors) {
  std::vector<XlaTensorPtr> xs;
  for (const at::Tensor& t : tensors) xs.push_back(GetXlaTensor(t, "get_stablehlo"));
  return exec::GetStableHlo(xs);
}

std::pair<std::string, std::vector<at::Tensor>> GetGraphProgram(const std::vector<at::Tensor>& tensors) {
  std::vector<XlaTensorPtr> xs;
  for (const at::Tensor& t : tensors) xs.push_back(GetXlaTensor(t, "LoweringContext.build"));
  exec::GraphProgram program = exec::GetGraphProgram(xs);
  std::vector<at::Tensor> parameters;
  for (XlaTensorPtr& p : program.parameters) parameters.push_back(AtenFromXla(std::move(p)));
  return {std::move(program.stablehlo), std::move(parameters)};
}

int64_t ParameterIdOf(const std::vector<at::Tensor>& parameters, const at::Tensor& tensor) {
  constexpr const char* kOp = "LoweringContext.tensor_parameter_id";
  if (!IsXlaTensor(tensor)) return -1;
  XlaTensorPtr x = GetXlaTensor(tensor, kOp);
  // Data, or a pending value that is data itself (a view that folded away).
  const runtime::Buffer* data = x->buffer().get();
  if (x->is_pending()) {
    const ir::Node& node = *x->pending_ir().node;
    data = node.leaf_kind() == ir::LeafKind::kDeviceData ? node.buffer().get() : nullptr;
  }
  if (data == nullptr) return -1;
  for (std::size_t i = 0; i < parameters.size(); ++i)
    if (GetXlaTensor(parameters[i], kOp)->buffer().get() == data) return static_cast<int64_t>(i);
  return -1;
}

uint64_t TensorId(const at::Tensor& tensor) { return GetXlaTensor(tensor, "_xla_get_tensor_id")->id(); }

bool SetBufferDonation(const at::Tensor& tensor, bool donate) {
  runtime::BufferPtr buffer = GetXlaTensor(tensor, "_set_buffer_donation")->buffer();
  if (!buffer) return false;
  buffer->set_donation_requested(donate);
  static metrics::Counter* set = metrics::GetCounter("XlaSetBufferDonation");
  set->Add();
  return true;
}

bool GetBufferDonation(const at::Tensor& tensor) {
  runtime::BufferPtr buffer = GetXlaTensor(tensor, "_get_buffer_donation")->buffer();
  return buffer && buffer->donation_requested();
}

bool IsDonatedPlaceholder(const at::Tensor& tensor) {
  runtime::BufferPtr buffer = GetXlaTensor(tensor, "_is_placecholder")->buffer();
  return buffer && buffer->IsDeleted();
}

namespace {
// A shape as XLA writes it ("c64[4,2]" where our IR says "complex<f32>[4, 2]").
std::string XlaShapeText(const ir::Shape& shape) {
  std::string text = shape.ToString();
  for (auto [ours, xla] : {std::pair<const char*, const char*>{"complex<f32>", "c64"}, {"complex<f64>", "c128"}}) {
    if (text.rfind(ours, 0) == 0) text = xla + text.substr(std::string(ours).size());
  }
  // Nor a space between dimensions: "f32[5,3]".
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  return text;
}
}  // namespace

std::string TensorDebugInfo(const at::Tensor& tensor) {
  if (!tensor.defined() || !tensor.is_xla()) return "Not a XLATensor\n";
  XlaTensorPtr x = GetXlaTensor(tensor, "_get_xla_tensor_debug_info");
  std::ostringstream out;
  out << "XLATensor {\nTensorID: " << x->id() << "\nDevice: xla:" << x->device()
      << "\nXLA Shape: " << XlaShapeText(x->shape()) << "\n";
  if (x->is_pending()) {
    out << "IR: " << exec::GetIrText({x}) << "XLAData: None\n";
  } else {
    runtime::BufferPtr buffer = x->buffer();
    out << "IR: None\nXLAData: {\n  Data Device: " << runtime::Client::Get().device_kind() << ":"
        << buffer->device() << "\n  Data Shape: " << XlaShapeText(x->shape())
        << "\n  Donation Requested: " << (buffer->donation_requested() ? "true" : "false")
        << "\n  Deleted: " << (buffer->IsDeleted() ? "true" : "false") << "\n}\n";
  }
  out << "}\n";
  return out.str();
}

std::string GetIrText(const std::vector<at::Tensor>& tensors) {
  std::vector<XlaTensorPtr> xs;
  for (const at::Tensor& t : tensors) xs.push_back(GetXlaTensor(t, "get_ir_text"));
  return exec::GetIrText(xs);
}

void SetRngState(uint64_t seed, int ordinal) { SetRngSeed(OrdinalOf(XlaDeviceOf(ordinal)), seed); }

uint64_t GetRngState(int ordinal) { return GetRngSeed(OrdinalOf(XlaDeviceOf(ordinal))); }

void OptimizationBarrier(const std::vector<at::Tensor>& tensors) {
  if (tensors.empty()) return;
  std::vector<XlaTensorPtr> xs;
  std::vector<ir::Value> values;
  for (const at::Tensor& t : tensors) {
    xs.push_back(GetXlaTensor(t, "optimization_barrier_"));
    TORCH_CHECK_VALUE(xs.back()->device() == xs[0]->device(), "optimization_barrier_: tensors of xla:",
                      xs[0]->device(), " and xla:", xs.back()->device(), "; a barrier is on one device");
    values.push_back(xs.back()->GetIrValue());
  }
  std::vector<ir::Value> out = ir::OptimizationBarrier(values);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i]->SetIr(out[i]);
  SyncIfEager();
}

DeviceMemory MemoryInfo(int ordinal) {
  runtime::MemoryInfo info = runtime::Client::Get().GetMemoryInfo(OrdinalOf(XlaDeviceOf(ordinal)));
  return {info.bytes_in_use, info.bytes_limit, info.peak_bytes_in_use};
}

void SetHostConvolution(const std::string& mode) { SetHostConvolutionMode(mode); }

std::string HostConvolution() { return HostConvolutionModeName(GetHostConvolutionMode()); }

}  // namespace torch_xla
