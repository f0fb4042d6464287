#include "ir/builder_complex.h"

#include <stdexcept>
#include <string>

#include "ir/attrs_reader.h"

namespace torch_xla::ir {
namespace {

[[noreturn]] void Fail(const std::string& message) { throw std::invalid_argument(message); }

Value Part(const char* name, const Value& v) {
  if (!runtime::IsComplex(v.shape().type))
    Fail(std::string(name) + ": expected a complex value, got " + v.shape().ToString());
  static const OpKind kReal = OpKind::Get("stablehlo.real");
  static const OpKind kImag = OpKind::Get("stablehlo.imag");
  return Value(MakeNode(name[0] == 'r' ? kReal : kImag, std::vector<Value>{v},
                        Shape(PartType(v.shape().type), v.shape().dims)));
}

const char* FftTypeName(FftType type) {
  switch (type) {
    case FftType::kFft: return "FFT";
    case FftType::kIfft: return "IFFT";
    case FftType::kRfft: return "RFFT";
    case FftType::kIrfft: return "IRFFT";
  }
  return "?";
}

}  // namespace

ElementType PartType(ElementType complex_type) {
  if (complex_type == ElementType::kC64) return ElementType::kF32;
  if (complex_type == ElementType::kC128) return ElementType::kF64;
  Fail("complex parts: " + std::string(runtime::MlirTypeName(complex_type)) + " is not a complex type");
}

ElementType ComplexTypeOf(ElementType part_type) {
  if (part_type == ElementType::kF32) return ElementType::kC64;
  if (part_type == ElementType::kF64) return ElementType::kC128;
  Fail("complex: parts of type " + std::string(runtime::MlirTypeName(part_type)) +
       " have no complex type (f32 or f64 only)");
}

Value Real(const Value& v) { return Part("real", v); }
Value Imag(const Value& v) { return Part("imag", v); }

Value Fft(FftType type, const Value& v, const std::vector<int64_t>& lengths) {
  const Shape& in = v.shape();
  int64_t k = static_cast<int64_t>(lengths.size());
  std::string what = std::string("fft (") + FftTypeName(type) + ", lengths " + DimsToString(lengths) + ") of " +
                     in.ToString();
  if (k < 1 || k > 3 || k > in.rank()) Fail(what + ": 1 to 3 innermost dimensions are transformed");
  for (int64_t n : lengths)
    if (n < 1) Fail(what + ": every length must be positive");
  bool real_operand = type == FftType::kRfft;
  if (real_operand ? !(in.type == ElementType::kF32 || in.type == ElementType::kF64) : !runtime::IsComplex(in.type))
    Fail(what + (real_operand ? ": the operand must be f32 or f64" : ": the operand must be complex"));
  std::vector<int64_t> out = in.dims;
  int64_t first = in.rank() - k;
  for (int64_t i = 0; i < k; ++i) {
    int64_t expected = (type == FftType::kIrfft && i == k - 1) ? lengths[i] / 2 + 1 : lengths[i];
    if (in.dims[first + i] != expected)
      Fail(what + ": innermost dimension " + std::to_string(i) + " must be " + std::to_string(expected));
  }
  ElementType result_type = in.type;
  if (type == FftType::kRfft) {
    out.back() = lengths.back() / 2 + 1;
    result_type = ComplexTypeOf(in.type);
  } else if (type == FftType::kIrfft) {
    out.back() = lengths.back();
    result_type = PartType(in.type);
  }
  static const OpKind kFft = OpKind::Get("stablehlo.fft");
  return Value(MakeNode(kFft, std::vector<Value>{v}, Shape(result_type, std::move(out)),
                        FftAttrs{type, lengths}.ToAttrs()));
}

// [type, lengths...]
Attrs FftAttrs::ToAttrs() const {
  Attrs attrs;
  attrs.ints.push_back(static_cast<int64_t>(type));
  AppendInts(attrs.ints, lengths);
  return attrs;
}

FftAttrs FftAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "fft");
  const int64_t type = r.Next();
  if (type < static_cast<int64_t>(FftType::kFft) || type > static_cast<int64_t>(FftType::kIrfft)) r.Malformed();
  return {static_cast<FftType>(type), r.TakeRest()};
}

}  // namespace torch_xla::ir
