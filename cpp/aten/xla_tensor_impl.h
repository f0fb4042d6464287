#pragma once
// The c10::TensorImpl of tensors on the XLA device: storage-less, always contiguous,
// holding an XlaTensor. User-visible tensors wrap it in a FunctionalTensorWrapper, so
// views and in-place ops reach us as functional (*_copy) ops.
#include <c10/core/TensorImpl.h>

#include "tensor/xla_tensor.h"

namespace torch_xla {

class XlaTensorImpl : public c10::TensorImpl {
 public:
  explicit XlaTensorImpl(XlaTensorPtr tensor);

  const XlaTensorPtr& tensor() const { return tensor_; }
  void set_tensor(XlaTensorPtr tensor);

  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(const c10::VariableVersion& version_counter,
                                                              bool allow_tensor_metadata_change) const override;
  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(c10::VariableVersion&& version_counter,
                                                              bool allow_tensor_metadata_change) const override;
  void shallow_copy_from(const c10::intrusive_ptr<c10::TensorImpl>& impl) override;

 private:
  void SetSizesFromTensor();
  XlaTensorPtr tensor_;
};

}  // namespace torch_xla
