#pragma once
// The c10::TensorImpl of tensors on the XLA device: storage-less, always contiguous,
// holding an XlaTensor. User-visible tensors wrap it in a FunctionalTensorWrapper, so
// views and in-place ops reach us as functional (*_copy) ops.
#include <ATen/core/Tensor.h>
#include <c10/core/TensorImpl.h>

#include <vector>

#include "tensor/xla_tensor.h"

namespace torch_xla {

class XlaTensorImpl : public c10::TensorImpl {
 public:
  explicit XlaTensorImpl(XlaTensorPtr tensor);

  const XlaTensorPtr& tensor() const { return tensor_; }
  void set_tensor(XlaTensorPtr tensor);

  // For a slice (or an as_strided view) of another tensor, the tensor it was first cut
  // from: the one whose storage an eager view would share. as_strided indexes the
  // storage rather than its input, so as_strided of a view reads this tensor (undefined
  // when the tensor was not cut from another).
  const at::Tensor& storage_base() const { return storage_base_; }
  // Where this tensor lies in its storage base's elements, as an eager view's strides
  // and storage offset say (meaningful with a storage base).
  const std::vector<int64_t>& storage_strides() const { return storage_strides_; }
  int64_t storage_offset_in_base() const { return storage_offset_in_base_; }
  void set_storage_base(at::Tensor base, std::vector<int64_t> strides, int64_t offset) {
    storage_base_ = std::move(base);
    storage_strides_ = std::move(strides);
    storage_offset_in_base_ = offset;
  }

  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(const c10::VariableVersion& version_counter,
                                                              bool allow_tensor_metadata_change) const override;
  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(c10::VariableVersion&& version_counter,
                                                              bool allow_tensor_metadata_change) const override;
  void shallow_copy_from(const c10::intrusive_ptr<c10::TensorImpl>& impl) override;

 private:
  void SetSizesFromTensor();
  XlaTensorPtr tensor_;
  at::Tensor storage_base_;
  std::vector<int64_t> storage_strides_;
  int64_t storage_offset_in_base_ = 0;
};

}  // namespace torch_xla
