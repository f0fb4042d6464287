#include "aten/transfer.h"

#include <ATen/ATen.h>

#include "aten/bridge.h"
#include "exec/graph_executor.h"
#include "runtime/metrics.h"

namespace torch_xla {

at::Tensor ToCpuTensor(const XlaTensorPtr& tensor) {
  exec::SyncTensors({tensor});
  runtime::BufferPtr buffer = tensor->buffer();
  const ir::Shape& shape = tensor->shape();
  at::Tensor out = at::empty(shape.dims, at::TensorOptions().dtype(ScalarTypeOf(shape.type)));
  if (out.numel() == 0) return out;
  static metrics::Metric* timer_metric = metrics::GetMetric("TransferFromDeviceTime");
  metrics::ScopedTimer timer(timer_metric);
  runtime::Client::Get().TransferFromDevice(*buffer, out.data_ptr(), out.nbytes());
  return out;
}

XlaTensorPtr FromCpuTensor(const at::Tensor& cpu, int device) {
  TORCH_CHECK(cpu.device().is_cpu(), "expected a CPU tensor, got ", cpu.device());
  at::Tensor src = cpu.is_conj() ? cpu.resolve_conj() : cpu;
  src = src.is_neg() ? src.resolve_neg() : src;
  src = src.contiguous();
  std::vector<int64_t> dims(src.sizes().begin(), src.sizes().end());
  static metrics::Metric* timer_metric = metrics::GetMetric("TransferToDeviceTime");
  metrics::ScopedTimer timer(timer_metric);
  runtime::BufferPtr buffer =
      runtime::Client::Get().TransferToDevice(src.data_ptr(), ElementTypeOf(src.scalar_type()), dims, device);
  return XlaTensor::FromBuffer(std::move(buffer));
}

}  // namespace torch_xla
