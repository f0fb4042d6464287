#pragma once
// A host kernel that sums the rows of a matrix: out[c] = sum over r of x[r, c], for a
// float32 or float64 matrix, the columns split over the graph's compute threads.
//
// XLA's CPU backend lowers a sum over the leading dimensions (a bias gradient: the sum
// of a [2048, 768] gradient over its rows) to a windowed reduction whose loops read the
// matrix across its rows: 1.4-1.8 ms for [2048, 768..1024], where PyTorch's vectorized
// sum takes 0.15-0.25 ms; a product with a vector of ones is slower still. The kernel
// reads the rows in order, adding blocks of 64 rows into running column sums that are
// then added up (the rounding error grows with 64 + rows / 64, not with the row count).

namespace torch_xla::host {

// The custom-call target the kernel is registered under.
inline constexpr char kColumnSumTarget[] = "torch_xla_column_sum";

// Registers the kernel with the current client's plugin the first time; returns whether
// graphs can call it (false where the plugin takes no host kernels).
bool ColumnSumKernelAvailable();

}  // namespace torch_xla::host
