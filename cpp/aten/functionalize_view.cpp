// The Functionalize-key kernel of `aten::view` for XLA tensors.
//
// Every view of a user's XLA tensor (and every reshape and flatten, which reach `view`
// on this device) passes through functionalization. PyTorch's generated kernel first
// runs the view on meta tensors (a reference for the result's strides, which XLA
// tensors do not keep: they report the contiguous strides of the value they wrap),
// then dispatches view_copy, then wraps the result. The meta tensors and the extra
// dispatch were about a third of a traced view's cost. This kernel makes the one check
// of the meta function that can fail for an XLA tensor (the sizes against the number
// of elements, with PyTorch's own function and message) and builds the reshaped value
// and its wrapper directly: same result, same errors.
//
// The key is shared by every backend: tensors that are not plain XLA functional
// tensors (CPU tensors under torch.func.functionalize or torch.compile, symbolic sizes,
// views being re-applied as views) go to PyTorch's own kernel, kept from before this
// one was registered.
#include <ATen/ATen.h>
#include <ATen/FunctionalTensorWrapper.h>
#include <ATen/InferSize.h>
#include <torch/library.h>

#include <typeinfo>

#include "aten/functionalize_override.h"
#include "aten/xla_tensor_impl.h"
#include "ir/builder.h"
#include "runtime/metrics.h"

namespace torch_xla {
namespace {

// How functionalization replays this view on a new base, and undoes it.
class ReshapeViewMeta : public at::functionalization::ViewMeta {
 public:
  explicit ReshapeViewMeta(at::IntArrayRef size)
      : at::functionalization::ViewMeta(/*has_symbolic_inputs=*/false), size_(size.begin(), size.end()) {}

  at::Tensor forward(const at::Tensor& base) override {
    return at::_ops::view_copy::call(base, c10::fromIntArrayRefSlow(size_));
  }
  at::Tensor reverse(const at::Tensor& base, const at::Tensor& mutated_view) override {
    return at::_ops::view_copy::call(mutated_view, base.sym_sizes());
  }

 private:
  at::DimVector size_;  // inline: no allocation for up to 5 dimensions
};

at::Tensor FunctionalizeView(c10::DispatchKeySet keys, const at::Tensor& self, c10::SymIntArrayRef size);

const FunctionalizeOverride view_override(
    "view", torch::dispatch(c10::DispatchKey::Functionalize, TORCH_FN(FunctionalizeView)), __FILE__,
    __LINE__);

// PyTorch's Functionalize kernel of aten::view.
at::Tensor CallOriginal(c10::DispatchKeySet keys, const at::Tensor& self, c10::SymIntArrayRef size) {
  torch::jit::Stack stack;
  stack.reserve(2);
  stack.emplace_back(self);
  stack.emplace_back(size);
  view_override.CallOriginal(keys, &stack);
  return std::move(stack[0]).toTensor();
}

at::Tensor FunctionalizeView(c10::DispatchKeySet keys, const at::Tensor& self, c10::SymIntArrayRef size) {
  namespace impl = at::functionalization::impl;
  if (!impl::isFunctionalTensor(self) || !self.key_set().has_backend(c10::BackendComponent::XLABit) ||
      impl::getFunctionalizationReapplyViewsTLS()) {
    return CallOriginal(keys, self, size);
  }
  auto int_size = c10::asIntArrayRefSlowOpt(size);
  at::TensorImpl* self_impl = self.unsafeGetTensorImpl();
  if (!int_size || self_impl->has_symbolic_sizes_strides()) return CallOriginal(keys, self, size);
  auto* wrapper = impl::unsafeGetFunctionalWrapper(self);
  at::TensorImpl* value_impl = wrapper->value().unsafeGetTensorImpl();
  if (typeid(*value_impl) != typeid(XlaTensorImpl)) return CallOriginal(keys, self, size);
  auto* inner = static_cast<XlaTensorImpl*>(value_impl);

  // What view's meta function checks: the sizes fit the number of elements. (Its other
  // check, that eager's strides allow the view, always passes: an XLA tensor reports
  // contiguous strides, those of the value it wraps.)
  at::DimVector sizes = at::infer_size_dv(*int_size, self_impl->numel());

  // What view_copy computes on the device.
  XLA_COUNT("view_copy");
  const XlaTensorPtr& source = inner->tensor();
  ir::Value reshaped = source->GetIrValue();
  if (at::IntArrayRef(source->shape().dims) != at::IntArrayRef(sizes)) {
    reshaped = ir::Reshape(reshaped, std::vector<int64_t>(sizes.begin(), sizes.end()));
  }
  at::Tensor value(c10::make_intrusive<XlaTensorImpl>(XlaTensor::FromIr(std::move(reshaped), source->device())));
  return at::detail::make_tensor<at::FunctionalTensorWrapper>(value, wrapper,
                                                              std::make_shared<ReshapeViewMeta>(*int_size));
}

}  // namespace
}  // namespace torch_xla
