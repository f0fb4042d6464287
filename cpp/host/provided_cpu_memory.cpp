#include "host/provided_cpu_memory.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <algorithm>

namespace torch_xla {
namespace {

thread_local std::span<ProvidedBlock> offered;

void KeepProvided(void*) {}  // the block belongs to the caller of the scope

c10::DeleterFnPtr next_raw_deleter = nullptr;

// oneDNN's engine allocates through raw_allocate and frees through raw_deallocate, both
// of which come here: a block the scope lent stays, anything else goes to the allocator
// it came from.
void RawFree(void* pointer) {
  for (const ProvidedBlock& block : offered) {
    if (block.taken && block.memory == pointer) return;
  }
  next_raw_deleter(pointer);
}

// PyTorch's CPU allocator with the offer of the current thread's scope in front: every
// other allocation, and every raw one (whose deleter frees), goes to the allocator that
// was set before.
class OfferingAllocator final : public c10::Allocator {
 public:
  explicit OfferingAllocator(c10::Allocator* next) : next_(next) {}

  c10::DataPtr allocate(std::size_t n) override {
    for (ProvidedBlock& block : offered) {
      if (!block.taken && block.bytes == n) {
        if (block.passed < block.skip) {
          c10::DataPtr elsewhere = next_->allocate(n);
          if (block.passed < ProvidedBlock::kRecorded) block.passed_memory[block.passed] = elsewhere.get();
          ++block.passed;
          return elsewhere;
        }
        block.taken = true;
        // The context is the pointer itself, as raw_allocate requires of every allocation.
        return {block.memory, block.memory, &KeepProvided, c10::Device(c10::DeviceType::CPU)};
      }
    }
    return next_->allocate(n);
  }
  c10::DeleterFnPtr raw_deleter() const override { return next_raw_deleter != nullptr ? &RawFree : nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    next_->copy_data(dest, src, count);
  }

 private:
  c10::Allocator* next_;
};

// Installed once, in front of whatever CPU allocator is set, at a priority above
// PyTorch's default; false where one of higher priority keeps its place.
bool Installed() {
  static const bool installed = [] {
    c10::Allocator* current = c10::GetAllocator(c10::DeviceType::CPU);
    next_raw_deleter = current->raw_deleter();
    static OfferingAllocator offering(current);
    c10::SetAllocator(c10::DeviceType::CPU, &offering, /*priority=*/1);
    return c10::GetAllocator(c10::DeviceType::CPU) == &offering;
  }();
  return installed;
}

}  // namespace

bool ProvidedCpuMemory::Install() { return Installed(); }

int ProvidedBlock::ResultOrdinal(const void* result) const {
  for (int i = std::min(passed, kRecorded) - 1; i >= 0; --i) {
    if (passed_memory[i] == result) return i;
  }
  return -1;
}

ProvidedCpuMemory::ProvidedCpuMemory(std::span<ProvidedBlock> blocks) : previous_(offered) {
  if (Installed()) offered = blocks;
}

ProvidedCpuMemory::~ProvidedCpuMemory() { offered = previous_; }

}  // namespace torch_xla
