#pragma once
// The per-device random number generator state: a u64[2] tensor threaded through the
// graph. Each random op consumes the current state and leaves the next one, so a
// step's random numbers are part of its graph and set_rng_state() repeats them exactly.
#include <cstdint>

#include "ir/node.h"
#include "tensor/xla_tensor.h"

namespace torch_xla {

void SetRngSeed(int device, uint64_t seed);
// A seed from which the device's random numbers continue: the seed last set while no
// random numbers were drawn since; otherwise the generator is seeded anew with a seed
// derived from the last one, which is returned (so that set_rng_state() of it later
// repeats what follows, and the seed differs once numbers were drawn).
uint64_t GetRngSeed(int device);
// The state tensor itself, and replacing it (a loop being traced stands its block
// argument in for it, so that each iteration draws new numbers: aten/loops.h). `drawn`:
// the new state follows random numbers drawn from the old one.
XlaTensorPtr RngStateTensor(int device);
// Whether `tensor` is the device's state tensor (without creating one).
bool IsRngStateTensor(int device, const XlaTensor* tensor);
void SetRngStateTensor(int device, XlaTensorPtr state, bool drawn);
// `count` random 32-bit (or 64-bit, with wide) words of shape `dims`; advances the state.
ir::Value RandomBits(int device, const std::vector<int64_t>& dims, bool wide);
// Uniform numbers in [0, 1) of a floating element type.
ir::Value RandomUniform(int device, const ir::Shape& shape);

}  // namespace torch_xla
