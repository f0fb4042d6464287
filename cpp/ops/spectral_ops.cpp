// The discrete Fourier transforms behind torch.fft: _fft_c2c (complex -> complex),
// _fft_r2c (real -> complex) and _fft_c2r (complex -> real), each over a list of
// dimensions with PyTorch's normalization modes
//   0: none,  1: by 1 / sqrt(n),  2: by 1 / n   (n = the product of the signal sizes).
// The torch.fft functions (fft, fft2, rfftn, hfft, ...) and their gradients are
// PyTorch's composites of these three.
//
// stablehlo.fft transforms the 1 to 3 innermost dimensions, so each pass moves up to
// three of the requested dimensions innermost and back. Its inverse transforms divide
// by the signal size already; the requested normalization is one multiplication at the
// end.
#include <ATen/ATen.h>

#include <cmath>

#include "XLANativeFunctions.h"
#include "ir/builder_complex.h"
#include "ops/kernel_util.h"

namespace torch_xla {
namespace {

using ir::FftType;
using ir::Value;

constexpr std::size_t kMaxFftRank = 3;  // stablehlo.fft transforms at most 3 dimensions

// The requested dimensions, wrapped and checked (distinct, non-empty signal).
std::vector<int64_t> FftDims(const at::Tensor& self, at::IntArrayRef dim, const char* op) {
  std::vector<int64_t> dims;
  for (int64_t d : dim) {
    int64_t w = WrapDim(d, self.dim(), op);
    TORCH_CHECK(std::find(dims.begin(), dims.end(), w) == dims.end(), op, ": dims must be unique, got ", dim,
                " for ", DescribeTensor(self));
    dims.push_back(w);
  }
  return dims;
}

// Applies `transform` to `v` with `dims` moved innermost (in their order) and moves them
// back; `transform` may change the size of the innermost dimension.
template <typename F>
Value OnInnermost(const Value& v, const std::vector<int64_t>& dims, F transform) {
  int64_t rank = v.shape().rank();
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
  perm.insert(perm.end(), dims.begin(), dims.end());
  std::vector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i) inverse[perm[i]] = i;
  bool identity = true;
  for (int64_t i = 0; i < rank; ++i) identity = identity && perm[i] == i;
  if (identity) return transform(v);
  return ir::Transpose(transform(ir::Transpose(v, perm)), inverse);
}

std::vector<int64_t> SizesOf(const Value& v, const std::vector<int64_t>& dims) {
  std::vector<int64_t> sizes;
  for (int64_t d : dims) sizes.push_back(v.shape().dims[d]);
  return sizes;
}

// Complex-to-complex transforms (kFft or kIfft) over `dims`, up to three at a time (the
// transform is separable, so the order of the passes does not matter).
Value ComplexPasses(Value v, const std::vector<int64_t>& dims, FftType type) {
  for (std::size_t i = 0; i < dims.size(); i += kMaxFftRank) {
    std::vector<int64_t> chunk(dims.begin() + i, dims.begin() + std::min(dims.size(), i + kMaxFftRank));
    std::vector<int64_t> lengths = SizesOf(v, chunk);
    v = OnInnermost(v, chunk, [&](const Value& x) { return ir::Fft(type, x, lengths); });
  }
  return v;
}

// Multiplies by the factor that turns an unnormalized transform of n points (`inverse`:
// one that stablehlo.fft divided by n) into PyTorch's normalization mode.
Value Normalize(const Value& v, int64_t normalization, double n, bool inverse, const char* op) {
  TORCH_CHECK(normalization >= 0 && normalization <= 2, op, ": invalid normalization mode ", normalization,
              " (0: none, 1: by 1/sqrt(n), 2: by 1/n)");
  double factor = normalization == 0 ? 1.0 : normalization == 1 ? 1.0 / std::sqrt(n) : 1.0 / n;
  if (inverse) factor *= n;
  if (factor == 1.0) return v;
  return Mul(v, ScalarLike(factor, v));
}

void CheckSignal(const at::Tensor& self, const std::vector<int64_t>& dims, const char* op) {
  for (int64_t d : dims)
    TORCH_CHECK(self.size(d) >= 1, op, ": invalid number of data points (", self.size(d), ") in dimension ", d,
                " of ", DescribeTensor(self));
}

}  // namespace

at::Tensor XLANativeFunctions::_fft_c2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                                        bool forward) {
  XLA_COUNT("_fft_c2c");
  const char* op = "_fft_c2c";
  TORCH_CHECK(self.is_complex(), op, ": expected a complex input tensor, got ", DescribeTensor(self));
  std::vector<int64_t> dims = FftDims(self, dim, op);
  CheckSignal(self, dims, op);
  IrInput in = GetIrInput(self, op);
  return AtenFromIr(Checked(op, [&] {
                      double n = Product(SizesOf(in.v, dims));
                      Value r = ComplexPasses(in.v, dims, forward ? FftType::kFft : FftType::kIfft);
                      return Normalize(r, normalization, n, !forward && !dims.empty(), op);
                    }),
                    in.device);
}

// Onesided: the innermost requested dimension keeps its first size / 2 + 1 entries.
at::Tensor XLANativeFunctions::_fft_r2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                                        bool onesided) {
  XLA_COUNT("_fft_r2c");
  const char* op = "_fft_r2c";
  TORCH_CHECK(self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble, op,
              ": expected a float or double input tensor, got ", DescribeTensor(self));
  std::vector<int64_t> dims = FftDims(self, dim, op);
  TORCH_CHECK(!dims.empty(), op, ": expected at least one dimension to transform, got none for ",
              DescribeTensor(self));
  CheckSignal(self, dims, op);
  IrInput in = GetIrInput(self, op);
  return AtenFromIr(Checked(op, [&] {
                      double n = Product(SizesOf(in.v, dims));
                      Value r;
                      if (!onesided) {
                        Value c = ir::Complex(in.v, ScalarLike(0, in.v));
                        r = ComplexPasses(c, dims, FftType::kFft);
                      } else {
                        // The real transform over the last (up to three) dimensions,
                        // then complex passes over the others.
                        std::size_t split = dims.size() > kMaxFftRank ? dims.size() - kMaxFftRank : 0;
                        std::vector<int64_t> last(dims.begin() + split, dims.end());
                        std::vector<int64_t> lengths = SizesOf(in.v, last);
                        r = OnInnermost(in.v, last,
                                        [&](const Value& x) { return ir::Fft(FftType::kRfft, x, lengths); });
                        r = ComplexPasses(r, std::vector<int64_t>(dims.begin(), dims.begin() + split), FftType::kFft);
                      }
                      return Normalize(r, normalization, n, false, op);
                    }),
                    in.device);
}

// The innermost requested dimension of the input holds the first last_dim_size / 2 + 1
// entries of a Hermitian-symmetric signal of last_dim_size points (PyTorch's callers
// resize it so; other sizes are cut or zero-padded to that, as the CPU kernel reads).
at::Tensor XLANativeFunctions::_fft_c2r(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                                        int64_t last_dim_size) {
  XLA_COUNT("_fft_c2r");
  const char* op = "_fft_c2r";
  TORCH_CHECK(self.is_complex(), op, ": expected a complex input tensor, got ", DescribeTensor(self));
  std::vector<int64_t> dims = FftDims(self, dim, op);
  TORCH_CHECK(!dims.empty(), op, ": expected at least one dimension to transform, got none for ",
              DescribeTensor(self));
  TORCH_CHECK(last_dim_size >= 1, op, ": invalid number of data points (", last_dim_size, ") specified");
  CheckSignal(self, dims, op);
  IrInput in = GetIrInput(self, op);
  return AtenFromIr(Checked(op, [&] {
                      std::size_t split = dims.size() > kMaxFftRank ? dims.size() - kMaxFftRank : 0;
                      Value v = ComplexPasses(in.v, std::vector<int64_t>(dims.begin(), dims.begin() + split),
                                              FftType::kIfft);
                      std::vector<int64_t> last(dims.begin() + split, dims.end());
                      int64_t d = dims.back(), half = last_dim_size / 2 + 1, have = v.shape().dims[d];
                      if (have > half) {
                        std::vector<int64_t> start(v.shape().rank(), 0), limit = v.shape().dims,
                                                                        strides(v.shape().rank(), 1);
                        limit[d] = half;
                        v = ir::Slice(v, start, limit, strides);
                      } else if (have < half) {
                        std::vector<int64_t> low(v.shape().rank(), 0), high(v.shape().rank(), 0),
                            interior(v.shape().rank(), 0);
                        high[d] = half - have;
                        v = ir::Pad(v, ir::Constant(0, ir::Shape(v.shape().type, {})), low, high, interior);
                      }
                      std::vector<int64_t> lengths = SizesOf(v, last);
                      lengths.back() = last_dim_size;
                      Value r =
                          OnInnermost(v, last, [&](const Value& x) { return ir::Fft(FftType::kIrfft, x, lengths); });
                      std::vector<int64_t> signal = SizesOf(in.v, dims);
                      signal.back() = last_dim_size;
                      return Normalize(r, normalization, Product(signal), true, op);
                    }),
                    in.device);
}

}  // namespace torch_xla
