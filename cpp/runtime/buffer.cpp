#include <optional>
#include <utility>

#include "pjrt_c_api.h"
#include "runtime/client.h"
#include "runtime/host_block_cache.h"
#include "runtime/host_buffer_pool.h"
#include "runtime/live_api.h"
#include "runtime/pjrt_call.h"
#include "runtime/pjrt_event.h"

namespace torch_xla::runtime {

Buffer::Buffer(PJRT_Buffer* buffer, ElementType type, std::vector<int64_t> dims, int device)
    : buffer_(buffer), type_(type), dims_(std::move(dims)), device_(device) {}

std::shared_ptr<Buffer> Buffer::Sharded(std::vector<std::shared_ptr<Buffer>> shards, Sharding sharding,
                                        ElementType type, std::vector<int64_t> dims) {
  if (shards.empty()) throw RuntimeError("Buffer::Sharded: no shards");
  auto buffer = std::make_shared<Buffer>(nullptr, type, std::move(dims), 0);
  buffer->shards_ = std::move(shards);
  buffer->sharding_ = std::move(sharding);
  return buffer;
}

namespace {

// Whether `buffer` still waits for the execution that defines it; false for donated and
// deleted buffers (they free nothing) and where PJRT does not say.
bool DefinitionPending(const PJRT_Api* api, PJRT_Buffer* buffer) {
  auto deleted = PJRT_ARGS(PJRT_Buffer_IsDeleted_Args);
  deleted.buffer = buffer;
  if (PJRT_Error* error = api->PJRT_Buffer_IsDeleted(&deleted)) {
    internal::ConsumeError(api, error);
    return false;
  }
  if (deleted.is_deleted) return false;
  auto ready = PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args);
  ready.buffer = buffer;
  if (PJRT_Error* error = api->PJRT_Buffer_ReadyEvent(&ready)) {
    internal::ConsumeError(api, error);
    return false;
  }
  const std::optional<bool> is_ready = internal::EventIsReady(api, ready.event);
  internal::DestroyEvent(api, ready.event);
  return !is_ready.value_or(true);
}

}  // namespace

Buffer::~Buffer() {
  const PJRT_Api* api = internal::LiveApi();
  if (api == nullptr || buffer_ == nullptr) return;
  // An output dropped while its launch runs is freed by the plugin when the launch
  // completes: the buffer pool is told to expect it (host_buffer_pool.h). Asking PJRT
  // costs an event allocated and destroyed; a launch known complete needs no asking
  // (most drops: the gradients zero_grad frees, the inputs of the step before).
  if (internal::HostBufferPool* pool = internal::InstalledHostBufferPool();
      pool != nullptr && defining_launch_ > Client::LaunchesCompletedThrough()) {
    const std::size_t bytes = byte_size();
    if (bytes >= internal::HostBufferPool::kMinBytes && bytes < internal::HostBufferPool::kEndBytes &&
        DefinitionPending(api, buffer_)) {
      pool->ExpectRelease(bytes, defining_launch_);
    }
  }
  auto args = PJRT_ARGS(PJRT_Buffer_Destroy_Args);
  args.buffer = buffer_;
  // A destructor cannot throw; a failed destroy only releases its error.
  if (PJRT_Error* error = api->PJRT_Buffer_Destroy(&args)) internal::ConsumeError(api, error);
}

int64_t Buffer::element_count() const {
  int64_t count = 1;
  for (int64_t dim : dims_) count *= dim;
  return count;
}

std::size_t Buffer::byte_size() const {
  return static_cast<std::size_t>(element_count()) * ElementSize(type_);
}

namespace {
constexpr uint64_t kHoldChange = uint64_t{1} << 32;
constexpr uint64_t kHoldCountMask = kHoldChange - 1;
}  // namespace

void Buffer::CountExecutionHold(int delta) {
  execution_holds_.fetch_add(kHoldChange + static_cast<uint64_t>(static_cast<int64_t>(delta)),
                             std::memory_order_acq_rel);
}

long Buffer::ReferencesBesidesExecutions(const std::shared_ptr<Buffer>& buffer) {
  // A hold is counted after its reference exists and uncounted before its reference
  // goes: reading the count on both sides of use_count(), a reading between a new
  // reference and its count sees one reference too many, never one too few.
  for (;;) {
    const uint64_t before = buffer->execution_holds_.load(std::memory_order_acquire);
    const long references = buffer.use_count();
    if (buffer->execution_holds_.load(std::memory_order_acquire) != before) continue;
    return references - static_cast<long>(before & kHoldCountMask);
  }
}

bool Buffer::IsDeleted() const {
  if (is_sharded()) {
    for (const std::shared_ptr<Buffer>& shard : shards_)
      if (shard->IsDeleted()) return true;
    return false;
  }
  const PJRT_Api* api = internal::LiveApi();
  if (api == nullptr || buffer_ == nullptr) return true;
  auto args = PJRT_ARGS(PJRT_Buffer_IsDeleted_Args);
  args.buffer = buffer_;
  PJRT_CALL(api, PJRT_Buffer_IsDeleted, args);
  return args.is_deleted;
}

void Buffer::Await() const {
  if (is_sharded()) {
    for (const std::shared_ptr<Buffer>& shard : shards_) shard->Await();
    return;
  }
  const PJRT_Api* api = internal::LiveApi();
  if (api == nullptr) throw RuntimeError("Buffer::Await: the PJRT client was shut down");
  auto args = PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args);
  args.buffer = buffer_;
  PJRT_CALL(api, PJRT_Buffer_ReadyEvent, args);
  internal::AwaitAndDestroyEvent(api, args.event);
  AwaitExecutionTiming();
}

}  // namespace torch_xla::runtime
