#pragma once
// Device loops from functions traced on the XLA device: the Python functions of
// torch_xla.experimental.while_loop, fori_loop and scan run once, on stand-ins for the
// loop's carried values, and the IR they record becomes the condition and body of one
// stablehlo.while (ir/builder_control.h), which the device runs as often as the
// condition says.
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "ir/builder_control.h"
#include "tensor/xla_tensor.h"

namespace torch_xla {

class LoopTrace {
 public:
  // A loop over `carried` (XLA tensors of one device); `op_name` names it in errors.
  LoopTrace(const std::vector<at::Tensor>& carried, std::string op_name);
  // Restores the device's random number state if a trace was left unfinished.
  ~LoopTrace();
  LoopTrace(const LoopTrace&) = delete;
  LoopTrace& operator=(const LoopTrace&) = delete;

  // Tensors standing for the carried values, to run the condition on, then (after
  // EndCondition) the body. While a function runs, the device's random number state is a
  // stand-in too: the body's random ops draw new numbers in every iteration, and the
  // condition may draw none.
  std::vector<at::Tensor> BeginFunction();
  // What the function returned (the condition a bool scalar, the body one value per
  // carried value, of its shape and dtype), and the stand-ins it ran on. A tensor made
  // or updated while the function ran that is still pending and is neither of them
  // means the function updated a tensor from outside in place, or kept one of its own:
  // the loop cannot compute it once per iteration, so that raises.
  void EndFunction(const std::vector<at::Tensor>& results, const std::vector<at::Tensor>& stand_ins);
  // The loop's final carried values (pending, like any op's results).
  std::vector<at::Tensor> Finish();
  // Gives up a trace whose function raised: the device's random number state is restored.
  void Abort();

 private:
  void RestoreRng();

  std::string op_name_;
  int device_ = 0;
  std::vector<ir::Value> init_;
  ir::TracedFunction traced_[2];  // condition, body
  int functions_done_ = 0;
  uint64_t first_id_ = 0;      // tensors made while the function runs have this id or later
  bool in_function_ = false;
  XlaTensorPtr saved_rng_;     // the state before the loop
  XlaTensorPtr rng_stand_in_;  // the state while a function runs
  ir::NodePtr rng_placeholder_[2];
  bool body_draws_ = false;
  bool aborted_ = false;
  ir::Value body_rng_result_;
};

// The device's random number state as a tensor (the same one, not a copy), and making a
// tensor the state: scan keeps the state each step started from, so that its backward
// pass, recomputing the step, draws the step's numbers again.
at::Tensor RandomStateTensor(int device);
void SetRandomStateTensor(const at::Tensor& state);

}  // namespace torch_xla
