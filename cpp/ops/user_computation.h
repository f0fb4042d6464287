#pragma once
// Calling, on XLA tensors, a computation built in Python with torch_xla.core.xla_builder
// (a StableHLO function, ir/user_function.h).
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace torch_xla {

// An element type by its XLA name ("f32", "s64", "pred", "bf16", "c64"...) and dimensions:
// how xla_builder writes a shape.
using BuilderShape = std::pair<std::string, std::vector<int64_t>>;

// The results of the function `function_text` (a func.func named `symbol`, taking
// `parameters` and returning `results`) called on `inputs`, as new XLA tensors on their
// device. `op_name` names the op in messages. Throws c10::Error naming the op when there
// are no inputs, an input is not an XLA tensor or is on another device, or an input's
// device shape differs from its parameter.
std::vector<at::Tensor> CallUserComputation(const std::string& op_name, const std::vector<at::Tensor>& inputs,
                                            const std::string& symbol, const std::string& function_text,
                                            const std::vector<BuilderShape>& parameters,
                                            const std::vector<BuilderShape>& results);

// The shape a computation's parameter for `tensor` has: the element type the device
// holds it in (which a precision mode such as XLA_USE_BF16 changes) and its sizes.
BuilderShape BuilderShapeOf(const at::Tensor& tensor);

}  // namespace torch_xla
