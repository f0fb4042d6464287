// PyTorch's CPU kernels run inside compiled graphs as host kernels (host/aten_ops.cpp).
#pragma once

namespace torch_xla {

// True on the CPU device, where graphs may call PyTorch's CPU kernels; registers the
// host kernel on first use. False elsewhere (those ops then use the CPU fallback).
bool HostAtenAvailable();

}  // namespace torch_xla
