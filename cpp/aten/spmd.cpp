// SPMD for tensors: the mode, a tensor's layout over the devices (mark_sharding), and
// its shards on the host. The runtime keeps sharded data (runtime/sharding.h) and the
// executor compiles every graph of the mode as one program for all devices
// (exec/graph_executor.cpp); this is where a tensor meets them.
#include <ATen/ATen.h>

#include "aten/api.h"
#include "aten/bridge.h"
#include "exec/graph_executor.h"
#include "exec/replication.h"
#include "ir/builder_sharding.h"

namespace torch_xla {
namespace {

constexpr const char* kMarkSharding = "mark_sharding";

runtime::Sharding ParseFor(const XlaTensorPtr& x, const at::Tensor& tensor, const std::string& text,
                           const char* op) {
  runtime::Sharding sharding;
  try {
    sharding = runtime::Sharding::Parse(text);
    sharding.Check(x->shape().dims.size(), runtime::Client::Get().device_count(),
                   std::string(op) + " of a tensor " + DescribeTensor(tensor));
  } catch (const runtime::RuntimeError& e) {
    TORCH_CHECK_VALUE(false, op, ": ", e.what());
  }
  TORCH_CHECK_NOT_IMPLEMENTED(sharding.kind() != runtime::Sharding::Kind::kManual, op,
                              ": manual sharding ({manual}) is not supported");
  return sharding;
}

XlaTensorPtr SpmdTensor(const at::Tensor& tensor, const char* op) {
  TORCH_CHECK(runtime::spmd::Enabled(), op,
              ": SPMD mode is off; call torch_xla.runtime.use_spmd() before sharding tensors");
  TORCH_CHECK_VALUE(IsXlaTensor(tensor), op, ": expected a tensor on the XLA device, got a ", tensor.device(),
                    " tensor ", DescribeTensor(tensor));
  return GetXlaTensor(tensor, op);
}

// The tensor's data laid out by `sharding`, through the host when it is laid out otherwise.
void Reshard(const XlaTensorPtr& x, const runtime::Sharding& sharding) {
  runtime::BufferPtr buffer = x->buffer();
  if (buffer->is_sharded() && buffer->sharding() == sharding) return;
  runtime::Client& client = runtime::Client::Get();
  std::string bytes(buffer->byte_size(), '\0');
  if (!bytes.empty()) client.TransferFromDevice(*buffer, bytes.data(), bytes.size());
  x->SetBuffer(client.TransferShardedToDevice(bytes.data(), buffer->type(), buffer->dims(), sharding));
}

// The extent of device `device`'s shard inside the value (its padding cut off).
std::vector<std::pair<int64_t, int64_t>> ShardExtent(const runtime::Sharding& sharding, int device,
                                                     const std::vector<int64_t>& dims) {
  std::vector<int64_t> offsets = sharding.ShardOffsets(device, dims);
  std::vector<int64_t> shard = sharding.ShardDims(dims);
  std::vector<std::pair<int64_t, int64_t>> extent;
  for (std::size_t d = 0; d < dims.size(); ++d)
    extent.emplace_back(offsets[d], std::max<int64_t>(0, std::min(shard[d], dims[d] - offsets[d])));
  return extent;
}

}  // namespace

void UseSpmd() {
  TORCH_CHECK(!exec::ActiveReplication(),
              "use_spmd: xmp.spawn (or DataParallel) is replicating over the devices; SPMD mode runs one "
              "program over all of them and cannot start inside a replication");
  runtime::spmd::Enable();
}

bool IsSpmd() { return runtime::spmd::Enabled(); }

void MarkSharding(const at::Tensor& tensor, const std::string& text) {
  XlaTensorPtr x = SpmdTensor(tensor, kMarkSharding);
  runtime::Sharding sharding = ParseFor(x, tensor, text, kMarkSharding);
  if (x->is_pending()) {
    x->SetIr(ir::ShardingConstraint(x->pending_ir(), sharding));
  } else {
    Reshard(x, sharding);
  }
  x->SetSharding(std::make_shared<const runtime::Sharding>(std::move(sharding)));
}

void ClearSharding(const at::Tensor& tensor) {
  XlaTensorPtr x = SpmdTensor(tensor, "clear_sharding");
  x->SetSharding(nullptr);
  if (!x->is_pending() && x->buffer()->is_sharded()) Reshard(x, runtime::Sharding::Replicated());
}

std::string ShardingSpec(const at::Tensor& tensor) {
  TORCH_CHECK_VALUE(IsXlaTensor(tensor), "_get_xla_sharding_spec: expected a tensor on the XLA device, got a ",
                    tensor.device(), " tensor ", DescribeTensor(tensor));
  std::shared_ptr<const runtime::Sharding> sharding = GetXlaTensor(tensor, "_get_xla_sharding_spec")->sharding();
  return sharding ? sharding->ToString() : std::string();
}

std::vector<std::pair<at::Tensor, int>> LocalShards(const at::Tensor& tensor) {
  XlaTensorPtr x = SpmdTensor(tensor, "local_shards");
  exec::SyncTensors({x});
  runtime::BufferPtr buffer = x->buffer();
  runtime::Client& client = runtime::Client::Get();
  const std::vector<int64_t>& dims = x->shape().dims;
  const at::ScalarType device_dtype = DeviceScalarTypeOf(buffer->type());
  std::vector<std::pair<at::Tensor, int>> out;
  if (!buffer->is_sharded()) {
    // Data made before SPMD was on: one copy, on its device.
    at::Tensor whole = at::empty(dims, at::TensorOptions().dtype(device_dtype));
    if (whole.numel()) client.TransferFromDevice(*buffer, whole.data_ptr(), whole.nbytes());
    out.emplace_back(whole.to(tensor.scalar_type()), buffer->device());
    return out;
  }
  const runtime::Sharding& sharding = buffer->sharding();
  for (std::size_t d = 0; d < buffer->shards().size(); ++d) {
    const runtime::Buffer& shard = *buffer->shards()[d];
    at::Tensor data = at::empty(shard.dims(), at::TensorOptions().dtype(device_dtype));
    if (data.numel()) client.TransferFromDevice(shard, data.data_ptr(), data.nbytes());
    std::vector<std::pair<int64_t, int64_t>> extent = ShardExtent(sharding, static_cast<int>(d), dims);
    for (std::size_t k = 0; k < extent.size(); ++k) data = data.narrow(static_cast<int64_t>(k), 0, extent[k].second);
    out.emplace_back(data.contiguous().to(tensor.scalar_type()), static_cast<int>(d));
  }
  return out;
}

void LoadLocalShards(const at::Tensor& tensor, const std::vector<at::Tensor>& shards, const std::vector<int>& devices) {
  constexpr const char* kOp = "load_local_shards_";
  XlaTensorPtr x = SpmdTensor(tensor, kOp);
  runtime::Client& client = runtime::Client::Get();
  const int n = client.device_count();
  TORCH_CHECK_VALUE(shards.size() == devices.size() && static_cast<int>(shards.size()) == n, kOp, ": expected ", n,
                    " shards, one per device, got ", shards.size(), " shards for ", devices.size(), " devices");
  std::shared_ptr<const runtime::Sharding> layout = x->sharding();
  const runtime::Sharding sharding = layout ? *layout : runtime::Sharding::Replicated();
  const std::vector<int64_t>& dims = x->shape().dims;
  const runtime::ElementType type = x->shape().type;
  const std::vector<int64_t> shard_dims = sharding.ShardDims(dims);
  std::vector<runtime::BufferPtr> buffers(n);
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const int d = devices[i];
    TORCH_CHECK_VALUE(d >= 0 && d < n && !buffers[d], kOp, ": device ", d, " is out of range or given twice");
    std::vector<std::pair<int64_t, int64_t>> extent = ShardExtent(sharding, d, dims);
    std::vector<int64_t> expected;
    for (const auto& e : extent) expected.push_back(e.second);
    TORCH_CHECK_VALUE(shards[i].sizes().vec() == expected, kOp, ": the shard of device ", d, " must have shape ",
                      at::IntArrayRef(expected), ", got ", shards[i].sizes(), " (sharding ", sharding.ToString(),
                      " of a tensor ", DescribeTensor(tensor), ")");
    at::Tensor padded = at::zeros(shard_dims, at::TensorOptions().dtype(DeviceScalarTypeOf(type)));
    at::Tensor region = padded;
    for (std::size_t k = 0; k < expected.size(); ++k) region = region.narrow(static_cast<int64_t>(k), 0, expected[k]);
    region.copy_(shards[i].cpu());
    buffers[d] = client.TransferToDevice(padded.data_ptr(), type, shard_dims, d);
  }
  x->SetBuffer(runtime::Buffer::Sharded(std::move(buffers), sharding, type, dims));
}

}  // namespace torch_xla
