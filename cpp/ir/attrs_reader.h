#pragma once
// Helpers of the attribute structs' ToAttrs and FromAttrs (ir/builder*.h): a struct
// writes its fields one after another into Attrs::ints, and reads them back in the same
// order with an IntsReader, which checks that the values are there.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/node.h"

namespace torch_xla::ir {

// Appends `list` to `ints`.
inline void AppendInts(std::vector<int64_t>& ints, const std::vector<int64_t>& list) {
  ints.insert(ints.end(), list.begin(), list.end());
}

// Appends the length of `list`, then `list`.
inline void AppendCountedInts(std::vector<int64_t>& ints, const std::vector<int64_t>& list) {
  ints.push_back(static_cast<int64_t>(list.size()));
  AppendInts(ints, list);
}

// Reads the integer attributes of a node of op `op` front to back. A read past the end,
// a negative count, values left at Finish() or floating attributes (which no op read
// with it has) throw std::invalid_argument naming the op.
class IntsReader {
 public:
  IntsReader(const Attrs& attrs, const char* op) : ints_(attrs.ints), op_(op) {
    if (!attrs.floats.empty()) Malformed();
  }

  std::size_t left() const { return ints_.size() - pos_; }

  int64_t Next() {
    if (left() < 1) Malformed();
    return ints_[pos_++];
  }
  // The next `count` values.
  std::vector<int64_t> Take(int64_t count) {
    if (count < 0 || static_cast<std::size_t>(count) > left()) Malformed();
    std::vector<int64_t> list(ints_.begin() + static_cast<std::ptrdiff_t>(pos_),
                              ints_.begin() + static_cast<std::ptrdiff_t>(pos_ + count));
    pos_ += static_cast<std::size_t>(count);
    return list;
  }
  // A count, then that many values (AppendCountedInts).
  std::vector<int64_t> TakeCounted() { return Take(Next()); }
  // Every value not read yet.
  std::vector<int64_t> TakeRest() { return Take(static_cast<int64_t>(left())); }

  // Throws unless every value was read.
  void Finish() const {
    if (left() != 0) Malformed();
  }
  [[noreturn]] void Malformed() const {
    throw std::invalid_argument(std::string(op_) + ": malformed node attributes (" + std::to_string(ints_.size()) +
                                " integers)");
  }

 private:
  const std::vector<int64_t>& ints_;
  const char* op_;
  std::size_t pos_ = 0;
};

}  // namespace torch_xla::ir
