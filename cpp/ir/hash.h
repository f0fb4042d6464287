#pragma once
// Cheap 64-bit hash combination for structural graph hashing.
#include <cstdint>
#include <cstring>
#include <string_view>

namespace torch_xla::ir {

using hash_t = uint64_t;

inline hash_t HashCombine(hash_t seed, hash_t value) {
  // Mixing from splitmix64 keeps structurally different graphs apart.
  value += 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return seed ^ (value ^ (value >> 31));
}

inline hash_t HashDouble(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

inline hash_t HashString(std::string_view s) {
  hash_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

}  // namespace torch_xla::ir
