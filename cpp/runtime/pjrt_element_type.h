#pragma once
// Internal: mapping between ElementType and PJRT's buffer type enum, kept out of
// element_type.h so that header does not depend on pjrt_c_api.h.
#include "pjrt_c_api.h"
#include "runtime/element_type.h"

namespace torch_xla::runtime::internal {

PJRT_Buffer_Type ToPjrtType(ElementType type);
// Throws RuntimeError for PJRT types this runtime does not represent (fp8, int4, token...).
ElementType FromPjrtType(PJRT_Buffer_Type type);

}  // namespace torch_xla::runtime::internal
