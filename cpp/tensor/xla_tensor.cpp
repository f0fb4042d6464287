#include "tensor/xla_tensor.h"

#include <atomic>

#include "runtime/metrics.h"

namespace torch_xla {
namespace {

// The layout of a graph's result that XLA laid out replicated: such a tensor reports
// "{replicated}" (torch_xla does; data moved from the host reports none). Known by its
// identity, so that an update of the tensor leaves its next layout to XLA again, as for
// any result.
const std::shared_ptr<const runtime::Sharding>& ResultReplicated() {
  static const std::shared_ptr<const runtime::Sharding> replicated =
      std::make_shared<const runtime::Sharding>(runtime::Sharding::Replicated());
  return replicated;
}

// Pending tensors of each device in an intrusive doubly-linked list, appended at
// registration, so iteration follows the order tensors became pending and
// registering costs no allocation (it happens for almost every traced op).
struct PendingList {
  XlaTensor* head = nullptr;
  XlaTensor* tail = nullptr;
};

struct PendingRegistry {
  std::mutex mu;
  std::vector<PendingList> by_device;

  PendingList& List(int device) {
    if (device >= static_cast<int>(by_device.size())) by_device.resize(device + 1);
    return by_device[device];
  }
};

PendingRegistry& Registry() {
  static PendingRegistry* registry = new PendingRegistry();
  return *registry;
}

uint64_t NextId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

XlaTensor::XlaTensor(int device, ir::Shape shape) : device_(device), shape_(std::move(shape)), id_(NextId()) {
  static metrics::Counter* created = metrics::GetCounter("CreateXlaTensor");
  created->Add();
}

// The last owner is going away, so no other thread can change linked_ any more (the
// reference count's release ordering makes their last write visible here).
XlaTensor::~XlaTensor() {
  static metrics::Counter* destroyed = metrics::GetCounter("DestroyXlaTensor");
  destroyed->Add();
  if (linked_) Unregister();
}

// make_shared needs a public constructor; one allocation holds tensor and refcount.
struct XlaTensor::Constructible : XlaTensor {
  Constructible(int device, ir::Shape shape) : XlaTensor(device, std::move(shape)) {}
};

void XlaTensor::Register() {
  PendingRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (linked_) return;
  linked_ = true;
  PendingList& list = r.List(device_);
  pending_prev_ = list.tail;
  pending_next_ = nullptr;
  if (list.tail) list.tail->pending_next_ = this;
  else list.head = this;
  list.tail = this;
}

void XlaTensor::Unregister() {
  PendingRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!linked_) return;
  linked_ = false;
  PendingList& list = r.List(device_);
  if (pending_prev_) pending_prev_->pending_next_ = pending_next_;
  else list.head = pending_next_;
  if (pending_next_) pending_next_->pending_prev_ = pending_prev_;
  else list.tail = pending_prev_;
  pending_prev_ = pending_next_ = nullptr;
}

XlaTensorPtr XlaTensor::FromBuffer(runtime::BufferPtr buffer) {
  ir::Shape shape(buffer->type(), buffer->dims());
  XlaTensorPtr t = std::make_shared<Constructible>(buffer->device(), std::move(shape));
  t->buffer_ = std::move(buffer);
  return t;
}

XlaTensorPtr XlaTensor::FromIr(ir::Value value, int device) {
  XlaTensorPtr t = std::make_shared<Constructible>(device, value.shape());
  // Nothing else can see the new tensor yet: no need for SetIr's locking.
  if (value.node->leaf_kind() == ir::LeafKind::kDeviceData) {
    t->buffer_ = value.node->buffer();
    t->data_leaf_ = std::move(value);
  } else {
    t->ir_ = std::move(value);
    t->Register();
  }
  return t;
}

ir::Value XlaTensor::GetIrValue() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (ir_) return ir_;
  if (!data_leaf_) data_leaf_ = ir::Value(ir::Node::DeviceData(buffer_));
  return data_leaf_;
}

ir::Value XlaTensor::pending_ir() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ir_;
}

runtime::BufferPtr XlaTensor::buffer() const {
  std::lock_guard<std::mutex> lock(mu_);
  return buffer_;
}

bool XlaTensor::is_pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<bool>(ir_);
}

void XlaTensor::SetBuffer(runtime::BufferPtr buffer) {
  bool was_pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_pending = static_cast<bool>(ir_);
    ir_ = ir::Value();
    buffer_ = std::move(buffer);
    data_leaf_ = ir::Value();
    updated_buffer_.reset();
    if (was_pending && !sharding_ && buffer_ && buffer_->is_sharded() && buffer_->sharding().is_replicated())
      sharding_ = ResultReplicated();
  }
  if (was_pending) Unregister();
}

void XlaTensor::SetIr(ir::Value value) {
  // A value that is just a device-data leaf is data, not pending work.
  if (value.node->leaf_kind() == ir::LeafKind::kDeviceData) {
    SetBuffer(value.node->buffer());
    std::lock_guard<std::mutex> lock(mu_);
    data_leaf_ = value;
    if (sharding_ == ResultReplicated()) sharding_.reset();  // an alias of data, not a result
    return;
  }
  bool was_pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_pending = static_cast<bool>(ir_);
    if (sharding_ == ResultReplicated()) sharding_.reset();
    ir_ = std::move(value);
    // An update of held data updates its buffer; a pending tensor keeps what it updates,
    // and the layout of that data.
    if (buffer_) updated_buffer_ = buffer_;
    if (!sharding_ && buffer_ && buffer_->is_sharded() && !buffer_->sharding().is_replicated())
      sharding_ = std::make_shared<const runtime::Sharding>(buffer_->sharding());
    buffer_.reset();
    data_leaf_ = ir::Value();
  }
  // A pending tensor is linked, unless its device's list was forgotten.
  if (!was_pending || !linked_.load(std::memory_order_relaxed)) Register();
}

std::weak_ptr<runtime::Buffer> XlaTensor::updated_buffer() const {
  std::lock_guard<std::mutex> lock(mu_);
  return updated_buffer_;
}

void XlaTensor::UpdatesBufferOf(const XlaTensor& source) {
  if (&source == this) return;
  std::weak_ptr<runtime::Buffer> updated;
  {
    std::lock_guard<std::mutex> lock(source.mu_);
    updated = source.buffer_ ? std::weak_ptr<runtime::Buffer>(source.buffer_) : source.updated_buffer_;
  }
  std::shared_ptr<const runtime::Sharding> layout = source.sharding();
  if (layout == ResultReplicated()) layout.reset();
  std::lock_guard<std::mutex> lock(mu_);
  if (ir_) updated_buffer_ = std::move(updated);
  if (!sharding_) sharding_ = std::move(layout);
}

std::shared_ptr<const runtime::Sharding> XlaTensor::sharding() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (sharding_) return sharding_;
  if (buffer_ && buffer_->is_sharded() && !buffer_->sharding().is_replicated())
    return std::make_shared<const runtime::Sharding>(buffer_->sharding());
  return nullptr;
}

void XlaTensor::SetSharding(std::shared_ptr<const runtime::Sharding> sharding) {
  std::lock_guard<std::mutex> lock(mu_);
  sharding_ = std::move(sharding);
}

std::vector<XlaTensorPtr> PendingTensors(int device) {
  PendingRegistry& r = Registry();
  std::vector<XlaTensorPtr> out;
  std::lock_guard<std::mutex> lock(r.mu);
  if (device >= static_cast<int>(r.by_device.size())) return out;
  for (XlaTensor* t = r.by_device[device].head; t != nullptr; t = t->pending_next_) {
    // A tensor whose last reference is going away is still linked until its
    // destructor unlinks it (under this mutex); lock() returns null for it.
    if (XlaTensorPtr p = t->weak_from_this().lock()) out.push_back(std::move(p));
  }
  return out;
}

void ForgetPendingTensors(int device) {
  PendingRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (device >= static_cast<int>(r.by_device.size())) return;
  PendingList& list = r.by_device[device];
  for (XlaTensor* t = list.head; t != nullptr;) {
    XlaTensor* next = t->pending_next_;
    t->pending_prev_ = t->pending_next_ = nullptr;
    t->linked_ = false;
    t = next;
  }
  list.head = list.tail = nullptr;
}

std::vector<int> DevicesWithPendingTensors() {
  PendingRegistry& r = Registry();
  std::vector<int> out;
  std::lock_guard<std::mutex> lock(r.mu);
  for (std::size_t device = 0; device < r.by_device.size(); ++device)
    if (r.by_device[device].head) out.push_back(static_cast<int>(device));
  return out;
}

}  // namespace torch_xla
