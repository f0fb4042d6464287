#include "runtime/compile_options.h"

#include <cstdint>

namespace torch_xla::runtime::internal {
namespace {

// Field numbers in xla/pjrt/proto/compile_options.proto and xla/xla.proto.
constexpr int kExecutableBuildOptionsField = 3;  // CompileOptionsProto
constexpr int kCompilePortableField = 4;         // CompileOptionsProto
constexpr int kNumReplicasField = 4;             // ExecutableBuildOptionsProto
constexpr int kNumPartitionsField = 5;           // ExecutableBuildOptionsProto
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

}  // namespace

std::string SerializeCompileOptions(int num_replicas, int num_partitions, bool portable) {
  std::string build_options;
  AppendTag(build_options, kNumReplicasField, kWireVarint);
  AppendVarint(build_options, static_cast<uint64_t>(num_replicas));
  AppendTag(build_options, kNumPartitionsField, kWireVarint);
  AppendVarint(build_options, static_cast<uint64_t>(num_partitions));

  std::string out;
  AppendTag(out, kExecutableBuildOptionsField, kWireLengthDelimited);
  AppendVarint(out, build_options.size());
  out += build_options;
  if (portable) {
    AppendTag(out, kCompilePortableField, kWireVarint);
    AppendVarint(out, 1);
  }
  return out;
}

}  // namespace torch_xla::runtime::internal
