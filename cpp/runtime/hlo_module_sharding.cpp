#include "runtime/hlo_module_sharding.h"

#include <cstdint>
#include <numeric>
#include <string_view>

namespace torch_xla::runtime::internal {
namespace {

// Field numbers in xla/service/hlo.proto and xla/xla_data.proto.
constexpr int kModuleOfConfigField = 1;       // HloModuleProtoWithConfig
constexpr int kSpmdOutputShardingField = 12;  // HloModuleProto
constexpr int kTypeField = 1;                 // OpSharding
constexpr int kTileDimsField = 3;
constexpr int kTileDevicesField = 4;
constexpr int kTupleShardingsField = 5;
constexpr int kReplicateLastField = 6;
constexpr int kLastTileDimsField = 8;
constexpr int kIotaReshapeDimsField = 9;
constexpr int kIotaTransposePermField = 10;
enum OpShardingType { kReplicated = 0, kMaximal = 1, kTuple = 2, kOther = 3, kManual = 4 };

// A reader of protobuf's wire format over one message.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}

  // The next field: its number and wire type, and its varint or bytes. False at the end
  // or on malformed data.
  bool Next(int& field, int& wire, uint64_t& varint, std::string_view& bytes) {
    if (pos_ >= data_.size()) return false;
    uint64_t tag;
    if (!Varint(tag)) return false;
    field = static_cast<int>(tag >> 3);
    wire = static_cast<int>(tag & 7);
    switch (wire) {
      case 0: return Varint(varint);
      case 1: return Skip(8);
      case 5: return Skip(4);
      case 2: {
        uint64_t length;
        if (!Varint(length) || length > data_.size() - pos_) return false;
        bytes = data_.substr(pos_, length);
        pos_ += length;
        return true;
      }
      default: return false;
    }
  }

  bool Varint(uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64 && pos_ < data_.size(); shift += 7) {
      const uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return true;
    }
    return false;
  }

 private:
  bool Skip(std::size_t n) {
    if (n > data_.size() - pos_) return false;
    pos_ += n;
    return true;
  }
  std::string_view data_;
  std::size_t pos_ = 0;
};

// A repeated integer field, packed (bytes) or not (one varint).
bool AppendRepeated(int wire, uint64_t varint, std::string_view bytes, std::vector<int64_t>& out) {
  if (wire == 0) {
    out.push_back(static_cast<int64_t>(varint));
    return true;
  }
  if (wire != 2) return false;
  WireReader packed(bytes);
  uint64_t v;
  while (packed.Varint(v)) out.push_back(static_cast<int64_t>(v));
  return true;
}

struct OpSharding {
  int64_t type = kReplicated;
  std::vector<int64_t> tile_dims, devices, last_tile_dims, iota_reshape, iota_perm;
  bool replicate_last = false;
  std::vector<std::string_view> tuple;
};

bool ParseOpSharding(std::string_view data, OpSharding& out) {
  WireReader reader(data);
  int field, wire;
  uint64_t varint = 0;
  std::string_view bytes;
  while (reader.Next(field, wire, varint, bytes)) {
    bool ok = true;
    switch (field) {
      case kTypeField: out.type = static_cast<int64_t>(varint); break;
      case kTileDimsField: ok = AppendRepeated(wire, varint, bytes, out.tile_dims); break;
      case kTileDevicesField: ok = AppendRepeated(wire, varint, bytes, out.devices); break;
      case kTupleShardingsField: out.tuple.push_back(bytes); break;
      case kReplicateLastField: out.replicate_last = varint != 0; break;
      case kLastTileDimsField: ok = AppendRepeated(wire, varint, bytes, out.last_tile_dims); break;
      case kIotaReshapeDimsField: ok = AppendRepeated(wire, varint, bytes, out.iota_reshape); break;
      case kIotaTransposePermField: ok = AppendRepeated(wire, varint, bytes, out.iota_perm); break;
      default: break;
    }
    if (!ok) return false;
  }
  return true;
}

// The devices of an iota tile assignment: iota(prod(reshape)) reshaped, transposed by
// perm, flattened.
std::vector<int64_t> IotaDevices(const std::vector<int64_t>& reshape, const std::vector<int64_t>& perm) {
  const std::size_t rank = reshape.size();
  int64_t total = 1;
  for (int64_t d : reshape) total *= d;
  std::vector<int64_t> strides(rank, 1);
  for (std::size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * reshape[d];
  std::vector<int64_t> out_dims(rank);
  for (std::size_t d = 0; d < rank; ++d) out_dims[d] = reshape[perm[d]];
  std::vector<int64_t> devices;
  devices.reserve(total);
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t source = 0;
    for (std::size_t d = 0; d < rank; ++d) source += index[d] * strides[perm[d]];
    devices.push_back(source);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < out_dims[d]) break;
      index[d] = 0;
    }
  }
  return devices;
}

std::optional<Sharding> ToSharding(const OpSharding& s) {
  if (s.type == kReplicated) return Sharding::Replicated();
  if (s.type == kManual) return Sharding::Parse("{manual}");
  if (s.type != kOther || s.tile_dims.empty()) return std::nullopt;
  bool replicate_last = s.replicate_last;
  // Subgroups of the last tile dimension: only replication is a layout here.
  if (!s.last_tile_dims.empty()) {
    if (s.last_tile_dims.size() != 1 || s.last_tile_dims[0] != kReplicated) return std::nullopt;
    replicate_last = true;
  }
  std::vector<int64_t> devices = s.devices;
  if (devices.empty()) {
    std::vector<int64_t> perm = s.iota_perm;
    if (perm.empty()) {
      perm.resize(s.iota_reshape.size());
      std::iota(perm.begin(), perm.end(), 0);
    }
    if (s.iota_reshape.empty() || perm.size() != s.iota_reshape.size()) return std::nullopt;
    devices = IotaDevices(s.iota_reshape, perm);
  }
  std::string text = "{devices=[";
  for (std::size_t i = 0; i < s.tile_dims.size(); ++i) text += (i ? "," : "") + std::to_string(s.tile_dims[i]);
  text += "]";
  for (std::size_t i = 0; i < devices.size(); ++i) text += (i ? "," : "") + std::to_string(devices[i]);
  if (replicate_last) text += " last_tile_dim_replicate";
  text += "}";
  try {
    return Sharding::Parse(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::vector<Sharding>> OutputShardingsOfHloModule(const std::string& program, const std::string& format,
                                                                std::size_t num_outputs) {
  int field, wire;
  uint64_t varint = 0;
  std::string_view bytes, output, module = program;
  if (format == "hlo_with_config") {
    WireReader outer(program);
    module = {};
    while (outer.Next(field, wire, varint, bytes))
      if (field == kModuleOfConfigField && wire == 2) module = bytes;
  } else if (format != "hlo") {
    return std::nullopt;
  }
  WireReader reader(module);
  bool found = false;
  while (reader.Next(field, wire, varint, bytes)) {
    if (field == kSpmdOutputShardingField && wire == 2) {
      output = bytes;
      found = true;
    }
  }
  if (!found) return std::nullopt;
  OpSharding root;
  if (!ParseOpSharding(output, root)) return std::nullopt;
  std::vector<Sharding> out;
  if (root.type == kTuple) {
    if (root.tuple.size() != num_outputs) return std::nullopt;
    for (std::string_view element : root.tuple) {
      OpSharding s;
      if (!ParseOpSharding(element, s)) return std::nullopt;
      std::optional<Sharding> sharding = ToSharding(s);
      if (!sharding) return std::nullopt;
      out.push_back(*sharding);
    }
    return out;
  }
  std::optional<Sharding> sharding = ToSharding(root);
  if (!sharding) return std::nullopt;
  out.assign(num_outputs, *sharding);
  return out;
}

}  // namespace torch_xla::runtime::internal
