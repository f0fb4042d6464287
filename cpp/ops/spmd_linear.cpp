// nn.Linear in SPMD programs, on inputs of three or more dimensions or on a matrix that
// a view flattened from a larger value: one dot_general over the input's unflattened
// dimensions, and the same for the gradients, where PyTorch's matmul (or the caller's
// view) flattens the leading dimensions into one.
//
// Why: XLA's partitioner cannot keep a sharding of a minor dimension through a reshape
// that merges it with a major one. nn.MultiheadAttention (batch_first) transposes its
// input to [sequence, batch, embed] before the input projection; flattening that to
// [sequence * batch, embed] made XLA gather the batch-sharded activations on every
// device and compute the attention for the whole batch on each (data parallel SPMD
// ran the transformer step at 1.5x the replicated one); so did the view of the
// attention's output to [sequence * batch, embed] before the output projection. Without
// the reshapes (a view and its inverse fold away, ir::Reshape) the projections, and what
// follows them, stay sharded along the batch.
//
// Taken at linear's autograd key on XLA tensors in SPMD mode; everything else keeps
// PyTorch's composite (so does a backward that builds a graph of its own, create_graph).
#include <ATen/ATen.h>
#include <ATen/ops/linear_native.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <optional>

#include "aten/bridge.h"
#include "ops/kernel_util.h"
#include "runtime/sharding.h"

namespace torch_xla {
namespace {

using ir::Value;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

const ir::OpKind kReshapeOp = ir::OpKind::Get("stablehlo.reshape");

std::vector<int64_t> Range(int64_t begin, int64_t end) {
  std::vector<int64_t> dims;
  for (int64_t d = begin; d < end; ++d) dims.push_back(d);
  return dims;
}

std::vector<int64_t> Concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The input as [leading..., contracted...]: for an input of three or more dimensions its
// own dimensions (the last one contracted); for a matrix that a view made by flattening
// a larger value (attention's output, [seq, batch, heads, head_dim] -> [seq * batch,
// embed]), that value's dimensions, split where the matrix's rows end. Empty when
// neither applies.
struct Layout {
  std::vector<int64_t> leading, contracted;
};

std::optional<Layout> LayoutOf(const at::Tensor& input) {
  if (input.dim() >= 3) {
    std::vector<int64_t> dims(input.sizes().begin(), input.sizes().end());
    return Layout{std::vector<int64_t>(dims.begin(), dims.end() - 1), {dims.back()}};
  }
  if (input.dim() != 2) return std::nullopt;
  Value v = GetIrInput(input, "linear").v;
  if (v.node->op() != kReshapeOp || v.node->num_outputs() != 1) return std::nullopt;
  const std::vector<int64_t>& from = v.node->operand(0).shape().dims;
  int64_t rows = 1;
  for (std::size_t j = 0; j < from.size(); ++j) {
    rows *= from[j];
    if (rows == input.size(0) && j >= 1 && j + 1 < from.size())
      return Layout{std::vector<int64_t>(from.begin(), from.begin() + j + 1),
                    std::vector<int64_t>(from.begin() + j + 1, from.end())};
    if (rows > input.size(0)) break;
  }
  return std::nullopt;
}

class ContractLastLinear : public torch::autograd::Function<ContractLastLinear> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& weight,
                            const at::Tensor& bias, bool has_bias, const std::vector<int64_t>& leading,
                            const std::vector<int64_t>& contracted) {
    ctx->save_for_backward({input, weight});
    ctx->saved_data["bias"] = has_bias;
    ctx->saved_data["leading"] = leading;
    ctx->saved_data["contracted"] = contracted;
    IrInput in = GetIrInput(input, "linear");
    const int64_t out = weight.size(0), lead = static_cast<int64_t>(leading.size());
    // Reshapes of reshapes fold (ir::Reshape): x is the flattened value itself.
    Value x = ir::Reshape(in.v, Concat(leading, contracted));
    Value w = ir::Reshape(GetIrInput(weight, "linear").v, Concat({out}, contracted));
    Value y = ir::DotGeneral(x, w, {}, {}, Range(lead, x.shape().rank()), Range(1, w.shape().rank()),
                             in.v.shape().type);  // [leading..., out]
    if (has_bias) y = Add(y, ir::BroadcastInDim(GetIrInput(bias, "linear").v, y.shape().dims, {lead}));
    std::vector<int64_t> dims(input.sizes().begin(), input.sizes().end() - 1);
    dims.push_back(out);
    return AtenFromIr(ir::Reshape(y, dims), in.device);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    const at::Tensor& input = saved[0];
    const at::Tensor& weight = saved[1];
    const bool has_bias = ctx->saved_data["bias"].toBool();
    const at::Tensor& grad = grads[0];
    if (at::GradMode::is_enabled()) {
      // A differentiable backward (create_graph): PyTorch's own formulas.
      at::Tensor grad_rows = grad.flatten(0, -2);
      at::Tensor grad_input = at::matmul(grad, weight);
      at::Tensor grad_weight = at::matmul(grad_rows.t(), input.flatten(0, -2));
      at::Tensor grad_bias = has_bias ? grad_rows.sum(0) : at::Tensor();
      return {grad_input, grad_weight, grad_bias, at::Tensor(), at::Tensor(), at::Tensor()};
    }
    std::vector<int64_t> leading = ctx->saved_data["leading"].toIntVector();
    std::vector<int64_t> contracted = ctx->saved_data["contracted"].toIntVector();
    const int64_t out = weight.size(0), lead = static_cast<int64_t>(leading.size());
    IrInput g_in = GetIrInput(grad, "linear_backward");
    const runtime::ElementType type = g_in.v.shape().type;
    Value g = ir::Reshape(g_in.v, Concat(leading, {out}));  // [leading..., out]
    Value w = ir::Reshape(GetIrInput(weight, "linear_backward").v, Concat({out}, contracted));
    at::Tensor grad_input, grad_weight, grad_bias;
    if (ctx->needs_input_grad(0)) {
      Value gx = ir::DotGeneral(g, w, {}, {}, {lead}, {0}, type);  // [leading..., contracted...]
      std::vector<int64_t> dims(input.sizes().begin(), input.sizes().end());
      grad_input = AtenFromIr(ir::Reshape(gx, dims), g_in.device);
    }
    if (ctx->needs_input_grad(1)) {
      Value x = ir::Reshape(GetIrInput(input, "linear_backward").v, Concat(leading, contracted));
      Value gw = ir::DotGeneral(g, x, {}, {}, Range(0, lead), Range(0, lead), type);  // [out, contracted...]
      grad_weight = AtenFromIr(ir::Reshape(gw, {out, weight.size(1)}), g_in.device);
    }
    if (has_bias && ctx->needs_input_grad(2)) {
      runtime::ElementType acc = AccumulationType(type);
      Value sum = ir::Reduce(ir::ReduceKind::kSum, ir::Convert(g, acc), Range(0, lead));
      grad_bias = AtenFromIr(ir::Convert(sum, type), g_in.device);
    }
    return {grad_input, grad_weight, grad_bias, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

bool Eligible(const at::Tensor& input, const at::Tensor& weight, const at::Tensor* bias) {
  if (!runtime::spmd::Enabled() || input.dim() < 2 || weight.dim() != 2) return false;
  // Tensors of a Python subclass (XLAShardedTensor wraps the XLA tensor it holds) take
  // PyTorch's composite, which dispatches to the subclass.
  for (const at::Tensor* t : {&input, &weight, bias}) {
    if (t == nullptr) continue;
    if (!IsXlaTensor(*t) || t->key_set().has(c10::DispatchKey::Python)) return false;
  }
  if (!at::isFloatingType(input.scalar_type()) || weight.scalar_type() != input.scalar_type()) return false;
  if (bias != nullptr && (bias->dim() != 1 || bias->scalar_type() != input.scalar_type() ||
                          bias->size(0) != weight.size(0)))
    return false;
  return input.size(-1) == weight.size(1);
}

at::Tensor Linear(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias) {
  const at::Tensor* b = DefinedOrNull(bias);
  std::optional<Layout> layout;
  if (Eligible(input, weight, b)) layout = LayoutOf(input);
  if (!layout) return at::native::linear(input, weight, bias);
  // autograd::Function takes defined tensors only: without a bias the weight stands in its
  // place (ctx's "bias" flag says so) and gets no gradient through it.
  return ContractLastLinear::apply(input, weight, b != nullptr ? *b : weight, b != nullptr, layout->leading,
                                   layout->contracted);
}

TORCH_LIBRARY_IMPL(aten, AutogradXLA, m) { m.impl("linear", TORCH_FN(Linear)); }

}  // namespace
}  // namespace torch_xla
