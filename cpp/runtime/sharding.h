// SPMD: how a value is laid out over the devices of a mesh, in the terms of XLA's
// HloSharding, and the process-wide SPMD mode in which one program runs on every device
// (XLA's partitioner splits it). Nothing here knows about PyTorch or the IR: a sharding
// is text the user gives ("{devices=[2,2]0,1,2,3}"), checked and read here, and the host
// side of moving data in and out of shards works on raw bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace torch_xla::runtime {

// An HloSharding in the forms SPMD programs use:
//   {replicated}                                       every device holds the whole value
//   {manual}                                           each device's value is its own
//   {devices=[2,2]0,1,2,3}                             tiles: dimension d is split in
//                                                      tile_dims[d] parts; the devices of the
//                                                      tiles, row-major
//   {devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}   the last tile dimension is a group
//                                                      of devices holding the same tile
// Tiles are ceil(size / parts) long; the last ones are padded (XLA's layout of uneven
// shards).
class Sharding {
 public:
  enum class Kind { kReplicated, kTiled, kManual };

  static Sharding Replicated() { return Sharding(); }
  // Parses the text form above; throws RuntimeError that quotes the text and says what
  // is wrong.
  static Sharding Parse(const std::string& text);

  Kind kind() const { return kind_; }
  bool is_replicated() const { return kind_ == Kind::kReplicated; }
  // The number of parts of each dimension of the value (tiled shardings).
  std::vector<int64_t> data_tile_dims() const;
  // The canonical text (what Parse reads, and what mhlo.sharding attributes carry).
  std::string ToString() const;

  // The sharding as integers (an IR node's attributes), and back.
  std::vector<int64_t> Encode() const;
  static Sharding Decode(const std::vector<int64_t>& ints);

  // Throws RuntimeError, naming `what`, when the sharding cannot lay out a value of
  // `rank` dimensions over `num_devices` devices (tile dims for another rank, a device
  // count that is not the mesh's, a device listed twice or out of range).
  void Check(std::size_t rank, int num_devices, const std::string& what) const;

  // The dimensions of each device's shard (padded) of a value of `dims`.
  std::vector<int64_t> ShardDims(const std::vector<int64_t>& dims) const;
  // Where device `device`'s shard starts in the value, per dimension.
  std::vector<int64_t> ShardOffsets(int device, const std::vector<int64_t>& dims) const;
  // Which of the copies of its tile device `device` holds (0 when tiles are not replicated).
  int ReplicaIndex(int device) const;

  bool operator==(const Sharding& other) const {
    return kind_ == other.kind_ && tile_dims_ == other.tile_dims_ && devices_ == other.devices_ &&
           replicate_last_ == other.replicate_last_;
  }
  bool operator!=(const Sharding& other) const { return !(*this == other); }

 private:
  // The tile index (one entry per tile dimension) of `device`; throws when it has none.
  std::vector<int64_t> TileIndexOf(int device) const;

  Kind kind_ = Kind::kReplicated;
  std::vector<int64_t> tile_dims_;  // per tile dimension, the replication group last
  std::vector<int64_t> devices_;    // device of each tile, row-major over tile_dims_
  bool replicate_last_ = false;
};

// Host data of a value split into per-device shards and back, for elements of
// `element_size` bytes, row-major. Shards are padded with zero bytes.
std::vector<std::string> SplitIntoShards(const void* data, std::size_t element_size,
                                         const std::vector<int64_t>& dims, const Sharding& sharding,
                                         int num_devices);
// Writes the value of `dims` from its per-device shards (each ShardDims(dims) elements,
// padding ignored) into `out`.
void AssembleFromShards(const std::vector<const void*>& shards, std::size_t element_size,
                        const std::vector<int64_t>& dims, const Sharding& sharding, void* out);

namespace spmd {
// Whether the process runs SPMD programs: set once (torch_xla.runtime.use_spmd()), never
// cleared. Then the user's device xla:0 stands for every device of the client, each
// graph is compiled once for all of them, and its values live as per-device shards.
bool Enabled();
void Enable();
}  // namespace spmd

}  // namespace torch_xla::runtime
