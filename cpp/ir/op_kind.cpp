#include "ir/op_kind.h"

#include <deque>
#include <mutex>
#include <unordered_map>

namespace torch_xla::ir {
namespace {

struct Interner {
  std::mutex mu;
  std::deque<std::string> names{"<none>"};  // deque: references stay valid as it grows
  std::unordered_map<std::string_view, uint32_t> ids;
};

Interner& GetInterner() {
  static Interner* interner = new Interner();
  return *interner;
}

}  // namespace

OpKind OpKind::Get(std::string_view name) {
  Interner& in = GetInterner();
  std::lock_guard<std::mutex> lock(in.mu);
  auto it = in.ids.find(name);
  if (it != in.ids.end()) return OpKind(it->second);
  in.names.emplace_back(name);
  uint32_t id = static_cast<uint32_t>(in.names.size() - 1);
  in.ids.emplace(in.names.back(), id);
  return OpKind(id);
}

const std::string& OpKind::name() const {
  Interner& in = GetInterner();
  std::lock_guard<std::mutex> lock(in.mu);
  return in.names[id_];
}

}  // namespace torch_xla::ir
