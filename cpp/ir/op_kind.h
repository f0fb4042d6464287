#pragma once
// Interned operation names ("aten::add", "xla::device_data"). Comparing and hashing an
// OpKind is an integer operation; the name is looked up only for lowering and messages.
#include <cstdint>
#include <string>
#include <string_view>

namespace torch_xla::ir {

class OpKind {
 public:
  OpKind() = default;
  // Interns `name` (thread-safe); call once and keep the result, e.g. in a static.
  static OpKind Get(std::string_view name);
  uint32_t id() const { return id_; }
  const std::string& name() const;
  bool operator==(OpKind other) const { return id_ == other.id_; }
  bool operator!=(OpKind other) const { return id_ != other.id_; }

 private:
  explicit OpKind(uint32_t id) : id_(id) {}
  uint32_t id_ = 0;
};

}  // namespace torch_xla::ir
