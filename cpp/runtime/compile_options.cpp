#include "runtime/compile_options.h"

#include <cstdint>

namespace torch_xla::runtime::internal {
namespace {

// Field numbers in xla/pjrt/proto/compile_options.proto and xla/xla.proto.
constexpr int kExecutableBuildOptionsField = 3;  // CompileOptionsProto
constexpr int kCompilePortableField = 4;         // CompileOptionsProto
constexpr int kNumReplicasField = 4;             // ExecutableBuildOptionsProto
constexpr int kNumPartitionsField = 5;           // ExecutableBuildOptionsProto
constexpr int kUseSpmdPartitioningField = 6;     // ExecutableBuildOptionsProto
constexpr int kPropagateToOutputField = 12;      // ExecutableBuildOptionsProto (repeated bool)
constexpr int kDeviceAssignmentField = 9;        // ExecutableBuildOptionsProto
constexpr int kReplicaCountField = 1;            // DeviceAssignmentProto
constexpr int kComputationCountField = 2;        // DeviceAssignmentProto
constexpr int kComputationDevicesField = 3;      // DeviceAssignmentProto
constexpr int kReplicaDeviceIdsField = 1;        // DeviceAssignmentProto.ComputationDevice
constexpr int kWireVarint = 0;
constexpr int kWireLengthDelimited = 2;

void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void AppendTag(std::string& out, int field, int wire_type) {
  AppendVarint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}

void AppendMessage(std::string& out, int field, const std::string& message) {
  AppendTag(out, field, kWireLengthDelimited);
  AppendVarint(out, message.size());
  out += message;
}

// DeviceAssignmentProto for one computation (partition) whose replica r runs on the
// device with id device_ids[r].
std::string SerializeDeviceAssignment(const std::vector<int64_t>& device_ids) {
  std::string ids;  // packed repeated int64
  for (int64_t id : device_ids) AppendVarint(ids, static_cast<uint64_t>(id));
  std::string computation;
  AppendMessage(computation, kReplicaDeviceIdsField, ids);
  std::string out;
  AppendTag(out, kReplicaCountField, kWireVarint);
  AppendVarint(out, device_ids.size());
  AppendTag(out, kComputationCountField, kWireVarint);
  AppendVarint(out, 1);
  AppendMessage(out, kComputationDevicesField, computation);
  return out;
}

// DeviceAssignmentProto for one replica of N computations (SPMD partitions): partition p
// runs on the device with id device_ids[p].
std::string SerializePartitionAssignment(const std::vector<int64_t>& device_ids) {
  std::string out;
  AppendTag(out, kReplicaCountField, kWireVarint);
  AppendVarint(out, 1);
  AppendTag(out, kComputationCountField, kWireVarint);
  AppendVarint(out, device_ids.size());
  for (int64_t id : device_ids) {
    std::string ids;
    AppendVarint(ids, static_cast<uint64_t>(id));
    std::string computation;
    AppendMessage(computation, kReplicaDeviceIdsField, ids);
    AppendMessage(out, kComputationDevicesField, computation);
  }
  return out;
}

}  // namespace

std::string SerializeSpmdCompileOptions(const std::vector<int64_t>& partition_device_ids,
                                        const std::vector<bool>& propagate_to_output) {
  std::string build_options;
  AppendTag(build_options, kNumReplicasField, kWireVarint);
  AppendVarint(build_options, 1);
  AppendTag(build_options, kNumPartitionsField, kWireVarint);
  AppendVarint(build_options, partition_device_ids.size());
  AppendTag(build_options, kUseSpmdPartitioningField, kWireVarint);
  AppendVarint(build_options, 1);
  AppendMessage(build_options, kDeviceAssignmentField, SerializePartitionAssignment(partition_device_ids));
  if (!propagate_to_output.empty()) {
    std::string packed;
    for (bool b : propagate_to_output) packed.push_back(b ? 1 : 0);
    AppendMessage(build_options, kPropagateToOutputField, packed);
  }
  std::string out;
  AppendMessage(out, kExecutableBuildOptionsField, build_options);
  return out;
}

std::string SerializeCompileOptions(int num_replicas, int num_partitions, bool portable,
                                    const std::vector<int64_t>& replica_device_ids) {
  std::string build_options;
  AppendTag(build_options, kNumReplicasField, kWireVarint);
  AppendVarint(build_options, static_cast<uint64_t>(num_replicas));
  AppendTag(build_options, kNumPartitionsField, kWireVarint);
  AppendVarint(build_options, static_cast<uint64_t>(num_partitions));
  if (!replica_device_ids.empty()) {
    AppendMessage(build_options, kDeviceAssignmentField, SerializeDeviceAssignment(replica_device_ids));
  }

  std::string out;
  AppendMessage(out, kExecutableBuildOptionsField, build_options);
  if (portable) {
    AppendTag(out, kCompilePortableField, kWireVarint);
    AppendVarint(out, 1);
  }
  return out;
}

}  // namespace torch_xla::runtime::internal
