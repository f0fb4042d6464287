#include "aten/bridge.h"

#include <cstdlib>
#include <string>

#include <ATen/FunctionalTensorWrapper.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include "aten/transfer.h"
#include "aten/xla_tensor_impl.h"
#include "host/cpu_tensor.h"
#include "ir/builder.h"

namespace torch_xla {

using runtime::ElementType;

namespace {

// The precision modes of the API guide, read from the environment at the first tensor:
// XLA_USE_BF16 stores float32 and float64 tensors as bfloat16 on the device,
// XLA_DOWNCAST_BF16 float32 as bfloat16 and float64 as float32, XLA_USE_32BIT_LONG int64
// as int32. Tensors keep reporting the dtype PyTorch gave them and come back to the CPU
// in it: the device type is a function of the dtype, and the reported dtype the inverse
// function of the device type (so, as in torch_xla, a bfloat16 tensor made under
// XLA_USE_BF16 reports float32 too).
struct PrecisionMode {
  bool use_bf16 = false;
  bool downcast_bf16 = false;
  bool use_32bit_long = false;
};

bool EnvFlag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

const PrecisionMode& CurrentPrecisionMode() {
  static const PrecisionMode mode = [] {
    PrecisionMode m;
    m.use_bf16 = EnvFlag("XLA_USE_BF16");
    m.downcast_bf16 = !m.use_bf16 && EnvFlag("XLA_DOWNCAST_BF16");
    m.use_32bit_long = EnvFlag("XLA_USE_32BIT_LONG");
    return m;
  }();
  return mode;
}

}  // namespace

ElementType ElementTypeOf(at::ScalarType type) {
  const PrecisionMode& mode = CurrentPrecisionMode();
  switch (type) {
    case at::kBool: return ElementType::kPred;
    case at::kByte: return ElementType::kU8;
    case at::kChar: return ElementType::kS8;
    case at::kShort: return ElementType::kS16;
    case at::kInt: return ElementType::kS32;
    case at::kLong: return mode.use_32bit_long ? ElementType::kS32 : ElementType::kS64;
    case at::kHalf: return ElementType::kF16;
    case at::kBFloat16: return ElementType::kBF16;
    case at::kFloat: return mode.use_bf16 || mode.downcast_bf16 ? ElementType::kBF16 : ElementType::kF32;
    case at::kDouble:
      return mode.use_bf16 ? ElementType::kBF16 : mode.downcast_bf16 ? ElementType::kF32 : ElementType::kF64;
    case at::kComplexFloat: return ElementType::kC64;
    case at::kComplexDouble: return ElementType::kC128;
    case at::kUInt16: return ElementType::kU16;
    case at::kUInt32: return ElementType::kU32;
    case at::kUInt64: return ElementType::kU64;
    default:
      TORCH_CHECK(false, "XLA tensors do not support dtype ", type);
  }
}

at::ScalarType ScalarTypeOf(ElementType type) {
  const PrecisionMode& mode = CurrentPrecisionMode();
  switch (type) {
    case ElementType::kBF16: return mode.use_bf16 || mode.downcast_bf16 ? at::kFloat : at::kBFloat16;
    case ElementType::kF32: return mode.downcast_bf16 ? at::kDouble : at::kFloat;
    case ElementType::kS32: return mode.use_32bit_long ? at::kLong : at::kInt;
    default: return DeviceScalarTypeOf(type);
  }
}

at::ScalarType DeviceScalarTypeOf(ElementType type) { return host::ScalarTypeOf(type); }

c10::Device XlaDeviceOf(int ordinal) { return c10::Device(c10::DeviceType::XLA, static_cast<c10::DeviceIndex>(ordinal)); }

int OrdinalOf(const c10::Device& device) {
  TORCH_CHECK(device.type() == c10::DeviceType::XLA, "expected an XLA device, got ", device);
  // 'xla' without an index is the calling thread's current device (a replica's own).
  int ordinal = device.has_index() ? device.index()
                                   : c10::impl::getDeviceGuardImpl(c10::DeviceType::XLA)->getDevice().index();
  int count = runtime::Client::Get().device_count();
  TORCH_CHECK(ordinal >= 0 && ordinal < count, "XLA device xla:", ordinal, " does not exist; there are ", count,
              " devices (xla:0 to xla:", count - 1, ")");
  return ordinal;
}

bool IsXlaTensor(const at::Tensor& tensor) { return tensor.defined() && tensor.device().type() == c10::DeviceType::XLA; }

XlaTensorPtr GetXlaTensor(const at::Tensor& tensor, const char* op) {
  TORCH_CHECK(tensor.defined(), op, ": expected an XLA tensor, got an undefined tensor");
  at::TensorImpl* impl = tensor.unsafeGetTensorImpl();
  at::Tensor inner;
  if (at::functionalization::impl::isFunctionalTensor(tensor)) {
    at::functionalization::impl::sync(tensor);
    inner = at::functionalization::impl::from_functional_tensor(tensor);
    impl = inner.unsafeGetTensorImpl();
  }
  auto* xla_impl = dynamic_cast<XlaTensorImpl*>(impl);
  TORCH_CHECK(xla_impl, op, ": expected a tensor on the XLA device, got ", tensor.device(), " tensor ",
              DescribeTensor(tensor), " (input tensor is not an XLA tensor: move it with .to(xm.xla_device()))");
  return xla_impl->tensor();
}

at::Tensor AtenFromXla(XlaTensorPtr tensor) {
  at::Tensor out(c10::make_intrusive<XlaTensorImpl>(std::move(tensor)));
  // Inside functionalization (Functionalize excluded) the caller wraps the result.
  if (c10::impl::tls_local_dispatch_key_set().excluded_.has(c10::DispatchKey::Functionalize)) return out;
  return at::functionalization::impl::to_functional_tensor(out);
}

at::Tensor AtenFromIr(ir::Value value, int device) { return AtenFromXla(XlaTensor::FromIr(std::move(value), device)); }

ir::Value IrScalar(const at::Scalar& value, ElementType type) {
  if (runtime::IsComplex(type)) {
    // Both parts as parameters of the real type, joined on the device.
    ElementType part = type == ElementType::kC64 ? ElementType::kF32 : ElementType::kF64;
    c10::complex<double> z = value.toComplexDouble();
    return ir::Complex(ir::ScalarParameter(z.real(), part), ir::ScalarParameter(z.imag(), part));
  }
  double v = value.isComplex() ? value.toComplexDouble().real() : value.toDouble();
  if (value.isIntegral(false) || value.isBoolean()) v = static_cast<double>(value.toLong());
  // Scalar parameters travel as f32/f64/s32/s64/pred and are converted in the graph.
  ElementType carrier = runtime::IsFloating(type) ? (type == ElementType::kF64 ? ElementType::kF64 : ElementType::kF32)
                        : type == ElementType::kPred ? ElementType::kPred
                        : type == ElementType::kS32  ? ElementType::kS32
                                                     : ElementType::kS64;
  return ir::Convert(ir::ScalarParameter(v, carrier), type);
}

ir::Value IrOperand(const at::Tensor& tensor, ElementType type, const char* op) {
  if (!IsXlaTensor(tensor)) {
    TORCH_CHECK(tensor.device().is_cpu(), op, ": expected all tensors on the XLA device, got a ", tensor.device(),
                " tensor ", DescribeTensor(tensor), " (input tensor is not an XLA tensor)");
    if (tensor.dim() == 0) return IrScalar(tensor.item(), type);
    // An integer CPU tensor beside XLA operands: PyTorch's own composites pass lengths
    // and indices the user kept on the CPU (CTC loss divides by its CPU target lengths).
    // It goes to the calling thread's device. Floating CPU tensors are a mistake to report.
    TORCH_CHECK(at::isIntegralType(tensor.scalar_type(), /*includeBool=*/true), op,
                ": expected all tensors on the XLA device, got a cpu tensor ", DescribeTensor(tensor),
                " (input tensor is not an XLA tensor)");
    return ir::Convert(FromCpuTensor(tensor.contiguous(), OrdinalOf(c10::Device(c10::DeviceType::XLA)))->GetIrValue(),
                       type);
  }
  return ir::Convert(GetXlaTensor(tensor, op)->GetIrValue(), type);
}

int CommonDevice(std::initializer_list<const at::Tensor*> tensors, const char* op) {
  int device = -1;
  for (const at::Tensor* t : tensors) {
    if (!t->defined() || !IsXlaTensor(*t)) continue;
    int d = t->device().index();
    TORCH_CHECK(device < 0 || d == device, op, ": expected all tensors on the same device, got xla:", device,
                " and xla:", d);
    device = d;
  }
  TORCH_CHECK(device >= 0, op, ": expected at least one XLA tensor");
  return device;
}

std::string DescribeTensor(const at::Tensor& tensor) {
  std::string s = std::string(c10::toString(tensor.scalar_type())) + "[";
  for (int64_t i = 0; i < tensor.dim(); ++i) {
    if (i) s += ", ";
    s += std::to_string(tensor.size(i));
  }
  return s + "]";
}

}  // namespace torch_xla
