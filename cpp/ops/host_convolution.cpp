#include "ops/host_convolution.h"

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "host/convolution.h"

namespace torch_xla {
namespace {

constexpr const char* kModeVariable = "XLA_HOST_CONVOLUTION";
constexpr int kModeUnset = -1;
std::atomic<int> g_mode{kModeUnset};

HostConvolutionMode ParseMode(const std::string& value, const char* source) {
  if (value.empty() || value == "auto") return HostConvolutionMode::kAuto;
  if (value == "1") return HostConvolutionMode::kAlways;
  if (value == "0") return HostConvolutionMode::kNever;
  throw std::invalid_argument(std::string(source) + " must be auto, 1 or 0, got '" + value + "'");
}

// The weight-gradient rule of the auto mode, from measurements (ms, XLA's convolution
// vs the host kernel, 2-core AVX-512 EPYC): XLA won where more than half of the channel
// blocks were padding: 10->20 channels 5x5 on 12x12 (waste 2.56) 0.72 vs 1.0, 6->16
// 5x5 (2.67) 0.53 vs 0.57, 20->50 5x5 (2.05) 1.95 vs 2.47; the host kernel won at 24->40
// (1.6) 2.4 vs 1.3, tied at 12->24 (1.78), and won for every multiple of 16 (1.1-2x)
// and every grouped convolution (32->32 in 4 groups: 13.5 vs 0.3). With 1 to 4 input
// channels it won whatever the blocks: 1->10 5x5 0.58 vs 0.37, 3->16 3x3 0.9 vs 0.23.
constexpr double kMaxChannelBlockWaste = 2.0;
constexpr int64_t kFewInputChannels = 4;

// Channels a oneDNN kernel works on per group once each count is rounded up to its
// block of 16 (AVX-512 registers), against the real ones.
double ChannelBlockWaste(int64_t in_channels, int64_t out_channels) {
  auto blocked = [](int64_t c) { return (c + 15) / 16 * 16; };
  return static_cast<double>(blocked(in_channels) * blocked(out_channels)) /
         static_cast<double>(in_channels * out_channels);
}

}  // namespace

HostConvolutionMode GetHostConvolutionMode() {
  int mode = g_mode.load(std::memory_order_acquire);
  if (mode != kModeUnset) return static_cast<HostConvolutionMode>(mode);
  const char* value = std::getenv(kModeVariable);
  HostConvolutionMode parsed = ParseMode(value == nullptr ? "" : value, kModeVariable);
  g_mode.compare_exchange_strong(mode, static_cast<int>(parsed), std::memory_order_acq_rel);
  return static_cast<HostConvolutionMode>(g_mode.load(std::memory_order_acquire));
}

void SetHostConvolutionMode(const std::string& mode) {
  g_mode.store(static_cast<int>(ParseMode(mode, "the host convolution mode")), std::memory_order_release);
}

std::string HostConvolutionModeName(HostConvolutionMode mode) {
  switch (mode) {
    case HostConvolutionMode::kAlways: return "1";
    case HostConvolutionMode::kNever: return "0";
    default: return "auto";
  }
}

bool UseHostConvolution(ir::HostConvolutionResult what, at::ScalarType type, int64_t in_channels,
                        int64_t out_channels, int64_t groups) {
  switch (GetHostConvolutionMode()) {
    case HostConvolutionMode::kNever:
      return false;
    case HostConvolutionMode::kAlways:
      return (type == at::kFloat || type == at::kDouble || type == at::kBFloat16) && host::HostConvolutionAvailable();
    case HostConvolutionMode::kAuto:
      break;
  }
  if (type != at::kFloat || !host::HostConvolutionAvailable()) return false;
  if (what != ir::HostConvolutionResult::kGradWeight || groups > 1) return true;
  // XLA's weight gradient (a convolution of the input with the output gradient as its
  // kernel) beats oneDNN's only where oneDNN's channel blocks are mostly padding.
  const int64_t in = in_channels / groups, out = out_channels / groups;
  return in <= kFewInputChannels || ChannelBlockWaste(in, out) <= kMaxChannelBlockWaste;
}

}  // namespace torch_xla
