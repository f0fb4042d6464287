#pragma once
// Shared by the interpolation kernels (ops/upsample.cpp, which defines it, and
// ops/grid_sampler.cpp).
#include <array>

#include "ops/kernel_util.h"

namespace torch_xla::upsample_util {

// PyTorch's cubic convolution weights (A = -0.75) of the four taps x0 - 1 .. x0 + 2 at
// fraction t, as get_cubic_upsample_coefficients computes them.
std::array<ir::Value, 4> CubicCoefficients(const ir::Value& t);

}  // namespace torch_xla::upsample_util
