#include "ir/user_function.h"

#include <stdexcept>

namespace torch_xla::ir {
namespace {

Attrs TextHash(const UserFunction& function) {
  Attrs attrs;
  attrs.ints.push_back(static_cast<int64_t>(HashString(function.text)));
  return attrs;
}

// The symbols a function may have without quoting in MLIR: [A-Za-z_][A-Za-z0-9_$.]*.
bool IsBareSymbol(const std::string& symbol) {
  if (symbol.empty() || symbol == "main") return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(symbol[0])) return false;
  for (char c : symbol)
    if (!letter(c) && !(c >= '0' && c <= '9') && c != '$' && c != '.') return false;
  return true;
}

}  // namespace

OpKind UserCallOp() {
  static const OpKind kind = OpKind::Get("xla::user_computation");
  return kind;
}

UserCallNode::UserCallNode(UserFunctionPtr function, std::vector<Value> operands)
    : Node(UserCallOp(), std::move(operands), function->results, TextHash(*function)),
      function_(std::move(function)) {}

std::vector<Value> CallUserFunction(const UserFunctionPtr& function, const std::vector<Value>& operands) {
  const std::string where = "user_computation(" + function->op_name + ")";
  if (!IsBareSymbol(function->symbol))
    throw std::invalid_argument(where + ": the function symbol '" + function->symbol +
                                "' is not an MLIR identifier (letters, digits, _, $ and ., not 'main')");
  if (function->results.empty()) throw std::invalid_argument(where + ": the computation returns nothing");
  if (operands.size() != function->parameters.size())
    throw std::invalid_argument(where + ": expected " + std::to_string(function->parameters.size()) +
                                " input tensors, got " + std::to_string(operands.size()));
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].shape() != function->parameters[i])
      throw std::invalid_argument(where + ": input " + std::to_string(i) + " is " + operands[i].shape().ToString() +
                                  " but the computation's parameter " + std::to_string(i) + " is " +
                                  function->parameters[i].ToString());
  }
  NodePtr node = std::make_shared<UserCallNode>(function, operands);
  std::vector<Value> results;
  for (uint32_t i = 0; i < node->num_outputs(); ++i) results.emplace_back(node, i);
  return results;
}

}  // namespace torch_xla::ir
