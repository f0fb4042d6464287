// Random kernels of dropout and friends: bernoulli (dropout's mask on this backend),
// native_dropout and its backward, and random_ (torch.randint on the device). All draw
// from the per-device RNG state (tensor/rng_state.h), so xm.set_rng_state() repeats them.
#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "XLANativeFunctions.h"
#include "aten/kernel_util.h"
#include "tensor/rng_state.h"

namespace torch_xla {
namespace {

using ir::CompareDirection;
using ir::Value;
using runtime::ElementType;

const ir::OpKind kBitcastConvert = ir::OpKind::Get("stablehlo.bitcast_convert");

ElementType UniformType(ElementType t) { return t == ElementType::kF64 ? ElementType::kF64 : ElementType::kF32; }

// Bernoulli draws as a pred tensor of `dims`: uniform [0, 1) < p.
Value BernoulliMask(int device, const std::vector<int64_t>& dims, const Value& p) {
  Value u = RandomUniform(device, ir::Shape(p.shape().type, dims));
  return ir::Compare(CompareDirection::kLt, u, p);
}

// An exact 64-bit integer constant (doubles hold only 53 bits): built from two 32-bit
// halves, then reinterpreted as `type` (kU64 or kS64).
Value ExactInt(uint64_t bits, ElementType type, const std::vector<int64_t>& dims) {
  ir::Shape u64(ElementType::kU64, dims);
  Value v;
  if (bits < (uint64_t{1} << 53)) {
    v = ir::Constant(static_cast<double>(bits), u64);
  } else {
    Value hi = ir::Constant(static_cast<double>(bits >> 32), u64);
    Value lo = ir::Constant(static_cast<double>(bits & 0xffffffffu), u64);
    v = ir::Binary(ir::op::kOr, ir::Binary(ir::op::kShiftLeft, hi, ir::Constant(32, u64)), lo);
  }
  if (type == ElementType::kU64) return v;
  return Value(ir::MakeNode(kBitcastConvert, std::vector<Value>{v}, ir::Shape(type, dims)));
}

// Integers uniform in [from, from + range) (range 0 stands for 2^64), in the tensor's type.
at::Tensor RandomRange(const at::Tensor& self, int64_t from, uint64_t range, const char* op) {
  XlaTensorPtr x = GetXlaTensor(self, op);
  const auto& dims = x->shape().dims;
  ElementType type = x->shape().type;
  int device = x->device();
  Value result;
  if (range == 0) {
    Value bits = RandomBits(device, dims, true);
    result = Value(ir::MakeNode(kBitcastConvert, std::vector<Value>{bits}, ir::Shape(ElementType::kS64, dims)));
  } else {
    // As PyTorch's CPU generator: 64-bit draws for ranges of 2^32 and more.
    bool wide = range >= (uint64_t{1} << 32);
    Value bits = ir::Convert(RandomBits(device, dims, wide), ElementType::kU64);
    Value offset = ir::Binary(ir::op::kRemainder, bits, ExactInt(range, ElementType::kU64, dims));
    result = Value(ir::MakeNode(kBitcastConvert, std::vector<Value>{offset}, ir::Shape(ElementType::kS64, dims)));
    if (from != 0) result = ir::Binary(ir::op::kAdd, result, ExactInt(static_cast<uint64_t>(from), ElementType::kS64, dims));
  }
  return AtenFromIr(ir::Convert(result, type), device);
}

// The inclusive upper end of random_() without bounds: 2^digits for floats (every
// integer up to it is exact), the type's maximum for integers.
uint64_t DefaultUpper(at::ScalarType t, const char* op) {
  switch (t) {
    case at::kFloat: return uint64_t{1} << 24;
    case at::kDouble: return uint64_t{1} << 53;
    case at::kBFloat16: return uint64_t{1} << 8;
    case at::kHalf: return uint64_t{1} << 11;
    case at::kBool: return 1;
    case at::kByte: return 255;
    case at::kChar: return 127;
    case at::kShort: return 32767;
    case at::kInt: return 2147483647;
    case at::kLong: return static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    default: TORCH_CHECK(false, op, ": random_ is not supported for dtype ", t);
  }
}

// The lowest value random_(from, to) accepts for the type.
int64_t Lower(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return -(int64_t{1} << 24);
    case at::kDouble: return -(int64_t{1} << 53);
    case at::kBFloat16: return -(int64_t{1} << 8);
    case at::kHalf: return -(int64_t{1} << 11);
    case at::kBool: return 0;
    case at::kByte: return 0;
    case at::kChar: return -128;
    case at::kShort: return -32768;
    case at::kInt: return -2147483648LL;
    default: return std::numeric_limits<int64_t>::min();
  }
}

void CheckFromTo(const at::Tensor& self, int64_t from, int64_t to_inclusive, const char* op) {
  at::ScalarType t = self.scalar_type();
  int64_t lo = Lower(t);
  uint64_t hi = DefaultUpper(t, op);
  TORCH_CHECK(from >= lo && (from < 0 || static_cast<uint64_t>(from) <= hi), op, ": from=", from,
              " is out of bounds for ", t, " (expected a value in [", lo, ", ", hi, "])");
  TORCH_CHECK(to_inclusive >= lo && (to_inclusive < 0 || static_cast<uint64_t>(to_inclusive) <= hi), op,
              ": to - 1=", to_inclusive, " is out of bounds for ", t, " (expected a value in [", lo, ", ", hi, "])");
}

}  // namespace

// ---- bernoulli ---------------------------------------------------------------

at::Tensor XLANativeFunctions::bernoulli(const at::Tensor& self, double p, std::optional<at::Generator> generator) {
  XLA_COUNT("bernoulli");
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  XlaTensorPtr x = GetXlaTensor(self, "bernoulli");
  ElementType work = UniformType(x->shape().type);
  Value mask = BernoulliMask(x->device(), x->shape().dims, ir::Broadcast(IrScalar(p, work), x->shape().dims));
  return AtenFromIr(ir::Convert(mask, x->shape().type), x->device());
}

at::Tensor XLANativeFunctions::bernoulli(const at::Tensor& self, std::optional<at::Generator> generator) {
  XLA_COUNT("bernoulli");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "bernoulli: expected a floating point tensor of probabilities, got ",
              DescribeTensor(self));
  XlaTensorPtr x = GetXlaTensor(self, "bernoulli");
  Value p = ir::Convert(x->GetIrValue(), UniformType(x->shape().type));
  return AtenFromIr(ir::Convert(BernoulliMask(x->device(), x->shape().dims, p), x->shape().type), x->device());
}

at::Tensor XLANativeFunctions::bernoulli(const at::Tensor& self, const at::Tensor& p,
                                         std::optional<at::Generator> generator) {
  XLA_COUNT("bernoulli");
  TORCH_CHECK(at::isFloatingType(p.scalar_type()), "bernoulli_: expected a floating point tensor of probabilities, got ",
              DescribeTensor(p));
  int device = CommonDevice({&self, &p}, "bernoulli_");
  XlaTensorPtr x = GetXlaTensor(self, "bernoulli_");
  const auto& dims = x->shape().dims;
  ElementType work = UniformType(ElementTypeOf(p.scalar_type()));
  Value pv = Checked("bernoulli_", [&] { return ir::Broadcast(IrOperand(p, work, "bernoulli_"), dims); });
  return AtenFromIr(ir::Convert(BernoulliMask(device, dims, pv), x->shape().type), device);
}

// ---- dropout -----------------------------------------------------------------

std::tuple<at::Tensor, at::Tensor> XLANativeFunctions::native_dropout(const at::Tensor& input, double p,
                                                                      std::optional<bool> train) {
  XLA_COUNT("native_dropout");
  TORCH_CHECK(p >= 0 && p <= 1, "native_dropout: dropout probability has to be between 0 and 1, but got ", p);
  TORCH_CHECK(at::isFloatingType(input.scalar_type()), "native_dropout: expected a floating point input, got ",
              DescribeTensor(input));
  XlaTensorPtr x = GetXlaTensor(input, "native_dropout");
  const auto& dims = x->shape().dims;
  ElementType type = x->shape().type;
  int device = x->device();
  Value v = x->GetIrValue();
  if (train.has_value() && !*train) {
    return std::make_tuple(AtenFromIr(v, device), AtenFromIr(ir::Constant(1, ir::Shape(ElementType::kPred, dims)), device));
  }
  double keep = 1 - p;
  double scale = keep == 0 ? 0 : 1 / keep;
  ElementType work = UniformType(type);
  Value mask = BernoulliMask(device, dims, ir::Broadcast(IrScalar(keep, work), dims));
  Value out = ir::Binary(ir::op::kMultiply, ir::Binary(ir::op::kMultiply, v, ir::Convert(mask, type)),
                         ir::Broadcast(IrScalar(scale, type), dims));
  return std::make_tuple(AtenFromIr(out, device), AtenFromIr(mask, device));
}

at::Tensor XLANativeFunctions::native_dropout_backward(const at::Tensor& grad_output, const at::Tensor& mask,
                                                       double scale) {
  XLA_COUNT("native_dropout_backward");
  const char* op = "native_dropout_backward";
  TORCH_CHECK(mask.scalar_type() == at::kBool, op, ": Mask should be Bool Scalar Type, got ", DescribeTensor(mask));
  TORCH_CHECK(mask.sizes() == grad_output.sizes(), op, ": mask ", DescribeTensor(mask), " does not match grad_output ",
              DescribeTensor(grad_output));
  int device = CommonDevice({&grad_output, &mask}, op);
  Value g = GetXlaTensor(grad_output, op)->GetIrValue();
  // An integer gradient times the (float) scale is a float, as in eager.
  if (!runtime::IsFloating(g.shape().type)) g = ir::Convert(g, DefaultFloatType());
  ElementType type = g.shape().type;
  Value m = ir::Convert(GetXlaTensor(mask, op)->GetIrValue(), type);
  Value out = ir::Binary(ir::op::kMultiply, ir::Binary(ir::op::kMultiply, g, m),
                         ir::Broadcast(IrScalar(scale, type), g.shape().dims));
  return AtenFromIr(out, device);
}

// ---- random_ -----------------------------------------------------------------

at::Tensor XLANativeFunctions::random(const at::Tensor& self, std::optional<at::Generator> generator) {
  XLA_COUNT("random");
  uint64_t upper = DefaultUpper(self.scalar_type(), "random_");
  return RandomRange(self, 0, upper + 1, "random_");
}

at::Tensor XLANativeFunctions::random(const at::Tensor& self, int64_t from, std::optional<int64_t> to,
                                      std::optional<at::Generator> generator) {
  XLA_COUNT("random");
  if (to.has_value()) {
    TORCH_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", *to);
    CheckFromTo(self, from, *to - 1, "random_");
    return RandomRange(self, from, static_cast<uint64_t>(*to) - static_cast<uint64_t>(from), "random_");
  }
  uint64_t upper = DefaultUpper(self.scalar_type(), "random_");
  CheckFromTo(self, from, static_cast<int64_t>(upper), "random_");
  // [from, upper]; the full int64 range wraps to 0, which RandomRange reads as 2^64.
  return RandomRange(self, from, upper - static_cast<uint64_t>(from) + 1, "random_");
}

at::Tensor XLANativeFunctions::random(const at::Tensor& self, int64_t to, std::optional<at::Generator> generator) {
  XLA_COUNT("random");
  TORCH_CHECK(0 < to, "random_ expects 'from' to be less than 'to', but got from=0 >= to=", to);
  CheckFromTo(self, 0, to - 1, "random_");
  return RandomRange(self, 0, static_cast<uint64_t>(to), "random_");
}

}  // namespace torch_xla
