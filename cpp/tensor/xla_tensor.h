#pragma once
// The state of one lazy tensor on an XLA device: either device data (a PJRT buffer)
// or a pending IR value that a sync turns into device data. Every tensor with pending
// IR is registered with its device, so a sync can find all of them.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ir/node.h"
#include "runtime/client.h"

namespace torch_xla {

class XlaTensor;
using XlaTensorPtr = std::shared_ptr<XlaTensor>;

class XlaTensor : public std::enable_shared_from_this<XlaTensor> {
 public:
  static XlaTensorPtr FromBuffer(runtime::BufferPtr buffer);
  static XlaTensorPtr FromIr(ir::Value value, int device);
  ~XlaTensor();

  int device() const { return device_; }
  const ir::Shape& shape() const { return shape_; }
  uint64_t id() const { return id_; }

  // The IR value to use as an operand: the pending value, or a device-data leaf.
  ir::Value GetIrValue() const;
  // The pending IR value; empty when the tensor holds device data.
  ir::Value pending_ir() const;
  // The device buffer; null while the tensor is pending.
  runtime::BufferPtr buffer() const;
  bool is_pending() const;

  // Replaces the tensor's contents (a sync's output, or an in-place update).
  void SetBuffer(runtime::BufferPtr buffer);
  void SetIr(ir::Value value);

  // The device buffer whose data the pending value updates: the buffer the tensor held
  // before an in-place op made it pending, or, through functionalization (which gives
  // an updated tensor a new inner tensor), the one `source` held or updates. A sync
  // hands that buffer to this tensor's result when it may be donated, so that XLA
  // writes the update in place instead of into a new buffer plus copies. Empty when
  // the tensor updates nothing (a new value).
  std::weak_ptr<runtime::Buffer> updated_buffer() const;
  void UpdatesBufferOf(const XlaTensor& source);

  // SPMD: the layout the tensor's value has over the devices: the one the user set
  // (torch_xla.distributed.spmd.mark_sharding), else that of its sharded data, or of the
  // data it updates in place. Null: none (replicated).
  std::shared_ptr<const runtime::Sharding> sharding() const;
  void SetSharding(std::shared_ptr<const runtime::Sharding> sharding);

 private:
  struct Constructible;
  friend std::vector<XlaTensorPtr> PendingTensors(int device);
  friend void ForgetPendingTensors(int device);
  XlaTensor(int device, ir::Shape shape);
  // Links / unlinks the tensor in its device's list of pending tensors.
  void Register();
  void Unregister();

  const int device_;
  const ir::Shape shape_;
  const uint64_t id_;
  mutable std::mutex mu_;
  ir::Value ir_;                   // pending computation
  runtime::BufferPtr buffer_;      // materialized data
  mutable ir::Value data_leaf_;    // cached device-data leaf of buffer_
  std::weak_ptr<runtime::Buffer> updated_buffer_;  // see updated_buffer(); only while pending
  std::shared_ptr<const runtime::Sharding> sharding_;  // see sharding()
  XlaTensor* pending_prev_ = nullptr;  // links in the pending list (guarded by its mutex)
  XlaTensor* pending_next_ = nullptr;
  // Whether the tensor is in its device's pending list; changed under the list's mutex,
  // read without it as a hint (Register() checks again).
  std::atomic<bool> linked_{false};
};

// The tensors of a device that have pending IR, in creation order.
std::vector<XlaTensorPtr> PendingTensors(int device);
// Device ordinals that have pending tensors.
std::vector<int> DevicesWithPendingTensors();
// Empties the device's pending list: its tensors keep their pending values, which a
// sync of the device no longer includes; each is computed when it is used (synced
// alone), or joins the list again when it is updated. For the leftovers of replicas
// that ended: a next run's graphs must not take them in.
void ForgetPendingTensors(int device);

}  // namespace torch_xla
