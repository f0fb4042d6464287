#pragma once
// Element types of device buffers, independent of PyTorch and of PJRT's enum.
#include <cstddef>
#include <string_view>

namespace torch_xla::runtime {

enum class ElementType : unsigned char {
  kPred, kS8, kS16, kS32, kS64, kU8, kU16, kU32, kU64,
  kF16, kBF16, kF32, kF64, kC64, kC128,
};

// Bytes per element (kPred is stored as one byte).
std::size_t ElementSize(ElementType type);
// The MLIR spelling used in StableHLO tensor types: i1, i32, ui8, bf16, f32, complex<f32>...
std::string_view MlirTypeName(ElementType type);
bool IsFloating(ElementType type);
bool IsComplex(ElementType type);
bool IsUnsigned(ElementType type);

}  // namespace torch_xla::runtime
