// Lowering rules of the complex-number ops: the parts of a complex value and the
// Fourier transforms (see ir/builder_complex.h).
#include <string>

#include "ir/builder_complex.h"
#include "lowering/lowering_context.h"

namespace torch_xla::lowering {
namespace {

// stablehlo.real / stablehlo.imag: the node's shape already has the part type.
std::vector<Ssa> LowerPart(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return {ctx.Emit(node.op().name(), operands, node.shape())};
}
LoweringRule real_rule("stablehlo.real", LowerPart);
LoweringRule imag_rule("stablehlo.imag", LowerPart);

// By ir::FftType.
const char* kFftTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

std::vector<Ssa> LowerFft(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  const ir::FftAttrs a = ir::FftAttrs::FromAttrs(node.attrs());
  std::string attrs = std::string("fft_type = #stablehlo<fft_type ") + kFftTypes[static_cast<int64_t>(a.type)] +
                      ">, fft_length = " + I64Array(a.lengths);
  return {ctx.Emit("stablehlo.fft", operands, node.shape(), attrs)};
}
LoweringRule fft_rule("stablehlo.fft", LowerFft);

}  // namespace
}  // namespace torch_xla::lowering
