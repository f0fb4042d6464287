#pragma once
// PyTorch's own CPU kernels inside the compiled graph on the CPU device, as a host
// kernel (host/host_kernel.h), the way convolutions run (host/convolution.h): linear
// algebra (LAPACK; StableHLO has no factorizations), and kernels of CPU libraries that
// XLA's code does not match (flash attention, oneDNN's LSTM layers, large matrix
// products: ops/host_attention.cpp, ops/host_lstm.cpp, ops/host_matmul.cpp). The graph
// around the call stays compiled and fused, nothing syncs and no aten:: fallback runs.
//
// One boxed XLA kernel (ops/host_aten_calls.cpp) serves every op in kHostAtenOps and
// kHostOwnOps. At trace time it
// finds the outputs' shapes with the op's meta kernel, records the op, the number of
// parts its batch splits into (host/aten_parts.h; 1 for most ops) and its non-tensor
// arguments as the custom call's config, and the tensor arguments as operands. At run
// time the host kernel decodes the config, wraps the operand buffers as CPU tensors,
// calls the op through the dispatcher once per part and copies each output into its
// result buffer.
//
// On other devices (no host kernels there) the op goes to the CPU fallback instead.
#include <ATen/core/ivalue.h>
#include <ATen/core/operator_name.h>

#include <cstdint>
#include <vector>

namespace torch_xla::host {

// The ops served this way, "name" or "name.overload" as in native_functions.yaml. Each
// has a meta kernel or an entry in MetaWithoutKernel (its outputs' shapes follow from
// its inputs' shapes). Not linalg_lstsq: the size of its residuals depends on the ranks
// of the matrices.
inline constexpr const char* kHostAtenOps[] = {
    "cholesky",
    "cholesky_inverse",
    "_cholesky_solve_helper",
    "geqrf",
    "ormqr",
    "linalg_householder_product",
    "linalg_cholesky_ex",
    "linalg_inv_ex",
    "_linalg_solve_ex",
    "linalg_solve_triangular",
    "triangular_solve",
    "linalg_lu",
    "linalg_lu_factor_ex",
    "linalg_lu_solve",
    "lu_unpack",
    "_linalg_det",
    "_linalg_slogdet",
    "linalg_ldl_factor_ex",
    "linalg_ldl_solve",
    "linalg_qr",
    "_linalg_svd",
    "_linalg_eigh",
    "linalg_eig",
    "linalg_matrix_exp",
    "linalg_pinv.atol_rtol_tensor",
    // Attention by PyTorch's CPU flash-attention kernels (ops/host_attention.cpp).
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    // LSTM layers by PyTorch's CPU (oneDNN) kernels (ops/host_lstm.cpp).
    "mkldnn_rnn_layer",
    "mkldnn_rnn_layer_backward",
};

// Ops of this library's own namespace served the same way (defined in host/weight_gradient.cpp).
inline constexpr const char* kHostOwnOps[] = {
    "weight_gradient",
};

// The config's first value: a stable identity of the op (a cached executable from
// another process must find the same op), FNV-1a of its name.
int64_t HostAtenOpId(const c10::OperatorName& name);

// Appends the config's encoding of a (non-tensor) argument; false for a kind of argument
// this kernel does not carry (the op then goes to the CPU fallback).
bool EncodeHostAtenArgument(const c10::IValue& v, std::vector<int64_t>& config);

// True on the CPU device, where graphs may call PyTorch's CPU kernels; registers the
// host kernel (target kHostAtenTarget) on first use. False elsewhere (those ops then
// use the CPU fallback).
bool HostAtenAvailable();

}  // namespace torch_xla::host
