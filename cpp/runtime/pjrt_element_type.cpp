#include "runtime/pjrt_element_type.h"

#include <string>

#include "runtime/client.h"

namespace torch_xla::runtime::internal {

PJRT_Buffer_Type ToPjrtType(ElementType type) {
  switch (type) {
    case ElementType::kPred: return PJRT_Buffer_Type_PRED;
    case ElementType::kS8: return PJRT_Buffer_Type_S8;
    case ElementType::kS16: return PJRT_Buffer_Type_S16;
    case ElementType::kS32: return PJRT_Buffer_Type_S32;
    case ElementType::kS64: return PJRT_Buffer_Type_S64;
    case ElementType::kU8: return PJRT_Buffer_Type_U8;
    case ElementType::kU16: return PJRT_Buffer_Type_U16;
    case ElementType::kU32: return PJRT_Buffer_Type_U32;
    case ElementType::kU64: return PJRT_Buffer_Type_U64;
    case ElementType::kF16: return PJRT_Buffer_Type_F16;
    case ElementType::kBF16: return PJRT_Buffer_Type_BF16;
    case ElementType::kF32: return PJRT_Buffer_Type_F32;
    case ElementType::kF64: return PJRT_Buffer_Type_F64;
    case ElementType::kC64: return PJRT_Buffer_Type_C64;
    case ElementType::kC128: return PJRT_Buffer_Type_C128;
  }
  throw RuntimeError("invalid ElementType " + std::to_string(static_cast<int>(type)));
}

ElementType FromPjrtType(PJRT_Buffer_Type type) {
  switch (type) {
    case PJRT_Buffer_Type_PRED: return ElementType::kPred;
    case PJRT_Buffer_Type_S8: return ElementType::kS8;
    case PJRT_Buffer_Type_S16: return ElementType::kS16;
    case PJRT_Buffer_Type_S32: return ElementType::kS32;
    case PJRT_Buffer_Type_S64: return ElementType::kS64;
    case PJRT_Buffer_Type_U8: return ElementType::kU8;
    case PJRT_Buffer_Type_U16: return ElementType::kU16;
    case PJRT_Buffer_Type_U32: return ElementType::kU32;
    case PJRT_Buffer_Type_U64: return ElementType::kU64;
    case PJRT_Buffer_Type_F16: return ElementType::kF16;
    case PJRT_Buffer_Type_BF16: return ElementType::kBF16;
    case PJRT_Buffer_Type_F32: return ElementType::kF32;
    case PJRT_Buffer_Type_F64: return ElementType::kF64;
    case PJRT_Buffer_Type_C64: return ElementType::kC64;
    case PJRT_Buffer_Type_C128: return ElementType::kC128;
    default:
      throw RuntimeError("unsupported PJRT buffer type " + std::to_string(static_cast<int>(type)));
  }
}

}  // namespace torch_xla::runtime::internal
