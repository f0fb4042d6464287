#pragma once
// Conversions between PyTorch's world (at::Tensor, ScalarType, Device, Scalar) and
// ours (XlaTensor, ElementType, device ordinal, IR values). Used by every kernel.
#include <ATen/Tensor.h>
#include <c10/core/Scalar.h>

#include "ir/node.h"
#include "tensor/xla_tensor.h"

namespace torch_xla {

// The device element type of a PyTorch dtype, and the dtype a tensor of a device element
// type reports by default. Both follow the precision mode (XLA_USE_BF16,
// XLA_DOWNCAST_BF16, XLA_USE_32BIT_LONG): under XLA_USE_BF16 float32 and float64 are bf16
// on the device and bf16 reports float32. Without a mode they are exact inverses.
runtime::ElementType ElementTypeOf(at::ScalarType type);
at::ScalarType ScalarTypeOf(runtime::ElementType type);
// The dtype a tensor that the running kernel makes reports: under a mode, the dtype of
// the kernel's result (the last one it mapped with ElementTypeOf) or of its first
// operand, where that dtype has the tensor's device type; else ScalarTypeOf. So a float64
// tensor reports float64 under XLA_USE_BF16 through every op, as PyTorch would give it.
at::ScalarType ReportedScalarTypeOf(runtime::ElementType type);
// Whether a tensor of `dtype` is held in the device type `type` (in the current mode).
bool HoldsDtype(runtime::ElementType type, at::ScalarType dtype);
// The dtype whose bytes are the device's elements, whatever the mode: for raw buffers.
at::ScalarType DeviceScalarTypeOf(runtime::ElementType type);
c10::Device XlaDeviceOf(int ordinal);
// The ordinal of an XLA device; the default device for an unspecified index.
int OrdinalOf(const c10::Device& device);

bool IsXlaTensor(const at::Tensor& tensor);
// The XlaTensor behind an XLA tensor (functional wrapper or not; a wrapper is synced
// first). Throws a c10::Error naming `op` when the tensor is not an XLA tensor.
XlaTensorPtr GetXlaTensor(const at::Tensor& tensor, const char* op = "xla");
// Wraps an XlaTensor as an at::Tensor. Outside functionalization (factories, copies to
// the device) the result is a FunctionalTensorWrapper, as every user tensor must be.
at::Tensor AtenFromXla(XlaTensorPtr tensor);
at::Tensor AtenFromIr(ir::Value value, int device);

// Operand access for kernels: the IR value of a tensor that may also be a CPU scalar
// tensor (a Python number, or a 0-dim CPU tensor), converted to `type`.
ir::Value IrOperand(const at::Tensor& tensor, runtime::ElementType type, const char* op);
ir::Value IrScalar(const at::Scalar& value, runtime::ElementType type);
// The device of the first XLA tensor among the operands (others must agree).
int CommonDevice(std::initializer_list<const at::Tensor*> tensors, const char* op);

// "f32[2, 3]" for messages.
std::string DescribeTensor(const at::Tensor& tensor);

}  // namespace torch_xla
