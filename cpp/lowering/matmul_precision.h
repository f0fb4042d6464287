#pragma once
// The precision of float32 matrix products and convolutions, process-wide, as
// torch_xla.backends.set_mat_mul_precision sets it: 'default' lets the device use its
// fastest float32 arithmetic (TF32 tensor cores on NVIDIA GPUs), 'high' asks for more
// (TF32 or bfloat16_3x passes), 'highest' for full float32. The default is 'highest', as
// PyTorch's own float32 matmul on CUDA: a script moved to the XLA device computes what it
// computed before. The CPU device computes float32 in full whatever the setting, so its
// graphs carry no precision attribute and are the same under every setting (unless
// XLA_LOWERING_DEVICE_KIND has it lowered as another kind: runtime/client.h).
#include <cstdint>
#include <string>

namespace torch_xla::lowering {

enum class MatMulPrecision : uint8_t { kDefault = 0, kHigh = 1, kHighest = 2 };

void SetMatMulPrecision(MatMulPrecision precision);
MatMulPrecision GetMatMulPrecision();

// "default", "high" or "highest"; ParseMatMulPrecision throws std::invalid_argument
// naming the accepted values for anything else.
std::string MatMulPrecisionName(MatMulPrecision precision);
MatMulPrecision ParseMatMulPrecision(const std::string& name);

// The attribute that a dot_general or convolution of the current setting carries
// (", precision_config = [...]", to append to its attributes), or "" where it carries
// none (graphs lowered for the CPU device).
std::string PrecisionConfigAttribute();

// What the compiled graph depends on, for the computation cache's key: 0 for graphs
// lowered for the CPU device, else 1 + the setting.
uint64_t MatMulPrecisionKey();

}  // namespace torch_xla::lowering
