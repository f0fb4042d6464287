#pragma once
// Internal: the API table of the process-wide client while it exists. Buffers and
// executables release their PJRT handles through it; after Client::Shutdown it is null and
// they leak those handles instead of touching a destroyed client.
struct PJRT_Api;

namespace torch_xla::runtime::internal {

const PJRT_Api* LiveApi();
void SetLiveApi(const PJRT_Api* api);

}  // namespace torch_xla::runtime::internal
