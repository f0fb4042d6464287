#include "runtime/live_api.h"

#include <atomic>

namespace torch_xla::runtime::internal {
namespace {

std::atomic<const PJRT_Api*> live_api{nullptr};

}  // namespace

const PJRT_Api* LiveApi() { return live_api.load(std::memory_order_acquire); }

void SetLiveApi(const PJRT_Api* api) { live_api.store(api, std::memory_order_release); }

}  // namespace torch_xla::runtime::internal
