#pragma once
// Constructors of IR values with their shape rules. Every function checks its inputs
// and throws std::invalid_argument naming the operation and the shapes, so bad input
// never reaches the XLA compiler. Operand types/shapes must already match where a
// function says so; Broadcast() and Convert() make them match (and are free when
// nothing changes).
#include <string>
#include <vector>

#include "host/convolution_config.h"
#include "ir/node.h"

namespace torch_xla::ir {

namespace op {
// StableHLO element-wise operations.
extern const OpKind kAdd, kSubtract, kMultiply, kDivide, kMaximum, kMinimum, kPower, kRemainder, kAnd,
    kOr, kXor, kNot, kNegate, kAbs, kExp, kExpm1, kLog, kLog1p, kSqrt, kRsqrt, kTanh, kLogistic, kSin,
    kCos, kTan, kFloor, kCeil, kSign, kRoundEven, kAtan2, kSelect, kClamp, kIsFinite, kConvert, kErf,
    kShiftLeft, kShiftRightArithmetic, kShiftRightLogical;
// max/min that return NaN when either operand is NaN (PyTorch's semantics; StableHLO's
// maximum/minimum may return the other operand). One node at trace time; lowered to
// maximum/minimum plus NaN selects (lowering/rules_elementwise.cpp). Floating types only.
extern const OpKind kNanMaximum, kNanMinimum;
}  // namespace op

enum class CompareDirection : int64_t { kEq, kNe, kGe, kGt, kLe, kLt };
enum class ReduceKind : int64_t { kSum, kProd, kMax, kMin, kAnd, kOr };

// numpy-style broadcast of two shapes; throws naming `op_name` on mismatch.
std::vector<int64_t> BroadcastDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                   const char* op_name);

Value Constant(double value, Shape shape);
// Whether `v` is Constant(0, ...).
bool IsZeroConstant(const Value& v);
Value ScalarParameter(double value, ElementType type);
Value Convert(const Value& v, ElementType type);
// Broadcasts trailing-aligned to `dims` (numpy rules).
Value Broadcast(const Value& v, const std::vector<int64_t>& dims);
Value BroadcastInDim(const Value& v, const std::vector<int64_t>& dims, const std::vector<int64_t>& broadcast_dims);
Value Reshape(const Value& v, std::vector<int64_t> dims);
Value Transpose(const Value& v, const std::vector<int64_t>& permutation);
Value Slice(const Value& v, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& strides);
Value Concatenate(const std::vector<Value>& values, int64_t dim);
Value Pad(const Value& v, const Value& pad_value, const std::vector<int64_t>& low,
          const std::vector<int64_t>& high, const std::vector<int64_t>& interior);
Value Reverse(const Value& v, const std::vector<int64_t>& dims);
Value Iota(Shape shape, int64_t dim);

// Element-wise on operands of equal shape; the result has `result_type` (default: the
// operands' type).
Value Unary(OpKind kind, const Value& v);
Value Binary(OpKind kind, const Value& a, const Value& b);
Value Compare(CompareDirection direction, const Value& a, const Value& b);
// The complex numbers real + i * imag (operands of equal shape, f32 or f64).
Value Complex(const Value& real, const Value& imag);
Value Select(const Value& pred, const Value& on_true, const Value& on_false);

// Reduces `dims` away (in the value's own type).
Value Reduce(ReduceKind kind, const Value& v, const std::vector<int64_t>& dims);
// dot_general with result type `type`.
Value DotGeneral(const Value& a, const Value& b, const std::vector<int64_t>& lhs_batch,
                 const std::vector<int64_t>& rhs_batch, const std::vector<int64_t>& lhs_contract,
                 const std::vector<int64_t>& rhs_contract, ElementType type);

// stablehlo.convolution with the layouts lhs [batch, feature, spatial...], rhs [out feature,
// in feature, spatial...], result [batch, feature, spatial...] (PyTorch's NC(D)HW / OI(D)HW).
// Every per-spatial-dimension list has one entry per spatial dimension (1 to 3); padding
// may be negative (it then crops the lhs). Operands must have the same element type,
// which is the result's. Output spatial size, per dimension:
//   floor(((in - 1) * lhs_dilation + 1 + low + high - ((k - 1) * rhs_dilation + 1)) / stride) + 1.
// Node attrs.ints (see lowering/rules_convolution.cpp): [n (spatial rank),
// window_strides (n), padding_low (n), padding_high (n), lhs_dilation (n),
// rhs_dilation (n), feature_group_count, batch_group_count].
Value Convolution(const Value& lhs, const Value& rhs, const std::vector<int64_t>& window_strides,
                  const std::vector<int64_t>& padding_low, const std::vector<int64_t>& padding_high,
                  const std::vector<int64_t>& lhs_dilation, const std::vector<int64_t>& rhs_dilation,
                  int64_t feature_group_count, int64_t batch_group_count);

// A convolution of one input channel as a sum over the kernel taps: for x [N, 1, s...]
// and w [F, 1, k...] (1 to 3 spatial dimensions), the sum over taps of x's strided
// window at that tap times the tap's F weights, accumulated in f32 for bf16/f16. One
// node at trace time; the lowering (lowering/rules_convolution.cpp) emits the per-tap
// slices, products and sums, which XLA fuses into one loop. Result [N, F, out...] with
//   out = floor((s + 2 * padding - (k - 1) * dilation - 1) / stride) + 1.
// attrs.ints: [n (spatial rank), stride (n), padding (n), dilation (n)].
Value SingleChannelTaps(const Value& x, const Value& w, const std::vector<int64_t>& stride,
                        const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation);

// A convolution that the CPU device runs with PyTorch's own kernel (a host kernel, see
// host/host_kernel.h) instead of XLA's: `what` says which result of a PyTorch
// convolution (stride, padding, dilation, transposed, output_padding, groups; `n`
// spatial dimensions) the node computes from operands a and b:
//   kForward      a = input, b = weight                 -> the output
//   kGradInput    a = grad_output, b = weight           -> grad_input of size `result`
//   kGradWeight   a = grad_output, b = input            -> grad_weight of size `result`
// The caller has checked the arguments as PyTorch does; this checks ranks and types.
// attrs.ints (the custom call's config): host::ConvolutionConfig::ToInts.
using HostConvolutionResult = host::ConvolutionResult;
Value HostConvolution(HostConvolutionResult what, const Value& a, const Value& b, const std::vector<int64_t>& result,
                      const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                      const std::vector<int64_t>& dilation, const std::vector<int64_t>& output_padding,
                      bool transposed, int64_t groups);

// A call of one of PyTorch's own CPU kernels inside the graph, on the CPU device, as a
// host kernel (host/aten_ops.cpp; host/kernel_targets.h): `config` (the
// custom call's config, attrs.ints) names the op and holds its non-tensor arguments,
// `operands` are its tensor arguments in order, `results` its outputs' shapes.
std::vector<Value> HostAtenCall(std::vector<Value> operands, std::vector<Shape> results, std::vector<int64_t> config);

// v unchanged, but computed once into a buffer: XLA does not fuse the computation of v
// into its consumers (which would recompute it once per use). On the CPU device, a call
// of the pass-through host kernel (host/pass_through_kernel.h), whose result aliases
// v: free at run time. Elsewhere a maximum of v and the type's lowest value by
// reduce_window, an op XLA does not fuse: one more pass over v (builder_pooling.cpp).
Value Materialize(const Value& v);

}  // namespace torch_xla::ir
