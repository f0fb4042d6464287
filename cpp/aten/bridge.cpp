#include "aten/bridge.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include <ATen/FunctionalTensorWrapper.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include "aten/transfer.h"
#include "aten/xla_tensor_impl.h"
#include "host/cpu_tensor.h"
#include "ir/builder.h"
#include "runtime/metrics.h"

namespace torch_xla {

using runtime::ElementType;

namespace {

// The precision modes of the API guide: XLA_USE_BF16 stores float32 and float64 tensors
// as bfloat16 on the device, XLA_DOWNCAST_BF16 float32 as bfloat16 and float64 as
// float32, XLA_USE_32BIT_LONG int64 as int32 and uint64 as uint32. Each flag is read
// from the environment when a tensor first needs it (as torch_xla does, so a script may
// set it after the import) and then holds for the process.
class PrecisionFlag {
 public:
  explicit PrecisionFlag(const char* name) : name_(name) {}
  bool get() {
    int v = value_.load(std::memory_order_relaxed);
    if (v < 0) {
      const char* env = std::getenv(name_);
      v = env != nullptr && *env != '\0' && std::string(env) != "0" ? 1 : 0;
      value_.store(v, std::memory_order_relaxed);
      if (v) any_set_.store(true, std::memory_order_relaxed);
    }
    return v == 1;
  }
  // Whether any flag read so far is set: the fast path of every dtype mapping.
  static bool AnySet() { return any_set_.load(std::memory_order_relaxed); }

 private:
  const char* name_;
  std::atomic<int> value_{-1};
  static inline std::atomic<bool> any_set_{false};
};

PrecisionFlag use_bf16("XLA_USE_BF16");
PrecisionFlag downcast_bf16("XLA_DOWNCAST_BF16");
PrecisionFlag use_32bit_long("XLA_USE_32BIT_LONG");

// Under a mode several dtypes share a device type (float32 and float64 are both bf16
// under XLA_USE_BF16), and a tensor reports the dtype PyTorch gave it, whatever the
// device holds (the API guide's promise). The kernel that makes a tensor knows that
// dtype: it asks for the device type of the dtype it computes (ElementTypeOf), or it
// keeps the type of its first operand. Both are noted per kernel while a mode is on,
// and the new tensor takes the dtype its kernel noted for its device type.
struct KernelDtypes {
  uint64_t result_kernel = 0;
  at::ScalarType result = at::ScalarType::Undefined;  // the last dtype the kernel mapped
  uint64_t operand_kernel = 0;
  at::ScalarType operand = at::ScalarType::Undefined;  // the kernel's first XLA operand's
};
thread_local KernelDtypes kernel_dtypes;

ElementType DeviceTypeOf(at::ScalarType type) {
  switch (type) {
    case at::kBool: return ElementType::kPred;
    case at::kByte: return ElementType::kU8;
    case at::kChar: return ElementType::kS8;
    case at::kShort: return ElementType::kS16;
    case at::kInt: return ElementType::kS32;
    case at::kLong: return use_32bit_long.get() ? ElementType::kS32 : ElementType::kS64;
    case at::kHalf: return ElementType::kF16;
    case at::kBFloat16: return ElementType::kBF16;
    case at::kFloat: return use_bf16.get() || downcast_bf16.get() ? ElementType::kBF16 : ElementType::kF32;
    case at::kDouble:
      return use_bf16.get() ? ElementType::kBF16 : downcast_bf16.get() ? ElementType::kF32 : ElementType::kF64;
    case at::kComplexFloat: return ElementType::kC64;
    case at::kComplexDouble: return ElementType::kC128;
    case at::kUInt16: return ElementType::kU16;
    case at::kUInt32: return ElementType::kU32;
    case at::kUInt64: return use_32bit_long.get() ? ElementType::kU32 : ElementType::kU64;
    default:
      TORCH_CHECK(false, "XLA tensors do not support dtype ", type);
  }
}

}  // namespace

ElementType ElementTypeOf(at::ScalarType type) {
  ElementType element = DeviceTypeOf(type);
  if (PrecisionFlag::AnySet()) {
    uint64_t kernel = metrics::TracingTimer::CurrentKernel();
    if (kernel != 0) kernel_dtypes.result_kernel = kernel, kernel_dtypes.result = type;
  }
  return element;
}

at::ScalarType ScalarTypeOf(ElementType type) {
  if (!PrecisionFlag::AnySet()) return DeviceScalarTypeOf(type);
  switch (type) {
    case ElementType::kBF16: return use_bf16.get() || downcast_bf16.get() ? at::kFloat : at::kBFloat16;
    case ElementType::kF32: return downcast_bf16.get() ? at::kDouble : at::kFloat;
    case ElementType::kS32: return use_32bit_long.get() ? at::kLong : at::kInt;
    case ElementType::kU32: return use_32bit_long.get() ? at::kUInt64 : at::kUInt32;
    default: return DeviceScalarTypeOf(type);
  }
}

bool HoldsDtype(ElementType type, at::ScalarType dtype) { return DeviceTypeOf(dtype) == type; }

at::ScalarType ReportedScalarTypeOf(ElementType type) {
  if (!PrecisionFlag::AnySet()) return DeviceScalarTypeOf(type);
  uint64_t kernel = metrics::TracingTimer::CurrentKernel();
  if (kernel != 0) {
    if (kernel_dtypes.result_kernel == kernel && DeviceTypeOf(kernel_dtypes.result) == type) return kernel_dtypes.result;
    if (kernel_dtypes.operand_kernel == kernel && DeviceTypeOf(kernel_dtypes.operand) == type)
      return kernel_dtypes.operand;
  }
  return ScalarTypeOf(type);
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
  TORCH_CHECK(ordinal == 0 || !runtime::spmd::Enabled(), "XLA device xla:", ordinal,
              " is not addressable in SPMD mode: xla:0 stands for all ", count,
              " devices (torch_xla.runtime.use_spmd()); lay tensors out over them with "
              "torch_xla.distributed.spmd.mark_sharding");
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
  if (PrecisionFlag::AnySet()) {
    uint64_t kernel = metrics::TracingTimer::CurrentKernel();
    if (kernel != 0 && kernel_dtypes.operand_kernel != kernel)
      kernel_dtypes.operand_kernel = kernel, kernel_dtypes.operand = impl->dtype().toScalarType();
  }
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
    // A CPU tensor beside XLA operands goes to the calling thread's device, as torch_xla
    // moves the CPU operand of an element-wise op (`x_xla + y_cpu`); PyTorch's own
    // composites pass lengths and indices the user kept on the CPU (CTC loss divides by
    // its CPU target lengths).
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
