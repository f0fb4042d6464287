#pragma once
// Internal: the serialized xla.CompileOptionsProto that PJRT_Client_Compile requires (the
// CPU plugin aborts on empty options), written by hand to avoid a protobuf dependency.
#include <cstdint>
#include <string>
#include <vector>

namespace torch_xla::runtime::internal {

// CompileOptionsProto{executable_build_options{num_replicas, num_partitions},
// compile_portable_executable} in wire format. A portable executable has no device
// assignment and runs on whichever device it is launched on; only single-device
// (1 replica, 1 partition) executables may be portable. `replica_device_ids`, when given
// (one partition), is the device assignment: replica r runs on the device with that PJRT
// id; without it XLA assigns replica r to device r.
std::string SerializeCompileOptions(int num_replicas, int num_partitions, bool portable,
                                    const std::vector<int64_t>& replica_device_ids = {});

// The options of an SPMD program: one replica, one partition per device (partition p on
// the device with PJRT id partition_device_ids[p]), and XLA's SPMD partitioner on
// (use_spmd_partitioning), without which the compiler refuses num_partitions > 1.
// propagate_to_output[i] (allow_spmd_sharding_propagation_to_output): XLA chooses output
// i's layout; the module's annotation of it stands otherwise.
std::string SerializeSpmdCompileOptions(const std::vector<int64_t>& partition_device_ids,
                                        const std::vector<bool>& propagate_to_output = {});

}  // namespace torch_xla::runtime::internal
