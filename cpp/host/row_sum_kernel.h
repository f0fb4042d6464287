#pragma once
// A host kernel that sums each row of a matrix: out[r] = sum over c of x[r, c], for a
// float32 or float64 matrix, the rows split over the graph's compute threads.
//
// XLA's CPU backend computes each output of a reduction as one serial chain of adds,
// and its matrix-vector product (the sum as a product with a vector of ones) goes
// through Eigen's matrix-matrix path, which first copies the whole matrix into packed
// blocks: the 16 row sums of a TransformerEncoder step ([2048, 256] and [2048, 1000],
// layer norms and the loss) took 10 core-ms that way. The kernel reads each row once,
// into 16 running sums (independent lanes the compiler vectorizes) that are added
// pairwise at the end of the row.

namespace torch_xla::host {

// The custom-call target the kernel is registered under.
inline constexpr char kRowSumTarget[] = "torch_xla_row_sum";

// Registers the kernel with the current client's plugin the first time; returns whether
// graphs can call it (false where the plugin takes no host kernels).
bool RowSumKernelAvailable();

}  // namespace torch_xla::host
