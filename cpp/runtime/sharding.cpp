#include "runtime/sharding.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <set>

#include "runtime/client.h"

namespace torch_xla::runtime {

namespace {

std::string Join(const std::vector<int64_t>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}

// Reads "12,3,4" from text[pos..] up to `end`; advances pos.
std::vector<int64_t> ReadNumbers(const std::string& text, std::size_t& pos, char end) {
  std::vector<int64_t> out;
  while (pos < text.size() && text[pos] != end && text[pos] != ' ' && text[pos] != '}') {
    std::size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos == start) throw RuntimeError("sharding '" + text + "': expected a number at position " + std::to_string(pos));
    out.push_back(std::stoll(text.substr(start, pos - start)));
    if (pos < text.size() && text[pos] == ',') ++pos;
  }
  return out;
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

std::atomic<bool>& SpmdFlag() {
  static std::atomic<bool> flag{false};
  return flag;
}

}  // namespace

Sharding Sharding::Parse(const std::string& text) {
  Sharding s;
  if (text == "{replicated}") return s;
  if (text == "{manual}") {
    s.kind_ = Kind::kManual;
    return s;
  }
  const std::string prefix = "{devices=[";
  if (text.compare(0, prefix.size(), prefix) != 0 || text.back() != '}')
    throw RuntimeError("sharding '" + text +
                       "' is not one of '{replicated}', '{manual}', '{devices=[...]...}' (with "
                       "'last_tile_dim_replicate' for partial replication)");
  std::size_t pos = prefix.size();
  s.kind_ = Kind::kTiled;
  s.tile_dims_ = ReadNumbers(text, pos, ']');
  if (pos >= text.size() || text[pos] != ']') throw RuntimeError("sharding '" + text + "': expected ']'");
  ++pos;
  s.devices_ = ReadNumbers(text, pos, ' ');
  std::string rest = text.substr(pos, text.size() - 1 - pos);
  while (!rest.empty() && rest.front() == ' ') rest.erase(rest.begin());
  if (rest == "last_tile_dim_replicate") {
    s.replicate_last_ = true;
  } else if (!rest.empty()) {
    throw RuntimeError("sharding '" + text + "': unknown '" + rest + "'");
  }
  if (s.tile_dims_.empty() || std::any_of(s.tile_dims_.begin(), s.tile_dims_.end(), [](int64_t d) { return d < 1; }))
    throw RuntimeError("sharding '" + text + "': tile dimensions must be positive");
  if (static_cast<int64_t>(s.devices_.size()) != Product(s.tile_dims_))
    throw RuntimeError("sharding '" + text + "': " + std::to_string(s.devices_.size()) + " devices for " +
                       std::to_string(Product(s.tile_dims_)) + " tiles [" + Join(s.tile_dims_) + "]");
  if (std::set<int64_t>(s.devices_.begin(), s.devices_.end()).size() != s.devices_.size())
    throw RuntimeError("sharding '" + text + "': a device is listed twice");
  // One tile for every device is replication.
  if (s.data_tile_dims().empty() || Product(s.data_tile_dims()) == 1) {
    if (s.replicate_last_ || Product(s.tile_dims_) == 1) return Sharding();
  }
  return s;
}

std::vector<int64_t> Sharding::data_tile_dims() const {
  std::vector<int64_t> dims = tile_dims_;
  if (replicate_last_ && !dims.empty()) dims.pop_back();
  return dims;
}

std::string Sharding::ToString() const {
  switch (kind_) {
    case Kind::kReplicated: return "{replicated}";
    case Kind::kManual: return "{manual}";
    case Kind::kTiled: break;
  }
  std::string out = "{devices=[" + Join(tile_dims_) + "]" + Join(devices_);
  if (replicate_last_) out += " last_tile_dim_replicate";
  return out + "}";
}

std::vector<int64_t> Sharding::Encode() const {
  std::vector<int64_t> out = {static_cast<int64_t>(kind_), replicate_last_ ? 1 : 0,
                              static_cast<int64_t>(tile_dims_.size())};
  out.insert(out.end(), tile_dims_.begin(), tile_dims_.end());
  out.insert(out.end(), devices_.begin(), devices_.end());
  return out;
}

Sharding Sharding::Decode(const std::vector<int64_t>& ints) {
  if (ints.size() < 3) throw RuntimeError("Sharding::Decode: too few integers");
  Sharding s;
  s.kind_ = static_cast<Kind>(ints[0]);
  s.replicate_last_ = ints[1] != 0;
  const std::size_t n = static_cast<std::size_t>(ints[2]);
  if (ints.size() < 3 + n) throw RuntimeError("Sharding::Decode: too few integers");
  s.tile_dims_.assign(ints.begin() + 3, ints.begin() + 3 + n);
  s.devices_.assign(ints.begin() + 3 + n, ints.end());
  return s;
}

void Sharding::Check(std::size_t rank, int num_devices, const std::string& what) const {
  if (kind_ != Kind::kTiled) return;
  std::vector<int64_t> data = data_tile_dims();
  if (data.size() != rank)
    throw RuntimeError(what + ": sharding " + ToString() + " splits " + std::to_string(data.size()) +
                       " dimensions, the tensor has " + std::to_string(rank));
  if (static_cast<int64_t>(devices_.size()) != num_devices)
    throw RuntimeError(what + ": sharding " + ToString() + " lays the tensor over " +
                       std::to_string(devices_.size()) + " devices; the mesh has " + std::to_string(num_devices));
  for (int64_t d : devices_)
    if (d < 0 || d >= num_devices)
      throw RuntimeError(what + ": sharding " + ToString() + " names device " + std::to_string(d) + "; there are " +
                         std::to_string(num_devices));
}

std::vector<int64_t> Sharding::ShardDims(const std::vector<int64_t>& dims) const {
  if (kind_ != Kind::kTiled) return dims;
  std::vector<int64_t> parts = data_tile_dims();
  std::vector<int64_t> out(dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) out[d] = (dims[d] + parts[d] - 1) / parts[d];
  return out;
}

std::vector<int64_t> Sharding::TileIndexOf(int device) const {
  auto it = std::find(devices_.begin(), devices_.end(), static_cast<int64_t>(device));
  if (it == devices_.end())
    throw RuntimeError("sharding " + ToString() + " has no tile for device " + std::to_string(device));
  int64_t linear = it - devices_.begin();
  std::vector<int64_t> index(tile_dims_.size());
  for (std::size_t d = tile_dims_.size(); d-- > 0;) {
    index[d] = linear % tile_dims_[d];
    linear /= tile_dims_[d];
  }
  return index;
}

std::vector<int64_t> Sharding::ShardOffsets(int device, const std::vector<int64_t>& dims) const {
  std::vector<int64_t> offsets(dims.size(), 0);
  if (kind_ != Kind::kTiled) return offsets;
  std::vector<int64_t> index = TileIndexOf(device);
  std::vector<int64_t> shard = ShardDims(dims);
  for (std::size_t d = 0; d < dims.size(); ++d) offsets[d] = index[d] * shard[d];
  return offsets;
}

int Sharding::ReplicaIndex(int device) const {
  if (kind_ == Kind::kReplicated) return device;
  if (kind_ != Kind::kTiled || !replicate_last_) return 0;
  return static_cast<int>(TileIndexOf(device).back());
}

namespace {

// Copies between a value of `dims` and one shard of it: the shard's elements at
// `offsets` in the value, rows clipped at the value's end. `to_shard` chooses the way.
void CopyShard(unsigned char* value, unsigned char* shard, std::size_t element_size, const std::vector<int64_t>& dims,
               const std::vector<int64_t>& shard_dims, const std::vector<int64_t>& offsets, bool to_shard) {
  const std::size_t rank = dims.size();
  if (rank == 0) {
    if (to_shard) std::memcpy(shard, value, element_size);
    else std::memcpy(value, shard, element_size);
    return;
  }
  for (std::size_t d = 0; d < rank; ++d)
    if (offsets[d] >= dims[d]) return;  // an empty (all padding) shard
  // Row-major strides of both, in elements.
  std::vector<int64_t> value_stride(rank, 1), shard_stride(rank, 1);
  for (std::size_t d = rank - 1; d-- > 0;) {
    value_stride[d] = value_stride[d + 1] * dims[d + 1];
    shard_stride[d] = shard_stride[d + 1] * shard_dims[d + 1];
  }
  std::vector<int64_t> extent(rank);
  for (std::size_t d = 0; d < rank; ++d) extent[d] = std::min(shard_dims[d], dims[d] - offsets[d]);
  const std::size_t row_bytes = static_cast<std::size_t>(extent[rank - 1]) * element_size;
  std::vector<int64_t> index(rank, 0);  // over the leading rank-1 dimensions
  while (true) {
    int64_t v = offsets[rank - 1], s = 0;
    for (std::size_t d = 0; d + 1 < rank; ++d) {
      v += (offsets[d] + index[d]) * value_stride[d];
      s += index[d] * shard_stride[d];
    }
    unsigned char* vp = value + v * element_size;
    unsigned char* sp = shard + s * element_size;
    if (to_shard) std::memcpy(sp, vp, row_bytes);
    else std::memcpy(vp, sp, row_bytes);
    int d = static_cast<int>(rank) - 2;
    while (d >= 0) {
      if (++index[d] < extent[d]) break;
      index[d] = 0;
      --d;
    }
    if (d < 0) break;
  }
}

}  // namespace

std::vector<std::string> SplitIntoShards(const void* data, std::size_t element_size, const std::vector<int64_t>& dims,
                                         const Sharding& sharding, int num_devices) {
  std::vector<int64_t> shard_dims = sharding.ShardDims(dims);
  const std::size_t shard_bytes = static_cast<std::size_t>(Product(shard_dims)) * element_size;
  std::vector<std::string> shards(num_devices);
  for (int device = 0; device < num_devices; ++device) {
    shards[device].assign(shard_bytes, '\0');
    if (shard_bytes == 0) continue;
    CopyShard(static_cast<unsigned char*>(const_cast<void*>(data)),
              reinterpret_cast<unsigned char*>(shards[device].data()), element_size, dims, shard_dims,
              sharding.ShardOffsets(device, dims), /*to_shard=*/true);
  }
  return shards;
}

void AssembleFromShards(const std::vector<const void*>& shards, std::size_t element_size,
                        const std::vector<int64_t>& dims, const Sharding& sharding, void* out) {
  if (sharding.kind() == Sharding::Kind::kManual)
    throw RuntimeError("a manually sharded value ({manual}) of shape [" + Join(dims) +
                       "] is a different piece on each device and has no single value to read; read it after "
                       "torch_xla.distributed.spmd.disable_manual_sharding, or its pieces (local_shards)");
  std::vector<int64_t> shard_dims = sharding.ShardDims(dims);
  if (Product(dims) == 0) return;
  for (std::size_t device = 0; device < shards.size(); ++device) {
    // Replicated tiles: the first copy of each tile is enough.
    if (sharding.ReplicaIndex(static_cast<int>(device)) != 0 && !sharding.is_replicated()) continue;
    CopyShard(static_cast<unsigned char*>(out), static_cast<unsigned char*>(const_cast<void*>(shards[device])),
              element_size, dims, shard_dims, sharding.ShardOffsets(static_cast<int>(device), dims),
              /*to_shard=*/false);
    if (sharding.is_replicated()) return;
  }
}

namespace spmd {
bool Enabled() { return SpmdFlag().load(std::memory_order_relaxed); }
void Enable() { SpmdFlag().store(true, std::memory_order_relaxed); }
}  // namespace spmd

}  // namespace torch_xla::runtime
