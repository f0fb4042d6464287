#include "aten/loops.h"

#include <c10/util/Exception.h>

#include <unordered_set>

#include "aten/bridge.h"
#include "tensor/rng_state.h"

namespace torch_xla {

LoopTrace::LoopTrace(const std::vector<at::Tensor>& carried, std::string op_name) : op_name_(std::move(op_name)) {
  TORCH_CHECK_VALUE(!carried.empty(), op_name_, ": no carried values");
  for (std::size_t i = 0; i < carried.size(); ++i) {
    TORCH_CHECK_VALUE(IsXlaTensor(carried[i]), op_name_, ": carried value ", i, " is a ", carried[i].device(),
                      " tensor ", DescribeTensor(carried[i]), "; loops carry XLA tensors");
    XlaTensorPtr x = GetXlaTensor(carried[i], op_name_.c_str());
    if (i == 0) device_ = x->device();
    TORCH_CHECK_VALUE(x->device() == device_, op_name_, ": carried value ", i, " is on xla:", x->device(),
                      ", carried value 0 on xla:", device_, "; a loop runs on one device");
    init_.push_back(x->GetIrValue());
  }
}

LoopTrace::~LoopTrace() {
  if (in_function_) RestoreRng();
}

void LoopTrace::Abort() {
  if (in_function_) RestoreRng();
  functions_done_ = 2;
  in_function_ = false;
  aborted_ = true;
}

void LoopTrace::RestoreRng() {
  SetRngStateTensor(device_, saved_rng_, /*drawn=*/false);
  in_function_ = false;
}

std::vector<at::Tensor> LoopTrace::BeginFunction() {
  TORCH_CHECK(!in_function_ && functions_done_ < 2, op_name_, ": the condition and the body are traced once each");
  std::vector<at::Tensor> stand_ins;
  ir::TracedFunction& f = traced_[functions_done_];
  for (const ir::Value& v : init_) {
    f.placeholders.push_back(ir::LoopPlaceholder(v.shape()));
    XlaTensorPtr stand_in = XlaTensor::FromIr(ir::Value(f.placeholders.back()), device_);
    if (stand_ins.empty()) first_id_ = stand_in->id();
    stand_ins.push_back(AtenFromXla(stand_in));
  }
  saved_rng_ = RngStateTensor(device_);
  rng_placeholder_[functions_done_] = ir::LoopPlaceholder(saved_rng_->shape());
  rng_stand_in_ = XlaTensor::FromIr(ir::Value(rng_placeholder_[functions_done_]), device_);
  SetRngStateTensor(device_, rng_stand_in_, /*drawn=*/false);
  in_function_ = true;
  return stand_ins;
}

void LoopTrace::EndFunction(const std::vector<at::Tensor>& results, const std::vector<at::Tensor>& stand_ins) {
  TORCH_CHECK(in_function_, op_name_, ": EndFunction without BeginFunction");
  const bool body = functions_done_ == 1;
  XlaTensorPtr rng_after = RngStateTensor(device_);
  std::unordered_set<const XlaTensor*> accounted{rng_after.get(), rng_stand_in_.get()};
  for (const std::vector<at::Tensor>* list : {&results, &stand_ins})
    for (const at::Tensor& t : *list)
      if (IsXlaTensor(t)) accounted.insert(GetXlaTensor(t, op_name_.c_str()).get());
  for (const XlaTensorPtr& t : PendingTensors(device_)) {
    if (t->id() < first_id_ || accounted.count(t.get())) continue;
    RestoreRng();
    TORCH_CHECK_VALUE(false, op_name_, ": the ", body ? "body" : "condition", " updated a tensor from outside in place, ",
                      "or kept one of its own tensors (", t->shape().ToString(),
                      "); a loop computes only what its functions return: return the new value instead");
  }
  RestoreRng();
  if (rng_after != rng_stand_in_) {
    TORCH_CHECK_VALUE(body, op_name_, ": the condition draws random numbers; draw them in the body");
    body_draws_ = true;
    body_rng_result_ = rng_after->GetIrValue();
  }
  rng_stand_in_.reset();
  ir::TracedFunction& f = traced_[functions_done_];
  for (std::size_t i = 0; i < results.size(); ++i) {
    TORCH_CHECK_VALUE(IsXlaTensor(results[i]), op_name_, ": the ", body ? "body" : "condition", " returns a ",
                      results[i].device(), " tensor ", DescribeTensor(results[i]), " at position ", i,
                      "; it must return XLA tensors");
    XlaTensorPtr x = GetXlaTensor(results[i], op_name_.c_str());
    TORCH_CHECK_VALUE(x->device() == device_, op_name_, ": the ", body ? "body" : "condition", " returns a tensor of xla:",
                      x->device(), " for a loop on xla:", device_);
    f.results.push_back(x->GetIrValue());
  }
  ++functions_done_;
}

std::vector<at::Tensor> LoopTrace::Finish() {
  TORCH_CHECK(functions_done_ == 2 && !in_function_ && !aborted_, op_name_, ": trace the condition and the body first");
  std::vector<ir::Value> init = init_;
  ir::TracedFunction condition = traced_[0];
  ir::TracedFunction body = traced_[1];
  if (body_draws_) {
    // The random number state is carried too: each iteration continues from the last.
    init.push_back(saved_rng_->GetIrValue());
    condition.placeholders.push_back(rng_placeholder_[0]);
    body.placeholders.push_back(rng_placeholder_[1]);
    body.results.push_back(body_rng_result_);
  }
  std::vector<ir::Value> out;
  try {
    out = ir::LoopFromTraces(init, condition, body, op_name_.c_str());
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, e.what());
  }
  if (body_draws_) {
    SetRngStateTensor(device_, XlaTensor::FromIr(out.back(), device_), /*drawn=*/true);
    out.pop_back();
  }
  std::vector<at::Tensor> results;
  for (const ir::Value& v : out) results.push_back(AtenFromIr(v, device_));
  return results;
}

at::Tensor RandomStateTensor(int device) { return AtenFromXla(RngStateTensor(device)); }

void SetRandomStateTensor(const at::Tensor& state) {
  XlaTensorPtr x = GetXlaTensor(state, "set_rng_state_tensor");
  TORCH_CHECK_VALUE(x->shape() == RngStateTensor(x->device())->shape(), "set_rng_state_tensor: a state is ",
                    RngStateTensor(x->device())->shape().ToString(), ", got ", x->shape().ToString());
  SetRngStateTensor(x->device(), x, /*drawn=*/true);
}

}  // namespace torch_xla
