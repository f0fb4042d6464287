#pragma once
// The C++ API of the XLA device for LibTorch programs (and the Python bindings):
//   at::Tensor t = at::ones({2, 2}, at::TensorOptions().device(torch_xla::XlaDevice()));
//   ...; torch_xla::Sync();   // run the pending graph (mark_step)
#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace torch_xla {

// The device "xla:<ordinal>"; throws c10::Error when it does not exist.
c10::Device XlaDevice(int ordinal = 0);
int DeviceCount();
// "CPU", "CUDA" or "TPU": the kind of the PJRT plugin in use.
std::string DeviceKind();

// The calling thread's current XLA device (the one "xla" without an index means), and
// setting it (c10's device guard for the XLA device type).
int CurrentDevice();
void SetCurrentDevice(int ordinal);

// Runs the pending graph of every device (or of the given devices) as one compiled
// computation each; with `wait`, blocks until it has run. Graphs with collectives run
// replicated (distributed/collectives.h).
void Sync(bool wait = false);
void SyncDevices(const std::vector<int>& ordinals, bool wait = false);
// Computes these tensors' pending values (one compiled graph per device, the graph of
// their IR only): what a compiled function's outputs need, without the rest of the step.
void SyncTensors(const std::vector<at::Tensor>& tensors, bool wait = false);
// Blocks until all enqueued device work has finished.
void WaitDeviceOps();

// The StableHLO text of the pending graph computing these tensors.
std::string GetStableHlo(const std::vector<at::Tensor>& tensors);
// The StableHLO of computing these tensors and its parameters' values as XLA tensors,
// in parameter order (_XLAC.lowering.LoweringContext).
std::pair<std::string, std::vector<at::Tensor>> GetGraphProgram(const std::vector<at::Tensor>& tensors);
// The index of the parameter among `parameters` (GetGraphProgram's) whose buffer holds
// `tensor`'s data; -1 when none does or the tensor is computed by the program.
int64_t ParameterIdOf(const std::vector<at::Tensor>& parameters, const at::Tensor& tensor);
// Its IR as text, each node with its source line when $XLA_IR_DEBUG=1.
std::string GetIrText(const std::vector<at::Tensor>& tensors);

// A number naming the tensor's value on the device (its XlaTensor) while that lives:
// tensors with equal ids are one tensor, as tied weights are. An in-place update
// gives the tensor a new value, and so a new id. Throws c10::Error for a tensor that
// is not on an XLA device.
uint64_t TensorId(const at::Tensor& tensor);

// Lets (or stops) an execution take over the device buffer of `tensor` even while
// tensors refer to it: they lose their value (IsDonatedPlaceholder then says so).
// Returns false when the tensor holds no device buffer (its value is pending).
bool SetBufferDonation(const at::Tensor& tensor, bool donate);
bool GetBufferDonation(const at::Tensor& tensor);
// Whether the tensor's buffer was donated to an execution, leaving no value.
bool IsDonatedPlaceholder(const at::Tensor& tensor);
// A description of the tensor for debugging: its id, device, shape, pending IR or
// device buffer.
std::string TensorDebugInfo(const at::Tensor& tensor);

// With PT_XLA_DEBUG_LEVEL >= 1: each op that ran on the CPU fallback, the user's line
// that called it ("" when unknown) and how often.
struct FallbackCaller {
  std::string op;
  std::string caller;
  int64_t count;
};
std::vector<FallbackCaller> FallbackCallers();

void SetRngState(uint64_t seed, int ordinal);
// A seed from which the random numbers continue (tensor/rng_state.h: once numbers were
// drawn, the generator is seeded anew with a seed derived from the last one).
uint64_t GetRngState(int ordinal);

// Places an optimization barrier over the tensors' values, in place (xm.optimization_barrier_):
// XLA computes what reads them after the barrier from the barrier's results and cannot
// merge it with what read them before (activation checkpointing). Tensors of one device.
void OptimizationBarrier(const std::vector<at::Tensor>& tensors);

// A device's memory in bytes. A limit of 0 means unknown; a peak (the most in use at once
// so far) of -1 means the plugin does not report it (the CPU plugin).
struct DeviceMemory {
  int64_t bytes_in_use = 0;
  int64_t bytes_limit = 0;
  int64_t peak_bytes_in_use = -1;
};
DeviceMemory MemoryInfo(int ordinal);

// Which convolutions on the CPU device run PyTorch's own CPU kernels inside the graph:
// "auto", "1" (all) or "0" (none), as $XLA_HOST_CONVOLUTION (host/convolution.h).
// Applies to convolutions traced from then on; throws std::invalid_argument for another
// name.
void SetHostConvolution(const std::string& mode);
std::string HostConvolution();

// SPMD (aten/spmd.cpp): one program over every device, values laid out by shardings.
// Turns SPMD mode on for the process (no way back); throws while xmp.spawn replicates.
void UseSpmd();
bool IsSpmd();
// Lays the tensor out by `sharding`, XLA's HloSharding text ("{devices=[2,2]0,1,2,3}",
// "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", "{replicated}"): its data is
// resharded now; a pending value gets the layout as a constraint in its graph. Throws
// c10::Error (ValueError in Python) naming the tensor's shape when the sharding does not
// fit it or SPMD mode is off.
void MarkSharding(const at::Tensor& tensor, const std::string& sharding);
// The tensor's value laid out by `sharding` from here on, through a constraint in its
// graph: its data (if any) keeps its layout until the graph runs.
void AnnotateCustomSharding(const at::Tensor& tensor, const std::string& sharding);
// Back to no layout: the data is replicated on every device.
void ClearSharding(const at::Tensor& tensor);
// The tensor's sharding text; "" when it has none (replicated data).
std::string ShardingSpec(const at::Tensor& tensor);
// Each device's shard of the tensor's value, as a CPU tensor without padding, with the
// device's ordinal, in device order.
std::vector<std::pair<at::Tensor, int>> LocalShards(const at::Tensor& tensor);
// Replaces the tensor's data by per-device shards (CPU tensors, as LocalShards gives
// them), keeping its sharding.
void LoadLocalShards(const at::Tensor& tensor, const std::vector<at::Tensor>& shards, const std::vector<int>& devices);
// Manual sharding: between these two each device computes on its own piece of a value,
// which XLA's partitioner leaves as written. SpmdFullToShardShape: a sharded tensor
// (tiled or replicated) seen as each device's shard ({manual}, of the shard's shape);
// SpmdShardToFullShape: a manual tensor's pieces as the global tensor of `full_shape`
// laid out by `sharding` (the pieces must have that layout's shard shape and the dtype).
// MarkManualSharding marks a pending value manual ({manual}); data cannot be. All throw
// c10::Error (RuntimeError) naming the op and the shapes.
at::Tensor SpmdFullToShardShape(const at::Tensor& tensor);
at::Tensor SpmdShardToFullShape(const at::Tensor& tensor, const std::string& sharding,
                                const std::vector<int64_t>& full_shape, at::ScalarType dtype);
void MarkManualSharding(const at::Tensor& tensor);
// A sharded tensor from one CPU shard per device, in device order (padded shards of one
// shape, laid out by `sharding`); without `global_shape`, the shards' shape times the
// tiling.
// Collectives between the devices' pieces inside manual sharding: `tensor` is a manual
// piece, `groups` list device ordinals (each device once, groups of one size; empty: one
// group of all), `reduce_type` one of sum, mul, and, or, min, max; the result is
// multiplied by `scale`. SpmdReduceScatter splits `scatter_dim` (negative from the end)
// into `shard_count` blocks, the group size.
at::Tensor SpmdAllReduce(const std::string& reduce_type, const at::Tensor& tensor, double scale,
                         const std::vector<std::vector<int64_t>>& groups);
at::Tensor SpmdReduceScatter(const std::string& reduce_type, const at::Tensor& tensor, double scale,
                             int64_t scatter_dim, int64_t shard_count, const std::vector<std::vector<int64_t>>& groups);
at::Tensor GlobalTensorFromCpuShards(const std::vector<at::Tensor>& shards, const std::string& sharding,
                                     const std::optional<std::vector<int64_t>>& global_shape);

}  // namespace torch_xla
