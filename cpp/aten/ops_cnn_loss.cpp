// CNN layer kernels, part 1: log_softmax (forward and backward), the negative
// log-likelihood loss (nll_loss, nll_loss2d) and batch normalization.
//
// Low-precision inputs (bf16, f16) are computed in f32 and rounded at the end, as
// PyTorch's CPU kernels do. Gathers by class index (nll_loss) are one-hot selects along
// the class dimension followed by a sum, which XLA fuses into a single loop. Batch norm's
// running statistics are updated in place on their XLA tensors: native_batch_norm's
// schema does not mark them as written, so functionalization hands us the inner tensors
// and we replace their IR value.
#include <ATen/ATen.h>
#include <ATen/FunctionalTensorWrapper.h>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"
#include "aten/xla_tensor_impl.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::ReduceKind;
using ir::Value;
using runtime::ElementType;



std::vector<int64_t> AllDims(int64_t rank) {
  std::vector<int64_t> d;
  for (int64_t i = 0; i < rank; ++i) d.push_back(i);
  return d;
}

std::vector<int64_t> AllBut(int64_t rank, int64_t skip) {
  std::vector<int64_t> d;
  for (int64_t i = 0; i < rank; ++i)
    if (i != skip) d.push_back(i);
  return d;
}

// Reduces dimension `dim` away and broadcasts the result back to v's shape.
Value ReduceBack(ReduceKind kind, const Value& v, int64_t dim) {
  if (v.shape().rank() == 0) return v;
  Value r = ir::Reduce(kind, v, {dim});
  return ir::BroadcastInDim(r, v.shape().dims, AllBut(v.shape().rank(), dim));
}

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
  TORCH_CHECK(target.scalar_type() == at::kLong || target.scalar_type() == at::kByte, op,
              ": expected target of scalar type Long (or Byte), but got ", DescribeTensor(target));
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

// ---------------------------------------------------------------------------------
// batch norm

// Replaces the value of an XLA tensor that an op updates in place although its schema
// does not say so (native_batch_norm's running statistics).
void AssignInPlace(const at::Tensor& t, const Value& v, const char* op) {
  at::Tensor inner = t;
  if (at::functionalization::impl::isFunctionalTensor(t)) {
    at::functionalization::impl::sync(t);
    inner = at::functionalization::impl::from_functional_tensor(t);
  }
  auto* impl = dynamic_cast<XlaTensorImpl*>(inner.unsafeGetTensorImpl());
  TORCH_CHECK(impl, op, ": expected the running statistics on the XLA device, got ", DescribeTensor(t));
  const XlaTensorPtr& dst = impl->tensor();
  dst->SetIr(ir::Convert(v, dst->shape().type));
}

bool Defined(const std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

void CheckChannelTensor(const char* op, const char* name, const std::optional<at::Tensor>& t, const at::Tensor& input) {
  if (!Defined(t)) return;
  TORCH_CHECK(t->numel() == input.size(1), op, ": expected ", name, " to have ", input.size(1),
              " elements (the input's channels), got ", DescribeTensor(*t), " for input ", DescribeTensor(input));
  TORCH_CHECK(at::isFloatingType(t->scalar_type()), op, ": expected a floating point ", name, ", got ",
              DescribeTensor(*t));
  TORCH_CHECK(IsXlaTensor(*t), op, ": expected ", name, " on the XLA device, got a ", t->device(), " tensor");
}

// A [C] tensor (or `fill` when undefined) in type `acc`, broadcast along dimension 1.
Value ChannelOperand(const std::optional<at::Tensor>& t, double fill, ElementType acc, const std::vector<int64_t>& dims,
                     const char* op) {
  if (!Defined(t)) return Full(fill, acc, dims);
  Value v = ir::Reshape(ir::Convert(GetXlaTensor(*t, op)->GetIrValue(), acc), {dims[1]});
  return ir::BroadcastInDim(v, dims, {1});
}

Value ChannelValue(const std::optional<at::Tensor>& t, ElementType acc, const char* op) {
  Value v = GetXlaTensor(*t, op)->GetIrValue();
  return ir::Reshape(ir::Convert(v, acc), {v.shape().numel()});
}

std::vector<int64_t> NonChannelDims(int64_t rank) { return AllBut(rank, 1); }

}  // namespace

at::Tensor XLANativeFunctions::_log_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  XLA_COUNT("_log_softmax");
  const char* op = "log_softmax";
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(self));
  int64_t d = WrapDim(dim, self.dim(), op);
  XlaTensorPtr x = GetXlaTensor(self, op);
  ElementType type = x->shape().type;
  ElementType out_type = half_to_float && AccumulationType(type) != type ? ElementType::kF32 : type;
  return AtenFromIr(Checked(op, [&] {
                      Value v = ir::Convert(x->GetIrValue(), AccumulationType(type));
                      // x - max - log(sum(exp(x - max))): no overflow for large inputs.
                      Value shifted = Sub(v, ReduceBack(ReduceKind::kMax, v, d));
                      Value lse = ir::Unary(ir::op::kLog, ReduceBack(ReduceKind::kSum, ir::Unary(ir::op::kExp, shifted), d));
                      return ir::Convert(Sub(shifted, lse), out_type);
                    }),
                    x->device());
}

at::Tensor XLANativeFunctions::_log_softmax_backward_data(const at::Tensor& grad_output, const at::Tensor& output,
                                                          int64_t dim, at::ScalarType input_dtype) {
  XLA_COUNT("_log_softmax_backward_data");
  const char* op = "log_softmax_backward";
  TORCH_CHECK(grad_output.sizes() == output.sizes(), op, ": grad_output ", DescribeTensor(grad_output),
              " and output ", DescribeTensor(output), " must have the same size");
  TORCH_CHECK(at::isFloatingType(grad_output.scalar_type()) && grad_output.scalar_type() == output.scalar_type(), op,
              ": expected floating point grad_output and output of the same dtype, got ", DescribeTensor(grad_output),
              " and ", DescribeTensor(output));
  TORCH_CHECK(at::isFloatingType(input_dtype), op, ": expected a floating point input_dtype, got ", input_dtype);
  int64_t d = WrapDim(dim, output.dim(), op);
  int device = CommonDevice({&grad_output, &output}, op);
  ElementType type = ElementTypeOf(grad_output.scalar_type());
  ElementType acc = AccumulationType(type);
  Value g = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  Value y = ir::Convert(GetXlaTensor(output, op)->GetIrValue(), acc);
  return AtenFromIr(Checked(op, [&] {
                      // dx = dy - exp(y) * sum(dy)
                      Value r = Sub(g, Mul(ir::Unary(ir::op::kExp, y), ReduceBack(ReduceKind::kSum, g, d)));
                      return ir::Convert(r, ElementTypeOf(input_dtype));
                    }),
                    device);
}

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

std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::native_batch_norm(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var, bool training,
    double momentum, double eps) {
  XLA_COUNT("native_batch_norm");
  const char* op = "native_batch_norm";
  TORCH_CHECK(input.dim() >= 2, op, ": expected an input with at least 2 dimensions [N, C, ...], got ",
              DescribeTensor(input));
  TORCH_CHECK(at::isFloatingType(input.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(input));
  CheckChannelTensor(op, "weight", weight, input);
  CheckChannelTensor(op, "bias", bias, input);
  CheckChannelTensor(op, "running_mean", running_mean, input);
  CheckChannelTensor(op, "running_var", running_var, input);
  TORCH_CHECK(training || (Defined(running_mean) && Defined(running_var)), op,
              ": running_mean and running_var must be defined in evaluation mode (input ", DescribeTensor(input), ")");
  TORCH_CHECK(Defined(running_mean) == Defined(running_var), op,
              ": running_mean and running_var must be both defined or both undefined");
  XlaTensorPtr x = GetXlaTensor(input, op);
  int device = x->device();
  ElementType type = x->shape().type;
  ElementType acc = AccumulationType(type);
  // Statistics come out in f32 when the parameters' type differs from a low-precision
  // input's (PyTorch's mixed-type batch norm), else in the input's type.
  bool mixed = false;
  for (const auto* t : {&weight, &bias, &running_mean, &running_var})
    if (Defined(*t) && t->value().scalar_type() != input.scalar_type()) mixed = true;
  ElementType stat_type = mixed ? ElementType::kF32 : type;
  const std::vector<int64_t> dims = x->shape().dims;
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t channels = dims[1];
  int64_t count = channels ? x->shape().numel() / channels : 0;
  return Checked(op, [&] {
    Value v = ir::Convert(x->GetIrValue(), acc);
    Value w = ChannelOperand(weight, 1, acc, dims, op);
    Value b = ChannelOperand(bias, 0, acc, dims, op);
    std::vector<int64_t> reduced = NonChannelDims(rank);
    auto per_channel = [&](const Value& c) { return ir::BroadcastInDim(c, dims, {1}); };
    Value mean, invstd;
    if (training) {
      Value n = Full(static_cast<double>(count), acc, {channels});
      mean = Div(ir::Reduce(ReduceKind::kSum, v, reduced), n);
      Value centered = Sub(v, per_channel(mean));
      Value var_sum = ir::Reduce(ReduceKind::kSum, Mul(centered, centered), reduced);
      Value var = Div(var_sum, n);
      invstd = ir::Unary(ir::op::kRsqrt, Add(var, Full(eps, acc, {channels})));
      if (Defined(running_mean)) {
        // A graph parameter, not a constant: with momentum=None the factor changes every
        // step (1 / num_batches_tracked), and must not cause a recompile.
        Value m = ir::Broadcast(IrScalar(at::Scalar(momentum), acc), {channels});
        Value keep = Sub(Full(1, acc, {channels}), m);
        Value rm = ChannelValue(running_mean, acc, op), rv = ChannelValue(running_var, acc, op);
        Value unbiased = Div(var_sum, Full(static_cast<double>(count - 1), acc, {channels}));
        Value new_rm = Add(Mul(keep, rm), Mul(m, mean));
        Value new_rv = Add(Mul(keep, rv), Mul(m, unbiased));
        AssignInPlace(*running_mean, ir::Reshape(new_rm, running_mean->sizes().vec()), op);
        AssignInPlace(*running_var, ir::Reshape(new_rv, running_var->sizes().vec()), op);
      }
    } else {
      mean = ChannelValue(running_mean, acc, op);
      invstd = ir::Unary(ir::op::kRsqrt, Add(ChannelValue(running_var, acc, op), Full(eps, acc, {channels})));
    }
    Value out = Add(Mul(Mul(Sub(v, per_channel(mean)), per_channel(invstd)), w), b);
    at::Tensor result = AtenFromIr(ir::Convert(out, type), device);
    if (!training) {
      return std::make_tuple(result, AtenFromIr(Full(0, stat_type, {0}), device),
                             AtenFromIr(Full(0, stat_type, {0}), device));
    }
    return std::make_tuple(result, AtenFromIr(ir::Convert(mean, stat_type), device),
                           AtenFromIr(ir::Convert(invstd, stat_type), device));
  });
}

// The forms of batch norm that AOTAutograd's decompositions (torch.compile) produce; the
// running statistics, when given, are updated in place as native_batch_norm does.
std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::_native_batch_norm_legit(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    at::Tensor& running_mean, at::Tensor& running_var, bool training, double momentum, double eps) {
  return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::_native_batch_norm_legit(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    bool training, double momentum, double eps) {
  return native_batch_norm(input, weight, bias, std::nullopt, std::nullopt, training, momentum, eps);
}

// _batch_norm_with_update: training batch norm updating the running statistics in
// place (as native_batch_norm does), with an empty reserve as on the CPU.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::_batch_norm_with_update(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    at::Tensor& running_mean, at::Tensor& running_var, double momentum, double eps) {
  XLA_COUNT("_batch_norm_with_update");
  auto [out, save_mean, save_invstd] =
      native_batch_norm(input, weight, bias, running_mean, running_var, true, momentum, eps);
  at::Tensor reserve = AtenFromIr(ir::Constant(0, ir::Shape(runtime::ElementType::kU8, {0})),
                                  GetXlaTensor(input, "_batch_norm_with_update")->device());
  return std::make_tuple(out, save_mean, save_invstd, reserve);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::_native_batch_norm_legit_no_training(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    const at::Tensor& running_mean, const at::Tensor& running_var, double momentum, double eps) {
  return native_batch_norm(input, weight, bias, running_mean, running_var, false, momentum, eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> XLANativeFunctions::native_batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean, const std::optional<at::Tensor>& save_invstd, bool train, double eps,
    std::array<bool, 3> output_mask) {
  XLA_COUNT("native_batch_norm_backward");
  const char* op = "native_batch_norm_backward";
  TORCH_CHECK(input.dim() >= 2, op, ": expected an input with at least 2 dimensions [N, C, ...], got ",
              DescribeTensor(input));
  TORCH_CHECK(at::isFloatingType(input.scalar_type()), op, ": expected a floating point input, got ",
              DescribeTensor(input));
  TORCH_CHECK(grad_out.sizes() == input.sizes(), op, ": grad_out ", DescribeTensor(grad_out),
              " and input ", DescribeTensor(input), " must have the same size");
  CheckChannelTensor(op, "weight", weight, input);
  if (train) {
    TORCH_CHECK(Defined(save_mean) && Defined(save_invstd), op,
                ": save_mean and save_invstd must be defined in training mode");
    CheckChannelTensor(op, "save_mean", save_mean, input);
    CheckChannelTensor(op, "save_invstd", save_invstd, input);
  } else {
    TORCH_CHECK(Defined(running_mean) && Defined(running_var), op,
                ": running_mean and running_var must be defined in evaluation mode");
    CheckChannelTensor(op, "running_mean", running_mean, input);
    CheckChannelTensor(op, "running_var", running_var, input);
  }
  int device = CommonDevice({&grad_out, &input}, op);
  XlaTensorPtr x = GetXlaTensor(input, op);
  ElementType type = x->shape().type;
  ElementType acc = AccumulationType(type);
  ElementType param_type = Defined(weight) ? ElementTypeOf(weight->scalar_type()) : type;
  const std::vector<int64_t> dims = x->shape().dims;
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t channels = dims[1];
  int64_t count = channels ? x->shape().numel() / channels : 0;
  return Checked(op, [&] {
    Value v = ir::Convert(x->GetIrValue(), acc);
    Value g = ir::Convert(GetXlaTensor(grad_out, op)->GetIrValue(), acc);
    auto per_channel = [&](const Value& c) { return ir::BroadcastInDim(c, dims, {1}); };
    Value mean, invstd;
    if (train) {
      mean = ChannelValue(save_mean, acc, op);
      invstd = ChannelValue(save_invstd, acc, op);
    } else {
      mean = ChannelValue(running_mean, acc, op);
      invstd = ir::Unary(ir::op::kRsqrt, Add(ChannelValue(running_var, acc, op), Full(eps, acc, {channels})));
    }
    std::vector<int64_t> reduced = NonChannelDims(rank);
    Value centered = Sub(v, per_channel(mean));
    Value sum_g = ir::Reduce(ReduceKind::kSum, g, reduced);
    Value dot = ir::Reduce(ReduceKind::kSum, Mul(g, centered), reduced);
    at::Tensor grad_input, grad_weight, grad_bias;
    if (output_mask[0]) {
      Value w = Defined(weight) ? ChannelValue(weight, acc, op) : Full(1, acc, {channels});
      Value scale = Mul(invstd, w);
      Value gi;
      if (train) {
        // dx = (dy - mean(dy) - xmu * sum(dy * xmu) * invstd^2 / n) * invstd * w
        Value n = Full(static_cast<double>(count), acc, {channels});
        Value mean_g = Div(sum_g, n);
        Value k = Div(Mul(dot, Mul(invstd, invstd)), n);
        gi = Mul(Sub(Sub(g, per_channel(mean_g)), Mul(centered, per_channel(k))), per_channel(scale));
      } else {
        gi = Mul(g, per_channel(scale));
      }
      grad_input = AtenFromIr(ir::Convert(gi, type), device);
    }
    if (output_mask[1]) grad_weight = AtenFromIr(ir::Convert(Mul(dot, invstd), param_type), device);
    if (output_mask[2]) grad_bias = AtenFromIr(ir::Convert(sum_g, param_type), device);
    return std::make_tuple(grad_input, grad_weight, grad_bias);
  });
}

}  // namespace torch_xla
