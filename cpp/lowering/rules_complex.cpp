// Lowering rules of the complex-number ops: the parts of a complex value and the
// Fourier transforms (see ir/builder_complex.h).
#include <string>

#include "lowering/lowering_context.h"

namespace torch_xla::lowering {
namespace {

// stablehlo.real / stablehlo.imag: the node's shape already has the part type.
std::vector<Ssa> LowerPart(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return {ctx.Emit(node.op().name(), operands, node.shape())};
}
LoweringRule real_rule("stablehlo.real", LowerPart);
LoweringRule imag_rule("stablehlo.imag", LowerPart);

const char* kFftTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

// attrs.ints: [fft type (ir::FftType, an index into kFftTypes), lengths...].
std::vector<Ssa> LowerFft(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const auto& a = node.attrs().ints;
  std::string attrs = std::string("fft_type = #stablehlo<fft_type ") + kFftTypes[a[0]] +
                      ">, fft_length = " + I64Array(std::vector<int64_t>(a.begin() + 1, a.end()));
  return {ctx.Emit("stablehlo.fft", operands, node.shape(), attrs)};
}
LoweringRule fft_rule("stablehlo.fft", LowerFft);

}  // namespace
}  // namespace torch_xla::lowering
