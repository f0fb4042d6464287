#pragma once
// Computations built in Python (torch_xla.core.xla_builder) and called by the graph.
//
// The Python builder writes a computation as one StableHLO function (MLIR text); the
// graph holds a node that calls it on XLA tensors, with the result shapes the builder
// inferred. The lowering adds the function to the module once, however many nodes call
// it, and emits a func.call (lowering/rules_control.cpp). The text is not parsed here:
// its parameter and result shapes are given beside it, and the compiler checks the rest.
#include <memory>
#include <string>
#include <vector>

#include "ir/node.h"

namespace torch_xla::ir {

struct UserFunction {
  std::string op_name;  // the name the user gave the op ("xla::_op_slice_and_add"), for messages
  std::string symbol;   // the function's symbol in `text`, without the '@'
  std::string text;     // "func.func private @symbol(...) -> (...) { ... }"
  std::vector<Shape> parameters;
  std::vector<Shape> results;
};
using UserFunctionPtr = std::shared_ptr<const UserFunction>;

// A call of a user function. Its structural hash covers the function's text (appended
// to attrs.ints), so graphs calling different functions never share a compiled graph.
class UserCallNode : public Node {
 public:
  UserCallNode(UserFunctionPtr function, std::vector<Value> operands);
  const UserFunction& function() const { return *function_; }

 private:
  UserFunctionPtr function_;
};

OpKind UserCallOp();

// The results of calling `function` on `operands`. Throws std::invalid_argument naming
// the op when the operands' number or shapes differ from the function's parameters, or
// the function has no results or an invalid symbol.
std::vector<Value> CallUserFunction(const UserFunctionPtr& function, const std::vector<Value>& operands);

}  // namespace torch_xla::ir
