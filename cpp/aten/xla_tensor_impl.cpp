#include "aten/xla_tensor_impl.h"

#include "aten/bridge.h"

namespace torch_xla {
namespace {

c10::DispatchKeySet XlaKeySet() {
  return c10::DispatchKeySet{c10::DispatchKey::XLA, c10::DispatchKey::AutogradXLA};
}

}  // namespace

XlaTensorImpl::XlaTensorImpl(XlaTensorPtr tensor)
    : c10::TensorImpl(XlaKeySet(), caffe2::TypeMeta::fromScalarType(ReportedScalarTypeOf(tensor->shape().type)),
                      XlaDeviceOf(tensor->device())),
      tensor_(std::move(tensor)) {
  // There is no storage to hand out: .data_ptr() and friends raise a clear error.
  set_storage_access_should_throw();
  SetSizesFromTensor();
}

void XlaTensorImpl::SetSizesFromTensor() {
  set_sizes_contiguous(tensor_->shape().dims);
  // The tensor keeps the dtype it reports while its device type can hold it (under a
  // precision mode several dtypes share one device type).
  if (!HoldsDtype(tensor_->shape().type, data_type_.toScalarType()))
    data_type_ = caffe2::TypeMeta::fromScalarType(ReportedScalarTypeOf(tensor_->shape().type));
}

void XlaTensorImpl::set_tensor(XlaTensorPtr tensor) {
  tensor_ = std::move(tensor);
  SetSizesFromTensor();
}

c10::intrusive_ptr<c10::TensorImpl> XlaTensorImpl::shallow_copy_and_detach(
    const c10::VariableVersion& version_counter, bool allow_tensor_metadata_change) const {
  auto impl = c10::make_intrusive<XlaTensorImpl>(tensor_);
  copy_tensor_metadata(this, impl.get(), version_counter, allow_tensor_metadata_change);
  impl->set_storage_base(storage_base_, storage_strides_, storage_offset_in_base_);
  return impl;
}

c10::intrusive_ptr<c10::TensorImpl> XlaTensorImpl::shallow_copy_and_detach(
    c10::VariableVersion&& version_counter, bool allow_tensor_metadata_change) const {
  auto impl = c10::make_intrusive<XlaTensorImpl>(tensor_);
  copy_tensor_metadata(this, impl.get(), std::move(version_counter), allow_tensor_metadata_change);
  impl->set_storage_base(storage_base_, storage_strides_, storage_offset_in_base_);
  return impl;
}

void XlaTensorImpl::shallow_copy_from(const c10::intrusive_ptr<c10::TensorImpl>& impl) {
  auto* other = dynamic_cast<XlaTensorImpl*>(impl.get());
  TORCH_CHECK(other, "shallow_copy_from: source is not an XLA tensor");
  copy_tensor_metadata(other, this, version_counter(), allow_tensor_metadata_change());
  set_storage_base(other->storage_base_, other->storage_strides_, other->storage_offset_in_base_);
  set_tensor(other->tensor_);
}

}  // namespace torch_xla
