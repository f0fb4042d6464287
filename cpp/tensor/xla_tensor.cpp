#include "tensor/xla_tensor.h"

#include <atomic>
#include <map>
#include <unordered_map>

namespace torch_xla {
namespace {

// Pending tensors by device, keyed by id so iteration follows creation order.
struct PendingRegistry {
  std::mutex mu;
  std::unordered_map<int, std::map<uint64_t, std::weak_ptr<XlaTensor>>> by_device;
};

PendingRegistry& Registry() {
  static PendingRegistry* registry = new PendingRegistry();
  return *registry;
}

void Register(const XlaTensorPtr& tensor) {
  PendingRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.by_device[tensor->device()][tensor->id()] = tensor;
}

void Unregister(int device, uint64_t id) {
  PendingRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_device.find(device);
  if (it != r.by_device.end()) it->second.erase(id);
}

uint64_t NextId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

XlaTensor::XlaTensor(int device, ir::Shape shape) : device_(device), shape_(std::move(shape)), id_(NextId()) {}

XlaTensor::~XlaTensor() {
  if (ir_) Unregister(device_, id_);
}

XlaTensorPtr XlaTensor::FromBuffer(runtime::BufferPtr buffer) {
  ir::Shape shape(buffer->type(), buffer->dims());
  XlaTensorPtr t(new XlaTensor(buffer->device(), std::move(shape)));
  t->buffer_ = std::move(buffer);
  return t;
}

XlaTensorPtr XlaTensor::FromIr(ir::Value value, int device) {
  XlaTensorPtr t(new XlaTensor(device, value.shape()));
  t->SetIr(std::move(value));
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
  }
  if (was_pending) Unregister(device_, id_);
}

void XlaTensor::SetIr(ir::Value value) {
  // A value that is just a device-data leaf is data, not pending work.
  if (value.node->leaf_kind() == ir::LeafKind::kDeviceData) {
    SetBuffer(value.node->buffer());
    std::lock_guard<std::mutex> lock(mu_);
    data_leaf_ = value;
    return;
  }
  bool was_pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_pending = static_cast<bool>(ir_);
    ir_ = std::move(value);
    buffer_.reset();
    data_leaf_ = ir::Value();
  }
  if (!was_pending) Register(shared_from_this());
}

std::vector<XlaTensorPtr> PendingTensors(int device) {
  PendingRegistry& r = Registry();
  std::vector<XlaTensorPtr> out;
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_device.find(device);
  if (it == r.by_device.end()) return out;
  for (auto& [id, weak] : it->second)
    if (XlaTensorPtr t = weak.lock()) out.push_back(std::move(t));
  return out;
}

std::vector<int> DevicesWithPendingTensors() {
  PendingRegistry& r = Registry();
  std::vector<int> out;
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& [device, tensors] : r.by_device)
    if (!tensors.empty()) out.push_back(device);
  return out;
}

}  // namespace torch_xla
