#include "host/cpu_tensor.h"

#include <ATen/ATen.h>

namespace torch_xla::host {

at::ScalarType ScalarTypeOf(runtime::ElementType type) {
  using runtime::ElementType;
  switch (type) {
    case ElementType::kPred: return at::kBool;
    case ElementType::kU8: return at::kByte;
    case ElementType::kS8: return at::kChar;
    case ElementType::kS16: return at::kShort;
    case ElementType::kS32: return at::kInt;
    case ElementType::kS64: return at::kLong;
    case ElementType::kF16: return at::kHalf;
    case ElementType::kBF16: return at::kBFloat16;
    case ElementType::kF32: return at::kFloat;
    case ElementType::kF64: return at::kDouble;
    case ElementType::kC64: return at::kComplexFloat;
    case ElementType::kC128: return at::kComplexDouble;
    case ElementType::kU16: return at::kUInt16;
    case ElementType::kU32: return at::kUInt32;
    case ElementType::kU64: return at::kUInt64;
  }
  TORCH_CHECK(false, "unknown element type");
}

at::Tensor CpuTensorOf(const HostBuffer& buffer) {
  return at::from_blob(buffer.data, buffer.dims, at::TensorOptions().dtype(ScalarTypeOf(buffer.type)).device(at::kCPU));
}

}  // namespace torch_xla::host
