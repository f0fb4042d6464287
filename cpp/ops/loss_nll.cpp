// The negative log-likelihood loss (nll_loss, nll_loss2d), forward and backward.
// Low-precision inputs (bf16, f16) are computed in f32 and rounded at the end, as
// PyTorch's CPU kernels do. Gathers by class index are one-hot selects along the class
// dimension followed by a sum, which XLA fuses into a single loop.
#include <ATen/ATen.h>

#include "XLANativeFunctions.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;

// ---------------------------------------------------------------------------------
// nll_loss / nll_loss2d

struct NllInputs {
  Value x;          // input in the accumulation type, [N, C, d...] or [C]
  Value onehot;     // pred, input shape: class == target
  Value weight;     // per-target weight, 0 where target == ignore_index; target shape
  int64_t class_dim;
  ElementType type;  // the input's type
};

void CheckNll(const char* op, const at::Tensor& self, const at::Tensor& target, const std::optional<at::Tensor>& weight,
              int64_t reduction, bool spatial) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(self));
  // Floating targets are class indices too (truncated), as torch_xla takes them; eager
  // PyTorch refuses them, and so do other integer types and bool here.
  TORCH_CHECK(target.scalar_type() == at::kLong || target.scalar_type() == at::kByte ||
                  at::isFloatingType(target.scalar_type()),
              op, ": expected target of scalar type Long (or Byte, or floating class indices), but got ",
              DescribeTensor(target));
  TORCH_CHECK(reduction >= 0 && reduction <= 2, op, ": invalid reduction ", reduction,
              " (expected 0 = none, 1 = mean or 2 = sum)");
  if (spatial) {
    TORCH_CHECK(self.dim() == 4, op, ": only batches of spatial inputs supported (4D tensors), but got input ",
                DescribeTensor(self));
    TORCH_CHECK(target.dim() == 3, op, ": only batches of spatial targets supported (3D tensors) but got targets ",
                DescribeTensor(target));
    TORCH_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) && self.size(3) == target.size(2),
                op, ": input and target batch or spatial sizes don't match: target ", DescribeTensor(target),
                ", input ", DescribeTensor(self));
  } else {
    TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, op, ": input tensor should be 1D or 2D, got ",
                DescribeTensor(self));
    TORCH_CHECK(target.dim() <= 1, op, ": 0D or 1D target tensor expected, multi-target not supported, got target ",
                DescribeTensor(target));
    bool no_batch = self.dim() == 1 && target.dim() == 0;
    TORCH_CHECK(no_batch || self.size(0) == target.size(0), op, ": expected input batch_size (", self.size(0),
                ") to match target batch_size (", target.dim() ? target.size(0) : 0, "), input ",
                DescribeTensor(self), ", target ", DescribeTensor(target));
  }
  int64_t classes = self.size(self.dim() == 1 ? 0 : 1);
  if (weight.has_value() && weight->defined()) {
    TORCH_CHECK(weight->dim() == 1 && weight->numel() == classes, op,
                ": weight tensor should be defined either for all ", classes,
                " classes or no classes but got weight tensor of shape: ", DescribeTensor(*weight));
    TORCH_CHECK(weight->scalar_type() == self.scalar_type(), op, ": expected weight of the input's dtype ",
                self.scalar_type(), ", got ", DescribeTensor(*weight));
  }
}

NllInputs PrepareNll(const char* op, const at::Tensor& self, const at::Tensor& target,
                     const std::optional<at::Tensor>& weight, int64_t ignore_index) {
  NllInputs in;
  XlaTensorPtr x = GetXlaTensor(self, op);
  in.type = x->shape().type;
  ElementType acc = AccumulationType(in.type);
  in.x = ir::Convert(x->GetIrValue(), acc);
  in.class_dim = self.dim() == 1 ? 0 : 1;
  const std::vector<int64_t>& dims = in.x.shape().dims;
  int64_t rank = in.x.shape().rank();
  Value t = ir::Convert(GetXlaTensor(target, op)->GetIrValue(), ElementType::kS64);
  Value classes = ir::Iota(ir::Shape(ElementType::kS64, dims), in.class_dim);
  in.onehot = ir::Compare(CompareDirection::kEq, classes, ir::BroadcastInDim(t, dims, AllBut(rank, in.class_dim)));
  const std::vector<int64_t>& tdims = t.shape().dims;
  Value w;
  if (weight.has_value() && weight->defined()) {
    Value wv = ir::Convert(GetXlaTensor(*weight, op)->GetIrValue(), acc);
    Value picked = ir::Select(in.onehot, ir::BroadcastInDim(wv, dims, {in.class_dim}), Full(0, acc, dims));
    w = ir::Reduce(ReduceKind::kSum, picked, {in.class_dim});
  } else {
    w = Full(1, acc, tdims);
  }
  Value valid = ir::Compare(CompareDirection::kNe, t, Full(static_cast<double>(ignore_index), ElementType::kS64, tdims));
  in.weight = ir::Select(valid, w, Full(0, acc, tdims));
  return in;
}

std::tuple<at::Tensor, at::Tensor> NllForward(const char* op, const at::Tensor& self, const at::Tensor& target,
                                              const std::optional<at::Tensor>& weight, int64_t reduction,
                                              int64_t ignore_index, bool spatial) {
  CheckNll(op, self, target, weight, reduction, spatial);
  int device = CommonDevice({&self, &target}, op);
  return Checked(op, [&] {
    NllInputs in = PrepareNll(op, self, target, weight, ignore_index);
    ElementType acc = in.x.shape().type;
    const std::vector<int64_t>& dims = in.x.shape().dims;
    Value picked = ir::Reduce(ReduceKind::kSum, ir::Select(in.onehot, in.x, Full(0, acc, dims)), {in.class_dim});
    Value loss = ir::Unary(ir::op::kNegate, Mul(picked, in.weight));
    if (reduction == 0 && self.dim() > 1) {
      return std::make_tuple(AtenFromIr(ir::Convert(loss, in.type), device),
                             AtenFromIr(Full(0, in.type, {}), device));
    }
    int64_t trank = loss.shape().rank();
    Value total = ir::Reduce(ReduceKind::kSum, loss, AllDims(trank));
    Value total_weight = ir::Reduce(ReduceKind::kSum, in.weight, AllDims(trank));
    if (reduction == 1) total = Div(total, total_weight);
    return std::make_tuple(AtenFromIr(ir::Convert(total, in.type), device),
                           AtenFromIr(ir::Convert(total_weight, in.type), device));
  });
}

at::Tensor NllBackward(const char* op, const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                       const std::optional<at::Tensor>& weight, int64_t reduction, int64_t ignore_index,
                       const at::Tensor& total_weight, bool spatial) {
  CheckNll(op, self, target, weight, reduction, spatial);
  bool per_element = reduction == 0 && self.dim() > 1;
  std::vector<int64_t> tsizes = target.sizes().vec();
  TORCH_CHECK(per_element ? grad_output.sizes().vec() == tsizes : grad_output.numel() == 1, op,
              ": expected grad_output of ", per_element ? "the target's size" : "a single element", ", got ",
              DescribeTensor(grad_output), " for target ", DescribeTensor(target));
  TORCH_CHECK(total_weight.numel() == 1, op, ": expected total_weight to be a single element tensor, got ",
              DescribeTensor(total_weight));
  int device = CommonDevice({&grad_output, &self, &target}, op);
  return Checked(op, [&] {
    NllInputs in = PrepareNll(op, self, target, weight, ignore_index);
    ElementType acc = in.x.shape().type;
    const std::vector<int64_t>& dims = in.x.shape().dims;
    const std::vector<int64_t>& tdims = in.weight.shape().dims;
    Value g = IrOperand(grad_output, acc, op);
    g = per_element ? ir::Reshape(g, tdims) : ir::Broadcast(ir::Reshape(g, {}), tdims);
    Value scaled = Mul(g, in.weight);
    if (reduction == 1) {
      Value tw = ir::Reshape(IrOperand(total_weight, acc, op), {});
      scaled = Div(scaled, ir::Broadcast(tw, tdims));
    }
    Value spread = ir::BroadcastInDim(ir::Unary(ir::op::kNegate, scaled), dims, AllBut(in.x.shape().rank(), in.class_dim));
    Value grad = ir::Select(in.onehot, spread, Full(0, acc, dims));
    return AtenFromIr(ir::Convert(grad, in.type), device);
  });
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::nll_loss_forward(const at::Tensor& self, const at::Tensor& target,
                                                                        const std::optional<at::Tensor>& weight,
                                                                        int64_t reduction, int64_t ignore_index) {
  XLA_COUNT("nll_loss_forward");
  return NllForward("nll_loss", self, target, weight, reduction, ignore_index, false);
}

at::Tensor XLANativeFunctions::nll_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                 const at::Tensor& target, const std::optional<at::Tensor>& weight,
                                                 int64_t reduction, int64_t ignore_index,
                                                 const at::Tensor& total_weight) {
  XLA_COUNT("nll_loss_backward");
  return NllBackward("nll_loss_backward", grad_output, self, target, weight, reduction, ignore_index, total_weight,
                     false);
}

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::nll_loss2d_forward(const at::Tensor& self,
                                                                          const at::Tensor& target,
                                                                          const std::optional<at::Tensor>& weight,
                                                                          int64_t reduction, int64_t ignore_index) {
  XLA_COUNT("nll_loss2d_forward");
  return NllForward("nll_loss2d", self, target, weight, reduction, ignore_index, true);
}

at::Tensor XLANativeFunctions::nll_loss2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                   const at::Tensor& target, const std::optional<at::Tensor>& weight,
                                                   int64_t reduction, int64_t ignore_index,
                                                   const at::Tensor& total_weight) {
  XLA_COUNT("nll_loss2d_backward");
  return NllBackward("nll_loss2d_backward", grad_output, self, target, weight, reduction, ignore_index, total_weight,
                     true);
}

}  // namespace torch_xla
