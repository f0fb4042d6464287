#pragma once
// A folder of compiled executables that outlives the process, so that a second run of a
// script loads its graphs instead of compiling them again.
//
// An entry is one file, <key>.xlaexe: a header (magic, key, payload size, payload
// checksum) and the plugin's serialized executable. Writes go to a temporary file that
// is renamed into place, so readers in other processes see whole entries or none. A
// file that is truncated, corrupt or holds another key reads as a miss and is removed
// (the caller compiles and stores the entry again). Reading an entry marks it used; when
// the folder grows past its limit, the least recently used entries go.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace torch_xla::runtime {

// A 128-bit content key.
struct CacheKey {
  uint64_t high = 0;
  uint64_t low = 0;
  // The key of `text` (two independent 64-bit hashes of it).
  static CacheKey Of(std::string_view text);
  std::string Hex() const;
  bool operator==(const CacheKey& o) const { return high == o.high && low == o.low; }
};

class PersistentCache {
 public:
  PersistentCache(std::string folder, bool read_only, uint64_t max_bytes);

  const std::string& folder() const { return folder_; }
  bool read_only() const { return read_only_; }

  // The payload stored under `key`, or nullopt (also for an entry that fails its checks,
  // which is removed unless the cache is read-only).
  std::optional<std::string> Load(const CacheKey& key);
  // Stores `payload` under `key` (nothing when read-only); I/O errors are swallowed: the
  // cache is an optimization, never a reason to fail.
  void Store(const CacheKey& key, std::string_view payload);
  // Removes the entry of `key` (a payload the caller could not use).
  void Remove(const CacheKey& key);

 private:
  std::string PathOf(const CacheKey& key) const;
  void EvictBeyondLimit();

  std::string folder_;
  bool read_only_;
  uint64_t max_bytes_;
  std::mutex mu_;  // one eviction at a time in this process
};

// The process-wide cache: from $XLA_PERSISTENT_CACHE_PATH (a folder; "0" or empty
// disables it), else $XDG_CACHE_HOME/torch_xla or ~/.cache/torch_xla, read-only when
// $XLA_PERSISTENT_CACHE_READ_ONLY is 1, at most $XLA_PERSISTENT_CACHE_MAX_MB megabytes
// (default 1024). Null when disabled, or when the folder cannot be created.
std::shared_ptr<PersistentCache> ActivePersistentCache();
// Replaces it (torch_xla.runtime.initialize_cache): `folder` empty disables the cache.
void SetPersistentCache(const std::string& folder, bool read_only);

}  // namespace torch_xla::runtime
