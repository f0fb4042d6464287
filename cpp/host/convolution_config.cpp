#include "host/convolution_config.h"

#include <stdexcept>
#include <string>

namespace torch_xla::host {

std::vector<int64_t> ConvolutionConfig::ToInts() const {
  const std::size_t n = stride.size();
  if (padding.size() != n || dilation.size() != n || output_padding.size() != n)
    throw std::invalid_argument("host convolution: stride, padding, dilation and output_padding need one value "
                                "per spatial dimension");
  std::vector<int64_t> ints{static_cast<int64_t>(what), static_cast<int64_t>(n)};
  for (const std::vector<int64_t>* list : {&stride, &padding, &dilation, &output_padding})
    ints.insert(ints.end(), list->begin(), list->end());
  ints.push_back(transposed ? 1 : 0);
  ints.push_back(groups);
  return ints;
}

ConvolutionConfig ConvolutionConfig::FromInts(std::span<const int64_t> ints) {
  if (ints.size() < 2 || ints[1] < 0 || ints.size() != 4 + 4 * static_cast<std::size_t>(ints[1]))
    throw std::invalid_argument("host convolution: malformed config of " + std::to_string(ints.size()) + " values");
  const std::size_t n = static_cast<std::size_t>(ints[1]);
  auto list = [&](std::size_t which) {
    return std::vector<int64_t>(ints.begin() + 2 + which * n, ints.begin() + 2 + (which + 1) * n);
  };
  ConvolutionConfig config;
  config.what = static_cast<ConvolutionResult>(ints[0]);
  if (config.what != ConvolutionResult::kForward && config.what != ConvolutionResult::kGradInput &&
      config.what != ConvolutionResult::kGradWeight)
    throw std::invalid_argument("host convolution: unknown result kind " + std::to_string(ints[0]));
  config.stride = list(0);
  config.padding = list(1);
  config.dilation = list(2);
  config.output_padding = list(3);
  config.transposed = ints[2 + 4 * n] != 0;
  config.groups = ints[3 + 4 * n];
  return config;
}

}  // namespace torch_xla::host
