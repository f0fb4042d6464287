#include "aten/transfer.h"

#include <ATen/ATen.h>

#include "aten/bridge.h"
#include "exec/graph_executor.h"
#include "runtime/metrics.h"

namespace torch_xla {

at::Tensor ToCpuTensor(const XlaTensorPtr& tensor) {
  exec::SyncTensors({tensor});
  runtime::BufferPtr buffer = tensor->buffer();
  TORCH_CHECK(!buffer->donation_requested() || !buffer->IsDeleted(), "reading a tensor of shape ",
              tensor->shape().ToString(),
              " whose device buffer was donated to a computation (torch_xla._XLAC._set_buffer_donation): "
              "its value is gone");
  const ir::Shape& shape = tensor->shape();
  // The bytes arrive in the device's element type; the caller gets the dtype the tensor
  // reports (they differ only under a precision mode such as XLA_USE_BF16).
  at::ScalarType reported = ScalarTypeOf(shape.type);
  at::Tensor out = at::empty(shape.dims, at::TensorOptions().dtype(DeviceScalarTypeOf(shape.type)));
  if (out.numel() != 0) {
    static metrics::Metric* timer_metric = metrics::GetMetric("TransferFromDeviceTime");
    static metrics::Metric* inbound = metrics::GetMetric("InboundData", metrics::Unit::kBytes);
    inbound->AddSample(static_cast<double>(out.nbytes()));
    metrics::ScopedTimer timer(timer_metric);
    if (buffer->is_sharded() && !buffer->sharding().is_replicated()) {
      // A sharded value brought together to be read (on the host here), torch_xla's count.
      static metrics::Counter* gathered = metrics::GetCounter("ReplicateShardedData");
      gathered->Add(1);
    }
    runtime::Client::Get().TransferFromDevice(*buffer, out.data_ptr(), out.nbytes());
  }
  return out.scalar_type() == reported ? out : out.to(reported);
}

XlaTensorPtr FromCpuTensor(const at::Tensor& cpu, int device) {
  TORCH_CHECK(cpu.device().is_cpu(), "expected a CPU tensor, got ", cpu.device());
  // TensorToData: the whole move of a host tensor, conversions included.
  static metrics::Metric* tensor_to_data = metrics::GetMetric("TensorToData");
  metrics::ScopedTimer whole(tensor_to_data);
  at::Tensor src = cpu.is_conj() ? cpu.resolve_conj() : cpu;
  src = src.is_neg() ? src.resolve_neg() : src;
  // Under a precision mode the device holds another element type than the dtype (float32
  // as bf16 under XLA_USE_BF16): convert on the host, where the bytes are.
  runtime::ElementType device_type = ElementTypeOf(src.scalar_type());
  at::ScalarType device_dtype = DeviceScalarTypeOf(device_type);
  if (src.scalar_type() != device_dtype) src = src.to(device_dtype);
  src = src.contiguous();
  std::vector<int64_t> dims(src.sizes().begin(), src.sizes().end());
  static metrics::Metric* timer_metric = metrics::GetMetric("TransferToDeviceTime");
  static metrics::Metric* outbound = metrics::GetMetric("OutboundData", metrics::Unit::kBytes);
  outbound->AddSample(static_cast<double>(src.nbytes()));
  metrics::ScopedTimer timer(timer_metric);
  // In SPMD mode the device stands for the mesh: every device holds the value until a
  // sharding says otherwise.
  runtime::BufferPtr buffer =
      runtime::spmd::Enabled()
          ? runtime::Client::Get().TransferShardedToDevice(src.data_ptr(), device_type, dims,
                                                           runtime::Sharding::Replicated())
          : runtime::Client::Get().TransferToDevice(src.data_ptr(), device_type, dims, device);
  return XlaTensor::FromBuffer(std::move(buffer));
}

}  // namespace torch_xla
