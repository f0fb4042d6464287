#include "runtime/replica_rendezvous.h"

namespace torch_xla::runtime::internal {

std::string JoinOrdinals(const std::vector<int>& ordinals) {
  std::string out;
  for (std::size_t i = 0; i < ordinals.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(ordinals[i]);
  }
  return out;
}

}  // namespace torch_xla::runtime::internal
