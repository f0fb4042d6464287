#pragma once
// XLA options the runtime turns on for the CPU plugin. The plugin reads XLA's debug
// options from the XLA_FLAGS environment variable when it first needs them; the PJRT C
// API has no other way to set them, so the defaults are appended to that variable
// before the plugin is loaded. A flag the user's XLA_FLAGS names already is left as the
// user set it.
namespace torch_xla::runtime::internal {

// Appends to XLA_FLAGS each default flag it does not name. Call before loading the CPU
// plugin (other plugins may not know these flags, and XLA rejects unknown ones).
void AddDefaultCpuXlaFlags();

}  // namespace torch_xla::runtime::internal
