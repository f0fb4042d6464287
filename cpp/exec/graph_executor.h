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

}  // namespace torch_xla::exec
