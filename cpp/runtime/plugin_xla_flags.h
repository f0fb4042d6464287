#pragma once
// XLA options the runtime turns on for a plugin by its device kind. A plugin reads XLA's
// debug options from the XLA_FLAGS environment variable when it first needs them; the
// PJRT C API has no other way to set them, so the defaults are appended to that variable
// before the plugin is loaded. A flag the user's XLA_FLAGS names already is left as the
// user set it.
#include <string>

namespace torch_xla::runtime::internal {

// Appends to XLA_FLAGS each default flag of `device_kind` ("CPU", "CUDA") it does not
// name. Call before loading that kind's plugin (XLA rejects flags it does not know, and
// each kind's defaults are flags of its own compiler).
void AddDefaultXlaFlags(const std::string& device_kind);

}  // namespace torch_xla::runtime::internal
