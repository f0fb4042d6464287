#pragma once
// Turns pending tensors into device data: collects their IR graph, looks up the
// compiled computation by the graph's hash (compiling on a miss), gathers the
// parameter buffers, runs the computation (asynchronously) and hands the output
// buffers back to the tensors.
#include <string>
#include <vector>

#include "tensor/xla_tensor.h"

namespace torch_xla::exec {

// Runs every pending tensor of `device` as one compiled graph (mark_step). With
// `wait`, blocks until the execution has finished. A graph with collective ops runs
// replicated (exec/replication.h): the call returns once every replica has synced its
// device and the replicated computation has been launched.
void SyncDevice(int device, bool wait);
// The same for several devices; the graphs of replicas of one replication may all be
// synced by the one call.
void SyncDevices(const std::vector<int>& devices, bool wait);
// Runs every pending tensor of every device.
void SyncAll(bool wait);
// Materializes these tensors (their graph only), e.g. before a copy to the host.
void SyncTensors(const std::vector<XlaTensorPtr>& tensors);
// The StableHLO module that computing these tensors would compile.
std::string GetStableHlo(const std::vector<XlaTensorPtr>& tensors);
// That module with its parameters: the tensors holding each parameter's value, in order
// (a parameter's device data, or a pending scalar's value).
struct GraphProgram {
  std::string stablehlo;
  std::vector<XlaTensorPtr> parameters;
};
GraphProgram GetGraphProgram(const std::vector<XlaTensorPtr>& tensors);
// The IR graph of these tensors as text (exec/graph_debug.h), with each node's source
// line under IR debugging.
std::string GetIrText(const std::vector<XlaTensorPtr>& tensors);
// Number of computations in the cache.
std::size_t CachedComputationCount();
// Whether a sync of some tensors (SyncTensors) may donate the buffers the user asked
// to donate (runtime::Buffer::set_donation_requested); a sync of every pending tensor
// always may. Off by default.
void SetAliasWithBufferDonorConfig(bool enabled);
bool GetAliasWithBufferDonorConfig();

// Eager mode's syncs (aten/eager_mode.h): every device's pending tensors, run as the
// graph of one op. Their compiles and executions count as EagerOpCompileTime and
// EagerOpExecuteTime instead of CompileTime and ExecuteTime; EagerOpCompileTime counts
// each op whose executable was not in the process's cache (compiled, or loaded from the
// persistent cache), so that its count does not depend on what earlier processes left.
void SyncAsEagerOp(const std::vector<int>& devices);

// Whether the calling thread's syncs may run graphs. torch_xla.compile(full_graph=True)
// turns it off while its function is traced: a sync there (a tensor read on the host)
// raises instead of splitting the function into several graphs.
void SetAllowExecution(bool allow);
bool AllowExecution();

// The hashes of the graphs that the calling thread's last sync ran (one per device that
// had pending work; none when nothing was pending).
std::vector<uint64_t> LastSyncGraphHashes();

}  // namespace torch_xla::exec
