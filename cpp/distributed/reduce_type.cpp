#include "distributed/reduce_type.h"

#include <c10/util/Exception.h>

#include <map>

namespace torch_xla {

ir::ReduceKind ParseReduceType(const std::string& name, const char* op) {
  using ir::ReduceKind;
  static const std::map<std::string, ReduceKind> kinds = {
      {"sum", ReduceKind::kSum}, {"mul", ReduceKind::kProd}, {"and", ReduceKind::kAnd},
      {"or", ReduceKind::kOr},   {"min", ReduceKind::kMin},  {"max", ReduceKind::kMax}};
  auto it = kinds.find(name);
  TORCH_CHECK(it != kinds.end(), op, ": unknown reduce type '", name,
              "'; expected one of sum, mul, and, or, min, max");
  return it->second;
}

}  // namespace torch_xla
