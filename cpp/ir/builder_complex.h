#pragma once
// Constructors of the IR ops on complex numbers: their parts (stablehlo.real / imag)
// and the Fourier transforms (stablehlo.fft). stablehlo.complex, which joins two parts,
// is ir::Complex in ir/builder.h. Like ir/builder.h, every function checks its inputs
// and throws std::invalid_argument naming the op and the shapes.
#include <vector>

#include "ir/builder.h"

namespace torch_xla::ir {

// The real type of a complex type's parts (c64 -> f32, c128 -> f64), and the complex
// type with parts of a real type (f32 -> c64, f64 -> c128). Other types throw.
ElementType PartType(ElementType complex_type);
ElementType ComplexTypeOf(ElementType part_type);

// The real / imaginary parts of a complex value (f32 for c64, f64 for c128).
Value Real(const Value& v);
Value Imag(const Value& v);

// stablehlo.fft over the innermost fft_length.size() dimensions (1 to 3):
//   kFft    complex -> complex, unnormalized forward transform
//   kIfft   complex -> complex, inverse transform divided by the product of the lengths
//   kRfft   real -> complex: the forward transform of real input; the innermost
//           dimension of the result keeps its first length / 2 + 1 entries (the others
//           are their conjugates)
//   kIrfft  complex -> real: the inverse of kRfft (divided by the product of the
//           lengths); the operand's innermost dimension must be length / 2 + 1
// For kFft, kIfft and kRfft the operand's innermost dimensions equal the lengths; for
// kIrfft all but the innermost do.
enum class FftType : int64_t { kFft = 0, kIfft = 1, kRfft = 2, kIrfft = 3 };
Value Fft(FftType type, const Value& v, const std::vector<int64_t>& lengths);

// The attributes of a stablehlo.fft node (ToAttrs / FromAttrs as in ir/builder.h).
struct FftAttrs {
  FftType type = FftType::kFft;
  std::vector<int64_t> lengths;  // fft_length, innermost dimension last
  Attrs ToAttrs() const;
  static FftAttrs FromAttrs(const Attrs& attrs);
};

}  // namespace torch_xla::ir
