// Kernels that move data: copies between devices and into existing tensors (copy,
// _copy_from, _copy_from_and_resize, _propagate_xla_data), dtype and device casts
// (_to_copy), clone, resize_, item() (_local_scalar_dense), and lift/lift_fresh.
#include <ATen/ATen.h>
#include <ATen/FunctionalTensorWrapper.h>

#include "XLANativeFunctions.h"
#include "aten/transfer.h"
#include "aten/xla_tensor_impl.h"
#include "ops/kernel_util.h"

namespace torch_xla {

at::Tensor XLANativeFunctions::_to_copy(const at::Tensor& self, std::optional<at::ScalarType> dtype,
                                        std::optional<at::Layout> layout, std::optional<at::Device> device,
                                        std::optional<bool> pin_memory, bool non_blocking,
                                        std::optional<at::MemoryFormat> memory_format) {
  XLA_COUNT("_to_copy");
  at::ScalarType target_type = dtype.value_or(self.scalar_type());
  c10::Device target = device.value_or(self.device());
  if (!IsXlaTensor(self)) {
    // Host -> device.
    at::Tensor src = self.to(target_type);
    return AtenFromXla(FromCpuTensor(src, OrdinalOf(target)));
  }
  XlaTensorPtr x = GetXlaTensor(self, "_to_copy");
  if (target.type() != c10::DeviceType::XLA) {
    // Device -> host (or another backend through the host).
    at::Tensor cpu = ToCpuTensor(x).to(target_type);
    return target.is_cpu() ? cpu : cpu.to(target);
  }
  int ordinal = OrdinalOf(target);
  if (ordinal != x->device()) {
    at::Tensor cpu = ToCpuTensor(x).to(target_type);
    return AtenFromXla(FromCpuTensor(cpu, ordinal));
  }
  return AtenFromIr(ir::Convert(x->GetIrValue(), ElementTypeOf(target_type)), ordinal);
}

at::Tensor XLANativeFunctions::_copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  XLA_COUNT("_copy_from");
  // copy_ semantics: `self` (the source) is broadcast to dst's shape and cast to its dtype.
  if (!IsXlaTensor(dst)) {
    at::Tensor cpu = ToCpuTensor(GetXlaTensor(self, "copy_"));
    dst.copy_(cpu);
    return dst;
  }
  XlaTensorImpl* dst_impl = InnerImpl(dst);
  const XlaTensorPtr& d = dst_impl->tensor();
  ir::Value value;
  if (!IsXlaTensor(self)) {
    at::Tensor src = self.to(dst.scalar_type()).expand(dst.sizes());
    d->SetBuffer(FromCpuTensor(src, d->device())->buffer());
    return dst;
  }
  XlaTensorPtr s = GetXlaTensor(self, "copy_");
  if (s->device() != d->device()) {
    at::Tensor src = ToCpuTensor(s).to(dst.scalar_type()).expand(dst.sizes());
    d->SetBuffer(FromCpuTensor(src, d->device())->buffer());
    return dst;
  }
  Checked("copy_", [&] {
    d->SetIr(ir::Broadcast(ir::Convert(s->GetIrValue(), d->shape().type), d->shape().dims));
    return 0;
  });
  return dst;
}

// Functionalization calls this after each in-place op with the tensor's inner tensor
// before and after the update: the new one updates the old one's buffer, which a sync
// then lets XLA overwrite with the result (see XlaTensor::updated_buffer).
void XLANativeFunctions::_propagate_xla_data(const at::Tensor& input, const at::Tensor& output) {
  XLA_COUNT("_propagate_xla_data");
  if (!IsXlaTensor(input) || !IsXlaTensor(output)) return;
  GetXlaTensor(output, "_propagate_xla_data")->UpdatesBufferOf(*GetXlaTensor(input, "_propagate_xla_data"));
}

at::Tensor XLANativeFunctions::_copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  XLA_COUNT("_copy_from_and_resize");
  if (!IsXlaTensor(dst)) {
    at::Tensor cpu = ToCpuTensor(GetXlaTensor(self, "copy_"));
    dst.resize_(cpu.sizes());
    dst.copy_(cpu);
    return dst;
  }
  XlaTensorImpl* dst_impl = InnerImpl(dst);
  if (dst.sizes() != self.sizes()) {
    // An out= tensor of another shape takes the result's shape, as resize_ would.
    ir::Shape shape(dst_impl->tensor()->shape().type, std::vector<int64_t>(self.sizes().begin(), self.sizes().end()));
    dst_impl->set_tensor(XlaTensor::FromIr(ir::Constant(0, shape), dst_impl->tensor()->device()));
  }
  return _copy_from(self, dst, false);
}

// resize_: self takes the new sizes (contiguous), keeping its first elements in
// row-major order. Elements past the old size are unspecified in eager; here they are
// zeros. (Under functionalization this runs on the inner tensor, which is then synced.)
const at::Tensor& XLANativeFunctions::resize_(const at::Tensor& self, at::IntArrayRef size,
                                              std::optional<at::MemoryFormat> /*memory_format*/) {
  XLA_COUNT("resize_");
  const char* op = "resize_";
  for (int64_t d : size) TORCH_CHECK(d >= 0, op, ": Trying to create tensor with negative dimension ", d, ": ", size);
  XlaTensorImpl* impl = InnerImpl(self);
  XlaTensorPtr x = impl->tensor();
  std::vector<int64_t> dims(size.begin(), size.end());
  if (dims == x->shape().dims) return self;
  int64_t old_numel = x->shape().numel();
  int64_t new_numel = 1;
  for (int64_t d : dims) new_numel *= d;
  ir::Value flat = ir::Reshape(x->GetIrValue(), {old_numel});
  if (new_numel < old_numel) {
    flat = ir::Slice(flat, {0}, {new_numel}, {1});
  } else if (new_numel > old_numel) {
    flat = ir::Pad(flat, ir::Constant(0, ir::Shape(x->shape().type, {})), {0}, {new_numel - old_numel}, {0});
  }
  impl->set_tensor(XlaTensor::FromIr(ir::Reshape(flat, dims), x->device()));
  return self;
}

at::Tensor XLANativeFunctions::copy(const at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  XLA_COUNT("copy");
  // The functional form of copy_: a new tensor with self's shape, dtype and device
  // holding src's values.
  if (!IsXlaTensor(self)) {
    // cpu_tensor.copy_(xla_tensor): functionalization asks for the value on the XLA
    // device (self's dtype and shape), then writes it to self with _copy_from.
    XlaTensorPtr s = GetXlaTensor(src, "copy_");
    ir::Shape shape(ElementTypeOf(self.scalar_type()), std::vector<int64_t>(self.sizes().begin(), self.sizes().end()));
    return AtenFromIr(Checked("copy_", [&] { return ir::Broadcast(ir::Convert(s->GetIrValue(), shape.type), shape.dims); }),
                      s->device());
  }
  XlaTensorPtr x = GetXlaTensor(self, "copy_");
  if (!IsXlaTensor(src)) {
    at::Tensor host = src.to(self.scalar_type()).expand(self.sizes());
    return AtenFromXla(FromCpuTensor(host, x->device()));
  }
  XlaTensorPtr s = GetXlaTensor(src, "copy_");
  if (s->device() != x->device()) {
    at::Tensor host = ToCpuTensor(s).to(self.scalar_type()).expand(self.sizes());
    return AtenFromXla(FromCpuTensor(host, x->device()));
  }
  return AtenFromIr(Checked("copy_", [&] {
                      return ir::Broadcast(ir::Convert(s->GetIrValue(), x->shape().type), x->shape().dims);
                    }),
                    x->device());
}

at::Tensor XLANativeFunctions::clone(const at::Tensor& self, std::optional<at::MemoryFormat> memory_format) {
  XLA_COUNT("clone");
  XlaTensorPtr x = GetXlaTensor(self, "clone");
  return AtenFromIr(x->GetIrValue(), x->device());
}

namespace {
// torch.tensor(data, device='xla') builds its tensor with functionalization excluded
// and then lifts it, which reaches this key because the new tensor has no
// Functionalize key of its own: the lift wraps it as every user tensor is wrapped.
// Without the wrapper, an in-place op mixing it with wrapped tensors breaks.
at::Tensor Lift(const at::Tensor& self) {
  if (!IsXlaTensor(self) || at::functionalization::impl::isFunctionalTensor(self) ||
      c10::impl::tls_local_dispatch_key_set().excluded_.has(c10::DispatchKey::Functionalize))
    return self;
  return at::functionalization::impl::to_functional_tensor(self);
}
}  // namespace

at::Tensor XLANativeFunctions::lift(const at::Tensor& self) {
  XLA_COUNT("lift");
  return Lift(self);
}

at::Tensor XLANativeFunctions::lift_fresh(const at::Tensor& self) {
  XLA_COUNT("lift_fresh");
  return Lift(self);
}

// tensor.item(): runs the tensor's graph and reads the one element back.
at::Scalar XLANativeFunctions::_local_scalar_dense(const at::Tensor& self) {
  XLA_COUNT("_local_scalar_dense");
  // Reading a value back to the host is what the reference counts as a CPU fallback.
  static metrics::Counter* fallback = metrics::GetCounter("aten::_local_scalar_dense");
  fallback->Add();
  TORCH_CHECK(self.numel() == 1, "_local_scalar_dense: a Tensor with ", self.numel(),
              " elements cannot be converted to Scalar");
  return ToCpuTensor(GetXlaTensor(self, "item")).item();
}

}  // namespace torch_xla
