#pragma once
// The per-device random number generator state: a u64[2] tensor threaded through the
// graph. Each random op consumes the current state and leaves the next one, so a
// step's random numbers are part of its graph and set_rng_state() repeats them exactly.
#include <cstdint>

#include "ir/node.h"

namespace torch_xla {

void SetRngSeed(int device, uint64_t seed);
uint64_t GetRngSeed(int device);
// `count` random 32-bit (or 64-bit, with wide) words of shape `dims`; advances the state.
ir::Value RandomBits(int device, const std::vector<int64_t>& dims, bool wide);
// Uniform numbers in [0, 1) of a floating element type.
ir::Value RandomUniform(int device, const ir::Shape& shape);

}  // namespace torch_xla
