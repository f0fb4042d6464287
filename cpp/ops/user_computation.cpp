#include "ops/user_computation.h"

#include <c10/util/Exception.h>

#include <array>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "aten/bridge.h"
#include "ir/user_function.h"
#include "runtime/metrics.h"

namespace torch_xla {
namespace {

using runtime::ElementType;

// XLA's names of the element types, as xla_builder's Type constants spell them.
constexpr std::array<std::pair<std::string_view, ElementType>, 15> kXlaTypeNames{{
    {"pred", ElementType::kPred}, {"s8", ElementType::kS8},     {"s16", ElementType::kS16},
    {"s32", ElementType::kS32},   {"s64", ElementType::kS64},   {"u8", ElementType::kU8},
    {"u16", ElementType::kU16},   {"u32", ElementType::kU32},   {"u64", ElementType::kU64},
    {"f16", ElementType::kF16},   {"bf16", ElementType::kBF16}, {"f32", ElementType::kF32},
    {"f64", ElementType::kF64},   {"c64", ElementType::kC64},   {"c128", ElementType::kC128},
}};

std::string XlaTypeName(ElementType type) {
  for (const auto& [name, t] : kXlaTypeNames)
    if (t == type) return std::string(name);
  return "?";
}

ir::Shape ParseShape(const BuilderShape& shape, const std::string& where) {
  for (const auto& [name, type] : kXlaTypeNames) {
    if (name != shape.first) continue;
    for (int64_t d : shape.second) TORCH_CHECK_VALUE(d >= 0, where, ": negative dimension ", d, " in a shape");
    return ir::Shape(type, shape.second);
  }
  TORCH_CHECK_VALUE(false, where, ": unknown element type '", shape.first, "'");
}

}  // namespace

std::vector<at::Tensor> CallUserComputation(const std::string& op_name, const std::vector<at::Tensor>& inputs,
                                            const std::string& symbol, const std::string& function_text,
                                            const std::vector<BuilderShape>& parameters,
                                            const std::vector<BuilderShape>& results) {
  const std::string where = "user_computation(" + op_name + ")";
  XLA_COUNT("user_computation");
  TORCH_CHECK(!inputs.empty(), where, ": expected at least 1 input tensor.");
  auto function = std::make_shared<ir::UserFunction>();
  function->op_name = op_name;
  function->symbol = symbol;
  function->text = function_text;
  for (const BuilderShape& p : parameters) function->parameters.push_back(ParseShape(p, where));
  for (const BuilderShape& r : results) function->results.push_back(ParseShape(r, where));

  std::vector<ir::Value> operands;
  int device = -1;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    TORCH_CHECK(IsXlaTensor(inputs[i]), where, ": input ", i, " is a ", inputs[i].device(), " tensor ",
                DescribeTensor(inputs[i]), ", expected a tensor on an XLA device");
    XlaTensorPtr x = GetXlaTensor(inputs[i], "user_computation");
    TORCH_CHECK(device < 0 || x->device() == device, where, ": expected every input on one device, got xla:", device,
                " and xla:", x->device());
    device = x->device();
    operands.push_back(x->GetIrValue());
  }
  std::vector<ir::Value> values;
  try {
    values = ir::CallUserFunction(function, operands);
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, e.what());
  }
  std::vector<at::Tensor> out;
  out.reserve(values.size());
  for (const ir::Value& v : values) out.push_back(AtenFromIr(v, device));
  return out;
}

BuilderShape BuilderShapeOf(const at::Tensor& tensor) {
  if (IsXlaTensor(tensor)) {
    const ir::Shape& shape = GetXlaTensor(tensor, "tensor_shape")->shape();
    return {XlaTypeName(shape.type), shape.dims};
  }
  return {XlaTypeName(ElementTypeOf(tensor.scalar_type())), tensor.sizes().vec()};
}

}  // namespace torch_xla
