// The offer of a result's memory to PyTorch's CPU allocations (host/provided_cpu_memory.h),
// which host ATen calls use for mkldnn_rnn_layer's workspace (tested end to end in
// test_py/ops/test_host_lstm.py).
#include "host/provided_cpu_memory.h"

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace torch_xla {
namespace {

TEST(ProvidedCpuMemoryTest, FirstAllocationOfTheSizeGetsTheBlockOnce) {
  ASSERT_TRUE(ProvidedCpuMemory::Install());
  alignas(64) static float memory[256];
  std::vector<ProvidedBlock> blocks{{memory, sizeof memory}};
  at::Tensor other, first, second;
  {
    ProvidedCpuMemory scope(blocks);
    other = at::empty({255});  // another size: new memory
    first = at::empty({256});
    second = at::empty({256});  // the block is taken
  }
  EXPECT_NE(other.data_ptr(), static_cast<void*>(memory));
  EXPECT_EQ(first.data_ptr(), static_cast<void*>(memory));
  EXPECT_NE(second.data_ptr(), static_cast<void*>(memory));
  EXPECT_TRUE(blocks[0].taken);
  first.fill_(2.5f);
  EXPECT_EQ(memory[255], 2.5f);
  first.reset();  // freeing the lent block leaves it to its owner
  EXPECT_EQ(memory[0], 2.5f);
}

TEST(ProvidedCpuMemoryTest, AllocationsLetPassFirstAreRecordedAndTheResultFoundAmongThem) {
  ASSERT_TRUE(ProvidedCpuMemory::Install());
  alignas(64) static float memory[128];
  // Learning: every allocation of the size passes and is recorded. The first is freed
  // before the third, which may then reuse its address: the result is the last there.
  std::vector<ProvidedBlock> learn{{memory, sizeof memory}};
  learn[0].skip = ProvidedBlock::kRecorded;
  at::Tensor kept, result;
  {
    ProvidedCpuMemory scope(learn);
    at::Tensor scratch = at::empty({128});
    kept = at::empty({128});
    scratch.reset();
    result = at::empty({128});
  }
  EXPECT_FALSE(learn[0].taken);
  EXPECT_EQ(learn[0].passed, 3);
  EXPECT_EQ(learn[0].ResultOrdinal(kept.data_ptr()), 1);
  EXPECT_EQ(learn[0].ResultOrdinal(result.data_ptr()), 2);
  EXPECT_EQ(learn[0].ResultOrdinal(memory), -1);

  // Offering to the third allocation of the size.
  std::vector<ProvidedBlock> offer{{memory, sizeof memory}};
  offer[0].skip = 2;
  at::Tensor first, second, third;
  {
    ProvidedCpuMemory scope(offer);
    first = at::empty({128});
    second = at::empty({128});
    third = at::empty({128});
  }
  EXPECT_TRUE(offer[0].taken);
  EXPECT_NE(first.data_ptr(), static_cast<void*>(memory));
  EXPECT_NE(second.data_ptr(), static_cast<void*>(memory));
  EXPECT_EQ(third.data_ptr(), static_cast<void*>(memory));
}

TEST(ProvidedCpuMemoryTest, NothingIsOfferedOutsideTheScopeOrOnOtherThreads) {
  ASSERT_TRUE(ProvidedCpuMemory::Install());
  alignas(64) static float memory[64];
  std::vector<ProvidedBlock> blocks{{memory, sizeof memory}};
  at::Tensor before = at::empty({64});
  at::Tensor on_other_thread;
  {
    ProvidedCpuMemory scope(blocks);
    std::thread([&] { on_other_thread = at::empty({64}); }).join();
  }
  at::Tensor after = at::empty({64});
  EXPECT_NE(before.data_ptr(), static_cast<void*>(memory));
  EXPECT_NE(on_other_thread.data_ptr(), static_cast<void*>(memory));
  EXPECT_NE(after.data_ptr(), static_cast<void*>(memory));
  EXPECT_FALSE(blocks[0].taken);
}

TEST(ProvidedCpuMemoryTest, RawAllocationsOfOneDnnCanTakeTheBlockAndFreeIt) {
  // oneDNN's engine allocates through raw_allocate and frees through raw_deallocate.
  ASSERT_TRUE(ProvidedCpuMemory::Install());
  alignas(64) static char memory[4096];
  std::vector<ProvidedBlock> blocks{{memory, sizeof memory}};
  c10::Allocator* allocator = c10::GetAllocator(c10::DeviceType::CPU);
  ProvidedCpuMemory scope(blocks);
  void* lent = allocator->raw_allocate(sizeof memory);
  void* fresh = allocator->raw_allocate(sizeof memory);
  EXPECT_EQ(lent, static_cast<void*>(memory));
  EXPECT_NE(fresh, static_cast<void*>(memory));
  allocator->raw_deallocate(lent);   // a no-op
  allocator->raw_deallocate(fresh);  // freed by PyTorch's allocator
}

}  // namespace
}  // namespace torch_xla
