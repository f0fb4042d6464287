// ir::HostAtenCall (declared in ir/builder.h).
#include <stdexcept>

#include "ir/builder.h"

namespace torch_xla::ir {

std::vector<Value> HostAtenCall(std::vector<Value> operands, std::vector<Shape> results, std::vector<int64_t> config) {
  static const OpKind kHostAten = OpKind::Get("xla::host_aten");
  if (results.empty()) throw std::invalid_argument("host ATen call: no results");
  Attrs attrs;
  attrs.ints = std::move(config);
  NodePtr node = MakeNode(kHostAten, std::move(operands), std::move(results), std::move(attrs));
  std::vector<Value> values;
  for (uint32_t i = 0; i < node->num_outputs(); ++i) values.emplace_back(node, i);
  return values;
}

}  // namespace torch_xla::ir
