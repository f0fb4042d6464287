// SPMD for tensors: the mode, a tensor's layout over the devices (mark_sharding), and
// its shards on the host. The runtime keeps sharded data (runtime/sharding.h) and the
// executor compiles every graph of the mode as one program for all devices
// (exec/graph_executor.cpp); this is where a tensor meets them.
#include <ATen/ATen.h>

#include <atomic>
#include <stdexcept>
#include <unordered_set>

#include "aten/api.h"
#include "aten/bridge.h"
#include "distributed/reduce_type.h"
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

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string out = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + (dims.size() == 1 ? ",)" : ")");
}

bool IsManual(const std::shared_ptr<const runtime::Sharding>& sharding) {
  return sharding && sharding->kind() == runtime::Sharding::Kind::kManual;
}

// Whether the process has made a manual value: until then no graph walk below is needed.
std::atomic<bool> manual_in_use{false};

// Whether `value` is computed from a manual value (an SPMDFullToShardShape, a {manual}
// constraint or manual data, not behind an SPMDShardToFullShape). XLA aborts the process
// on a layout given to such a value, so the kernels refuse it when they can see it.
bool DependsOnManual(const ir::Value& value) {
  if (!manual_in_use.load(std::memory_order_relaxed)) return false;
  std::vector<const ir::Node*> stack = {value.node.get()};
  std::unordered_set<const ir::Node*> seen;
  while (!stack.empty()) {
    const ir::Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->op() == ir::SpmdShardToFullOp()) continue;
    if (n->op() == ir::SpmdFullToShardOp()) return true;
    if (n->op() == ir::ShardingConstraintOp() &&
        runtime::Sharding::Decode(n->attrs().ints).kind() == runtime::Sharding::Kind::kManual)
      return true;
    if (n->leaf_kind() == ir::LeafKind::kDeviceData) {
      const runtime::BufferPtr& b = n->buffer();
      if (b && b->is_sharded() && b->sharding().kind() == runtime::Sharding::Kind::kManual) return true;
      continue;
    }
    for (const ir::Value& v : n->operands()) stack.push_back(v.node.get());
  }
  return false;
}

// Whether the tensor is a manual piece: marked {manual}, or computed from such a value.
bool IsManualPiece(const XlaTensorPtr& x) {
  return IsManual(x->sharding()) || (x->is_pending() && DependsOnManual(x->pending_ir()));
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
  if (sharding.kind() == runtime::Sharding::Kind::kManual) return MarkManualSharding(tensor);
  TORCH_CHECK(!IsManualPiece(x), kMarkSharding,
              ": the tensor ", DescribeTensor(tensor),
              " is manually sharded or computed from a manually sharded value ({manual}: each device's own "
              "piece); turn the pieces back into a global tensor first "
              "(torch_xla.distributed.spmd.disable_manual_sharding)");
  if (x->is_pending()) {
    x->SetIr(ir::ShardingConstraint(x->pending_ir(), sharding));
  } else {
    // Data laid out by one tiling is not silently laid out by another: the user clears
    // the first (as torch_xla asks), or annotates the new layout in the graph.
    std::shared_ptr<const runtime::Sharding> current = x->sharding();
    if (!current || *current != sharding) {
      TORCH_CHECK(!current || current->is_replicated(), kMarkSharding, ": the tensor ", DescribeTensor(tensor),
                  " is already sharded as ", current ? current->ToString() : "", "; clear its sharding first "
                  "(torch_xla.distributed.spmd.clear_sharding) to lay it out as ", sharding.ToString(),
                  ", or annotate the new layout in the graph (annotate_custom_sharding)");
      Reshard(x, sharding);
    }
  }
  x->SetSharding(std::make_shared<const runtime::Sharding>(std::move(sharding)));
}

void AnnotateCustomSharding(const at::Tensor& tensor, const std::string& text) {
  constexpr const char* kOp = "annotate_custom_sharding";
  XlaTensorPtr x = SpmdTensor(tensor, kOp);
  runtime::Sharding sharding = ParseFor(x, tensor, text, kOp);
  TORCH_CHECK(sharding.kind() != runtime::Sharding::Kind::kManual, kOp,
              ": a {manual} layout is set with _mark_manual_sharding");
  TORCH_CHECK(!IsManualPiece(x), kOp,
              ": the tensor ", DescribeTensor(tensor),
              " is manually sharded or computed from a manually sharded value; turn the pieces back into a "
              "global tensor first (torch_xla.distributed.spmd.disable_manual_sharding)");
  // The data keeps its layout; the graph lays the value out anew (its result has this one).
  x->SetIr(ir::ShardingConstraint(x->GetIrValue(), sharding));
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
  XlaTensorPtr x = GetXlaTensor(tensor, "_get_xla_sharding_spec");
  std::shared_ptr<const runtime::Sharding> sharding = x->sharding();
  if (sharding) return sharding->ToString();
  // A pending value whose last op is a sharding constraint has that layout, whichever
  // tensor holds it (autograd hands a constrained gradient on as another tensor).
  if (x->is_pending()) {
    ir::Value value = x->pending_ir();
    if (value.node->op() == ir::ShardingConstraintOp()) return runtime::Sharding::Decode(value.node->attrs().ints).ToString();
  }
  return std::string();
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

void MarkManualSharding(const at::Tensor& tensor) {
  constexpr const char* kOp = "_mark_manual_sharding";
  XlaTensorPtr x = SpmdTensor(tensor, kOp);
  // A manual value exists only between SPMDFullToShardShape and SPMDShardToFullShape in
  // one graph: data has no per-device view XLA could take as an argument.
  TORCH_CHECK(x->is_pending(), kOp, ": the tensor ", DescribeTensor(tensor),
              " holds device data; only a value computed in the pending graph (the result of an op, e.g. of "
              "_spmd_full_to_shard_shape) can be marked manual");
  manual_in_use.store(true, std::memory_order_relaxed);
  auto manual = std::make_shared<const runtime::Sharding>(runtime::Sharding::Parse("{manual}"));
  x->SetIr(ir::ShardingConstraint(x->pending_ir(), *manual));
  x->SetSharding(std::move(manual));
}

at::Tensor SpmdFullToShardShape(const at::Tensor& tensor) {
  constexpr const char* kOp = "_spmd_full_to_shard_shape";
  XlaTensorPtr x = SpmdTensor(tensor, kOp);
  std::shared_ptr<const runtime::Sharding> full = x->sharding();
  TORCH_CHECK(!IsManualPiece(x), kOp, ": the tensor ",
              DescribeTensor(tensor), " is already manually sharded or computed from a manually sharded value (its "
              "shape is each device's piece)");
  TORCH_CHECK(full, kOp, ": the tensor ", DescribeTensor(tensor),
              " has no sharding; mark it first (torch_xla.distributed.spmd.mark_sharding)");
  full->Check(x->shape().dims.size(), runtime::Client::Get().device_count(), kOp);
  manual_in_use.store(true, std::memory_order_relaxed);
  ir::Shape shard(x->shape().type, full->ShardDims(x->shape().dims));
  at::Tensor out = AtenFromIr(ir::SpmdFullToShard(x->GetIrValue(), *full, shard), x->device());
  GetXlaTensor(out, kOp)->SetSharding(std::make_shared<const runtime::Sharding>(runtime::Sharding::Parse("{manual}")));
  return out;
}

at::Tensor SpmdShardToFullShape(const at::Tensor& tensor, const std::string& sharding_text,
                                const std::vector<int64_t>& full_shape, at::ScalarType dtype) {
  constexpr const char* kOp = "_spmd_shard_to_full_shape";
  XlaTensorPtr x = SpmdTensor(tensor, kOp);
  TORCH_CHECK(IsManual(x->sharding()), kOp, ": the tensor ", DescribeTensor(tensor),
              " is not manually sharded (its sharding is '", x->sharding() ? x->sharding()->ToString() : "none",
              "'); mark it with _mark_manual_sharding, or make it with _spmd_full_to_shard_shape");
  runtime::Sharding full;
  try {
    full = runtime::Sharding::Parse(sharding_text);
    full.Check(full_shape.size(), runtime::Client::Get().device_count(),
               std::string(kOp) + " to a tensor of shape " + DimsText(full_shape));
  } catch (const runtime::RuntimeError& e) {
    TORCH_CHECK(false, kOp, ": ", e.what());
  }
  TORCH_CHECK(full.kind() != runtime::Sharding::Kind::kManual, kOp,
                    ": the sharding of the full tensor must be tiled or replicated, not {manual}");
  for (int64_t d : full_shape) TORCH_CHECK(d >= 0, kOp, ": the full shape ", DimsText(full_shape), " is negative");
  const std::vector<int64_t> expected = full.ShardDims(full_shape);
  TORCH_CHECK(expected == x->shape().dims, kOp, ": a tensor of shape ", DimsText(full_shape), " sharded as ",
                    full.ToString(), " has shards of shape ", DimsText(expected), "; the manual tensor ",
                    DescribeTensor(tensor), " has shape ", DimsText(x->shape().dims));
  const runtime::ElementType type = ElementTypeOf(dtype);
  TORCH_CHECK(type == x->shape().type, kOp, ": the full tensor's dtype ", dtype,
                    " differs from the manual tensor's ", DescribeTensor(tensor), "; convert the tensor first");
  at::Tensor out = AtenFromIr(ir::SpmdShardToFull(x->GetIrValue(), full, ir::Shape(type, full_shape)), x->device());
  GetXlaTensor(out, kOp)->SetSharding(std::make_shared<const runtime::Sharding>(full));
  return out;
}

at::Tensor GlobalTensorFromCpuShards(const std::vector<at::Tensor>& shards, const std::string& sharding_text,
                                     const std::optional<std::vector<int64_t>>& global_shape) {
  constexpr const char* kOp = "_global_tensor_from_cpu_shards";
  TORCH_CHECK(runtime::spmd::Enabled(), kOp,
              ": SPMD mode is off; call torch_xla.runtime.use_spmd() before making sharded tensors");
  runtime::Client& client = runtime::Client::Get();
  const int n = client.device_count();
  TORCH_CHECK(static_cast<int>(shards.size()) == n, kOp, ": expected one shard per device (", n, "), got ",
              shards.size());
  for (const at::Tensor& s : shards) {
    TORCH_CHECK(s.device().is_cpu(), kOp, ": the shards must be CPU tensors, got one on ", s.device());
    TORCH_CHECK(s.sizes() == shards[0].sizes() && s.scalar_type() == shards[0].scalar_type(), kOp,
                ": every shard must have the first one's shape and dtype ", DescribeTensor(shards[0]), ", got ",
                DescribeTensor(s));
  }
  const std::vector<int64_t> shard_dims = shards[0].sizes().vec();
  runtime::Sharding sharding;
  try {
    sharding = runtime::Sharding::Parse(sharding_text);
  } catch (const runtime::RuntimeError& e) {
    TORCH_CHECK(false, kOp, ": ", e.what());
  }
  TORCH_CHECK(sharding.kind() != runtime::Sharding::Kind::kManual, kOp,
              ": a {manual} sharding has no global tensor; give a tiled or replicated sharding");
  std::vector<int64_t> dims;
  if (global_shape) {
    dims = *global_shape;
    TORCH_CHECK(dims.size() == shard_dims.size(), kOp, ": the global shape ", DimsText(dims), " has rank ",
                dims.size(), "; the shards ", DimsText(shard_dims), " have rank ", shard_dims.size());
  } else if (sharding.kind() == runtime::Sharding::Kind::kTiled) {
    // Without a shape, the shards hold no padding: the global shape is theirs times the tiling.
    std::vector<int64_t> tiles = sharding.data_tile_dims();
    TORCH_CHECK(tiles.size() == shard_dims.size(), kOp, ": the sharding ", sharding.ToString(), " tiles ",
                tiles.size(), " dimensions; the shards ", DimsText(shard_dims), " have ", shard_dims.size());
    for (std::size_t d = 0; d < tiles.size(); ++d) dims.push_back(tiles[d] * shard_dims[d]);
  } else {
    dims = shard_dims;
  }
  try {
    sharding.Check(dims.size(), n, kOp);
  } catch (const runtime::RuntimeError& e) {
    TORCH_CHECK(false, e.what());
  }
  const std::vector<int64_t> expected = sharding.ShardDims(dims);
  TORCH_CHECK(expected == shard_dims, kOp, ": a tensor of shape ", DimsText(dims), " sharded as ",
              sharding.ToString(), " has shards of shape ", DimsText(expected), " (padded); the shards have shape ",
              DimsText(shard_dims));
  const runtime::ElementType type = ElementTypeOf(shards[0].scalar_type());
  const at::ScalarType device_dtype = DeviceScalarTypeOf(type);
  std::vector<runtime::BufferPtr> buffers;
  for (int d = 0; d < n; ++d) {
    at::Tensor data = shards[d].to(device_dtype).contiguous();
    buffers.push_back(client.TransferToDevice(data.data_ptr(), type, shard_dims, d));
  }
  XlaTensorPtr x = XlaTensor::FromBuffer(runtime::Buffer::Sharded(std::move(buffers), sharding, type, dims));
  x->SetSharding(std::make_shared<const runtime::Sharding>(sharding));
  return AtenFromXla(std::move(x));
}

namespace {

// The groups of a manual collective: device ordinals, each device once, all groups of
// one size; none means one group of every device.
std::vector<std::vector<int64_t>> DeviceGroups(const std::vector<std::vector<int64_t>>& groups, const char* op) {
  const int n = runtime::Client::Get().device_count();
  if (groups.empty()) {
    std::vector<int64_t> all(n);
    for (int d = 0; d < n; ++d) all[d] = d;
    return {all};
  }
  std::vector<bool> seen(n, false);
  std::size_t count = 0;
  for (const auto& g : groups) {
    TORCH_CHECK(!g.empty() && g.size() == groups[0].size(), op, ": the groups must all have one size (",
                groups[0].size(), "), got one of ", g.size());
    for (int64_t d : g) {
      TORCH_CHECK(d >= 0 && d < n && !seen[d], op, ": device ", d, " is out of range (", n,
                  " devices) or in two groups");
      seen[d] = true;
      ++count;
    }
  }
  TORCH_CHECK(static_cast<int>(count) == n, op, ": the groups hold ", count, " of the ", n,
              " devices; every device takes part in a collective of the SPMD program");
  return groups;
}

XlaTensorPtr ManualPiece(const at::Tensor& tensor, const char* op) {
  XlaTensorPtr x = SpmdTensor(tensor, op);
  TORCH_CHECK(IsManualPiece(x), op,
              ": the tensor ", DescribeTensor(tensor),
              " is not a manually sharded piece; collectives between the devices run inside manual sharding "
              "(torch_xla.distributed.spmd.enable_manual_sharding)");
  return x;
}

at::Tensor Scaled(at::Tensor t, double scale) { return scale == 1.0 ? t : t * scale; }

}  // namespace

at::Tensor SpmdAllReduce(const std::string& reduce_type, const at::Tensor& input, double scale,
                         const std::vector<std::vector<int64_t>>& groups) {
  constexpr const char* kOp = "_xla_spmd_all_reduce";
  ir::ReduceKind reduce = ParseReduceType(reduce_type, kOp);
  XlaTensorPtr x = ManualPiece(input, kOp);
  ir::Value value = ir::SpmdAllReduce(reduce, x->GetIrValue(), DeviceGroups(groups, kOp));
  return Scaled(AtenFromIr(value, x->device()), scale);
}

at::Tensor SpmdReduceScatter(const std::string& reduce_type, const at::Tensor& input, double scale,
                             int64_t scatter_dim, int64_t shard_count, const std::vector<std::vector<int64_t>>& groups) {
  constexpr const char* kOp = "_xla_spmd_reduce_scatter";
  ir::ReduceKind reduce = ParseReduceType(reduce_type, kOp);
  XlaTensorPtr x = ManualPiece(input, kOp);
  std::vector<std::vector<int64_t>> device_groups = DeviceGroups(groups, kOp);
  TORCH_CHECK(shard_count == static_cast<int64_t>(device_groups[0].size()), kOp, ": shard_count ", shard_count,
              " differs from the group size ", device_groups[0].size());
  const int64_t rank = static_cast<int64_t>(x->shape().dims.size());
  TORCH_CHECK(scatter_dim >= -rank && scatter_dim < rank, kOp, ": scatter dimension ", scatter_dim,
              " is out of range for a tensor ", DescribeTensor(input));
  if (scatter_dim < 0) scatter_dim += rank;
  ir::Value value;
  try {
    value = ir::SpmdReduceScatter(reduce, x->GetIrValue(), scatter_dim, device_groups);
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK(false, e.what());
  }
  return Scaled(AtenFromIr(value, x->device()), scale);
}

}  // namespace torch_xla
