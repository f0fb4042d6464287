#include "runtime/persistent_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "runtime/metrics.h"

namespace torch_xla::runtime {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'T', 'X', 'L', 'A', 'E', 'X', 'E', '1'};
constexpr char kSuffix[] = ".xlaexe";
constexpr uint64_t kDefaultMaxMegabytes = 1024;

uint64_t Fnv1a(std::string_view bytes, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t Mix(uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Header {
  char magic[8];
  uint64_t key_high;
  uint64_t key_low;
  uint64_t payload_size;
  uint64_t payload_checksum;
};

uint64_t Checksum(std::string_view payload) { return Mix(Fnv1a(payload, 0xcbf29ce484222325ull) ^ payload.size()); }

void Count(const char* name) { metrics::GetCounter(name)->Add(); }

struct Global {
  std::mutex mu;
  bool configured = false;
  std::shared_ptr<PersistentCache> cache;
};

Global& GetGlobal() {
  static Global* global = new Global;
  return *global;
}

uint64_t MaxBytes() {
  const char* text = std::getenv("XLA_PERSISTENT_CACHE_MAX_MB");
  uint64_t megabytes = kDefaultMaxMegabytes;
  if (text != nullptr && *text != '\0') {
    char* end = nullptr;
    unsigned long long value = std::strtoull(text, &end, 10);
    if (*end == '\0') megabytes = value;
  }
  return megabytes << 20;
}

std::string DefaultFolder() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return std::string(xdg) + "/torch_xla";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return std::string(home) + "/.cache/torch_xla";
  return "";
}

std::shared_ptr<PersistentCache> Open(const std::string& folder, bool read_only) {
  if (folder.empty() || folder == "0") return nullptr;
  std::error_code error;
  fs::create_directories(folder, error);
  if (!fs::is_directory(folder, error)) return nullptr;  // nowhere to keep it: no cache
  return std::make_shared<PersistentCache>(folder, read_only, MaxBytes());
}

}  // namespace

CacheKey CacheKey::Of(std::string_view text) {
  return CacheKey{Mix(Fnv1a(text, 0xcbf29ce484222325ull)), Mix(Fnv1a(text, 0x84222325cbf29ce4ull) + text.size())};
}

std::string CacheKey::Hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return buf;
}

PersistentCache::PersistentCache(std::string folder, bool read_only, uint64_t max_bytes)
    : folder_(std::move(folder)), read_only_(read_only), max_bytes_(max_bytes) {}

std::string PersistentCache::PathOf(const CacheKey& key) const { return folder_ + "/" + key.Hex() + kSuffix; }

std::optional<std::string> PersistentCache::Load(const CacheKey& key) {
  std::string path = PathOf(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    Count("PersistentCacheMiss");
    return std::nullopt;
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  std::string data = contents.str();
  Header header;
  bool whole = data.size() >= sizeof header;
  if (whole) std::memcpy(&header, data.data(), sizeof header);
  std::string_view payload = whole ? std::string_view(data).substr(sizeof header) : std::string_view();
  if (!whole || std::memcmp(header.magic, kMagic, sizeof kMagic) != 0 || header.key_high != key.high ||
      header.key_low != key.low || header.payload_size != payload.size() ||
      header.payload_checksum != Checksum(payload)) {
    Count("PersistentCacheCorrupt");
    Count("PersistentCacheMiss");
    if (!read_only_) std::remove(path.c_str());
    return std::nullopt;
  }
  if (!read_only_) utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // used now, for the eviction order
  Count("PersistentCacheHit");
  return std::string(payload);
}

void PersistentCache::Store(const CacheKey& key, std::string_view payload) {
  if (read_only_) return;
  Header header;
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.key_high = key.high;
  header.key_low = key.low;
  header.payload_size = payload.size();
  header.payload_checksum = Checksum(payload);
  std::ostringstream name;
  name << folder_ << "/." << key.Hex() << "." << getpid() << "." << std::this_thread::get_id() << ".tmp";
  std::string temporary = name.str();
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&header), sizeof header);
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    if (!out) {
      out.close();
      std::remove(temporary.c_str());
      return;
    }
  }
  if (std::rename(temporary.c_str(), PathOf(key).c_str()) != 0) {
    std::remove(temporary.c_str());
    return;
  }
  Count("PersistentCacheStore");
  EvictBeyondLimit();
}

void PersistentCache::Remove(const CacheKey& key) {
  if (!read_only_) std::remove(PathOf(key).c_str());
}

void PersistentCache::EvictBeyondLimit() {
  std::lock_guard<std::mutex> lock(mu_);
  struct Entry {
    fs::file_time_type used;
    uint64_t size;
    fs::path path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code error;
  for (const fs::directory_entry& e : fs::directory_iterator(folder_, error)) {
    if (e.path().extension() != kSuffix) continue;
    std::error_code stat_error;
    uint64_t size = e.file_size(stat_error);
    fs::file_time_type used = e.last_write_time(stat_error);
    if (stat_error) continue;  // removed meanwhile by another process
    entries.push_back({used, size, e.path()});
    total += size;
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  // Down to 90% of the limit, so that the next stores do not each evict again.
  for (const Entry& e : entries) {
    if (total <= max_bytes_ / 10 * 9) break;
    if (fs::remove(e.path, error)) {
      total -= e.size;
      Count("PersistentCacheEvicted");
    }
  }
}

std::shared_ptr<PersistentCache> ActivePersistentCache() {
  Global& global = GetGlobal();
  std::lock_guard<std::mutex> lock(global.mu);
  if (!global.configured) {
    global.configured = true;
    const char* path = std::getenv("XLA_PERSISTENT_CACHE_PATH");
    const char* read_only = std::getenv("XLA_PERSISTENT_CACHE_READ_ONLY");
    global.cache = Open(path != nullptr ? std::string(path) : DefaultFolder(),
                        read_only != nullptr && std::string(read_only) == "1");
  }
  return global.cache;
}

void SetPersistentCache(const std::string& folder, bool read_only) {
  Global& global = GetGlobal();
  std::lock_guard<std::mutex> lock(global.mu);
  global.configured = true;
  global.cache = Open(folder, read_only);
}

}  // namespace torch_xla::runtime
