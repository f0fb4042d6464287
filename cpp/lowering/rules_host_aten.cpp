// Lowering of ir::HostAtenCall: a typed-FFI custom call of the host kernel that runs one
// of PyTorch's CPU kernels; the node's attrs are the kernel's config.

#include "host/kernel_targets.h"
#include "lowering/lowering_context.h"

namespace torch_xla::lowering {
namespace {

std::vector<Ssa> LowerHostAten(LoweringContext& ctx, const Node& node, const std::vector<Ssa>& operands) {
  return EmitHostKernelCall(ctx, host::kHostAtenTarget, operands, node.shapes(), node.attrs().ints);
}
LoweringRule host_aten_rule("xla::host_aten", LowerHostAten);

}  // namespace
}  // namespace torch_xla::lowering
