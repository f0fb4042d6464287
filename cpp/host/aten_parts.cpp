#include "host/aten_parts.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <string>

#include "host/single_thread_scope.h"

namespace torch_xla {
namespace {

PartRule Whole() { return {PartKind::kWhole, 0}; }
PartRule Split(int64_t dim) { return {PartKind::kSplit, dim}; }
PartRule Sum() { return {PartKind::kSum, 0}; }
PartRule Pieces() { return {PartKind::kPieces, 0}; }

// An attention mask splits with the batch when it has a batch dimension of its own.
PartRule MaskRule(const c10::IValue& mask, int64_t batch) {
  if (!mask.isTensor() || !mask.toTensor().defined()) return Whole();
  const at::Tensor& m = mask.toTensor();
  return m.dim() == 4 && m.size(0) == batch && batch > 1 ? Split(0) : Whole();
}

}  // namespace

std::optional<BatchParts> BatchPartsOf(const c10::OperatorName& op, const std::vector<c10::IValue>& args) {
  const std::string& name = op.name;
  BatchParts parts;
  if (name == "aten::_scaled_dot_product_flash_attention_for_cpu") {
    // (query, key, value, dropout_p, is_causal, attn_mask, scale) -> (output, logsumexp)
    parts.batch = args.at(0).toTensor().size(0);
    parts.args = {Split(0), Split(0), Split(0), Whole(), Whole(), MaskRule(args.at(5), parts.batch), Whole()};
    parts.results = {Split(0), Split(0)};
  } else if (name == "aten::_scaled_dot_product_flash_attention_for_cpu_backward") {
    // (grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask, scale)
    //   -> (grad_query, grad_key, grad_value)
    parts.batch = args.at(1).toTensor().size(0);
    parts.args = {Split(0), Split(0), Split(0), Split(0), Split(0), Split(0),
                  Whole(),  Whole(),  MaskRule(args.at(8), parts.batch), Whole()};
    parts.results = {Split(0), Split(0), Split(0)};
  } else if (name == "aten::mkldnn_rnn_layer") {
    // (input, weight0..3, hx_, cx_, reverse, batch_sizes, mode, hidden_size, num_layers,
    //  has_biases, bidirectional, batch_first, train) -> (output, hy, cy, workspace)
    if (!args.at(8).toIntVector().empty()) return std::nullopt;  // packed sequences
    const int64_t seq_dim = args.at(14).toBool() ? 0 : 1;
    parts.batch = args.at(0).toTensor().size(seq_dim);
    parts.args = std::vector<PartRule>(16, Whole());
    parts.args[0] = Split(seq_dim);
    parts.args[5] = parts.args[6] = Split(0);
    parts.results = {Split(seq_dim), Split(0), Split(0), Pieces()};
  } else if (name == "aten::mkldnn_rnn_layer_backward") {
    // (input, weight1..4, hx_, cx_tmp, output, hy_, cy_, grad_output, grad_hy, grad_cy,
    //  reverse, mode, hidden_size, num_layers, has_biases, train, bidirectional,
    //  batch_sizes, batch_first, workspace)
    //   -> (grad_input, grad_weight1..4, grad_hx, grad_cx)
    if (!args.at(20).toIntVector().empty()) return std::nullopt;
    const int64_t seq_dim = args.at(21).toBool() ? 0 : 1;
    parts.batch = args.at(0).toTensor().size(seq_dim);
    parts.args = std::vector<PartRule>(23, Whole());
    parts.args[0] = parts.args[7] = parts.args[10] = Split(seq_dim);
    parts.args[5] = parts.args[6] = parts.args[8] = parts.args[9] = parts.args[11] = parts.args[12] = Split(0);
    parts.args[22] = Pieces();
    parts.results = {Split(seq_dim), Sum(), Sum(), Sum(), Sum(), Split(0), Split(0)};
  } else if (name == "torch_xla_host::weight_gradient") {
    // (grad, input) -> grad.t() @ input, a sum over the rows
    parts.batch = args.at(0).toTensor().size(0);
    parts.args = {Split(0), Split(0)};
    parts.results = {Sum()};
  } else {
    return std::nullopt;
  }
  return parts;
}

// Elements a range of SumParts takes at least.
constexpr int64_t kMinSumRange = 16384;

void SumParts(const host::HostParallel& parallel, const std::vector<at::Tensor>& partials, const at::Tensor& out) {
  const int64_t n = out.numel();
  const at::ScalarType type = out.scalar_type();
  const bool widen = type == at::kBFloat16 || type == at::kHalf;
  const int64_t ranges = std::max<int64_t>(1, std::min(parallel.thread_count(), n / kMinSumRange));
  parallel.For(ranges, [&](int64_t range) {
    c10::InferenceMode guard;
    SingleThreadedAtenScope one_thread;
    const int64_t begin = n * range / ranges, end = n * (range + 1) / ranges;
    auto piece = [&](const at::Tensor& t) { return t.reshape({-1}).narrow(0, begin, end - begin); };
    at::Tensor dest = piece(out);
    if (partials.size() == 1) {
      dest.copy_(piece(partials[0]));
    } else if (!widen && partials.size() == 2) {
      at::add_out(dest, piece(partials[0]), piece(partials[1]));
    } else {
      at::Tensor sum = piece(partials[0]).to(widen ? at::kFloat : type, /*non_blocking=*/false, /*copy=*/true);
      for (std::size_t p = 1; p < partials.size(); ++p) sum.add_(piece(partials[p]));
      dest.copy_(sum);
    }
  });
}

}  // namespace torch_xla
