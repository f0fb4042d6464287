#pragma once
// Values kept by key across steps, shared by threads: what a step computes again each
// time it is traced or run (a host call's output shapes, where a kernel allocates its
// result, a scalar's device buffer). Programs whose keys change every step (shapes or
// values that differ each time) would grow such a map without bound, so it starts over
// once it holds kCapacity entries.
#include <cstddef>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace torch_xla::runtime {

template <typename Key, typename Value, typename Map = std::unordered_map<Key, Value>>
class BoundedMap {
 public:
  static constexpr std::size_t kCapacity = 4096;

  std::optional<Value> Find(const Key& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }

  // Keeps `value` for `key`, replacing what was kept for it.
  void Keep(Key key, Value value) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= kCapacity && entries_.find(key) == entries_.end()) entries_.clear();
    entries_.insert_or_assign(std::move(key), std::move(value));
  }

 private:
  mutable std::mutex mutex_;
  Map entries_;
};

}  // namespace torch_xla::runtime
