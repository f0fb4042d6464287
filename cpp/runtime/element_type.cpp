#include "runtime/element_type.h"

namespace torch_xla::runtime {

std::size_t ElementSize(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kU8:
      return 1;
    case ElementType::kS16:
    case ElementType::kU16:
    case ElementType::kF16:
    case ElementType::kBF16:
      return 2;
    case ElementType::kS32:
    case ElementType::kU32:
    case ElementType::kF32:
      return 4;
    case ElementType::kS64:
    case ElementType::kU64:
    case ElementType::kF64:
    case ElementType::kC64:
      return 8;
    case ElementType::kC128:
      return 16;
  }
  return 0;  // unreachable for valid enumerators
}

std::string_view MlirTypeName(ElementType type) {
  switch (type) {
    case ElementType::kPred: return "i1";
    case ElementType::kS8: return "i8";
    case ElementType::kS16: return "i16";
    case ElementType::kS32: return "i32";
    case ElementType::kS64: return "i64";
    case ElementType::kU8: return "ui8";
    case ElementType::kU16: return "ui16";
    case ElementType::kU32: return "ui32";
    case ElementType::kU64: return "ui64";
    case ElementType::kF16: return "f16";
    case ElementType::kBF16: return "bf16";
    case ElementType::kF32: return "f32";
    case ElementType::kF64: return "f64";
    case ElementType::kC64: return "complex<f32>";
    case ElementType::kC128: return "complex<f64>";
  }
  return "";  // unreachable for valid enumerators
}

bool IsFloating(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBF16 || type == ElementType::kF32 ||
         type == ElementType::kF64;
}

bool IsComplex(ElementType type) {
  return type == ElementType::kC64 || type == ElementType::kC128;
}

bool IsUnsigned(ElementType type) {
  return type == ElementType::kU8 || type == ElementType::kU16 || type == ElementType::kU32 ||
         type == ElementType::kU64;
}

}  // namespace torch_xla::runtime
