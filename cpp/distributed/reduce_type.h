#pragma once
// The reduce_type names that collectives take ("sum", "mul", "and", "or", "min", "max"),
// for the replicas' collectives and for those between the pieces of manual sharding.
#include <string>

#include "ir/builder.h"

namespace torch_xla {

// The reduction `name` stands for; a c10::Error naming `op` for any other name.
ir::ReduceKind ParseReduceType(const std::string& name, const char* op);

}  // namespace torch_xla
