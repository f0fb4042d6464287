#pragma once
// Collectives across processes (several processes launched by torchrun) on the CPU device.
//
// Each process runs its replicas as one replicated computation (exec/replication.h); the
// CPU plugin has no collectives between processes. Replica r of every process forms a
// "rail": a gloo process group of one rank per process, which the Python layer creates
// (torch.distributed's ProcessGroupGloo over the launcher's store) and registers with
// c10d's group registry under RailGroupName(r). A collective over every replica is an
// in-process XLA collective followed, inside the same graph, by a call of the
// cross-process host kernel (ir::CrossProcess), which runs the rail's gloo collective on
// the replica's buffers in place: on the CPU device they are host memory.
//
// A sum over every replica (gradients) is one gloo all-reduce of the process's sum. Every
// other collective gathers every replica's value (an in-process all_gather, then a gloo
// all-gather of the process's block) and computes the replica's result from them on the
// host with PyTorch's CPU kernels.
#include <string>

namespace torch_xla {

struct ProcessLayout {
  int index = 0;  // this process among them (torchrun's RANK)
  int count = 1;  // the processes (torchrun's WORLD_SIZE)
};

// Set by the Python layer once the processes have met; until then a process is alone.
// Throws c10::Error for an index outside [0, count).
void SetProcessLayout(int index, int count);
ProcessLayout GetProcessLayout();

// The message of the first cross-process collective that failed, or empty. After one
// failed, the processes are out of step: every later sync raises it (aten/api.h).
std::string CrossProcessFailure();

// The c10d group name of rail `replica`: "torch_xla_rail_<replica>".
std::string RailGroupName(int replica);

// Registers the cross-process kernel with the plugin (once). Throws c10::Error when the
// device is not the CPU device or its plugin takes no host kernels.
void EnsureCrossProcessKernel();

}  // namespace torch_xla
