// Tells c10 about the XLA device type: current device, device count, streams. Without
// it PyTorch refuses to create tensors on 'xla'.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "runtime/client.h"

namespace torch_xla {
namespace {

thread_local c10::DeviceIndex current_device = 0;

struct XlaGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return c10::DeviceType::XLA; }

  c10::Device exchangeDevice(c10::Device device) const override {
    c10::Device previous = getDevice();
    setDevice(device);
    return previous;
  }
  c10::Device getDevice() const override { return c10::Device(c10::DeviceType::XLA, current_device); }
  void setDevice(c10::Device device) const override {
    if (device.has_index()) current_device = device.index();
  }
  void uncheckedSetDevice(c10::Device device) const noexcept override {
    if (device.has_index()) current_device = device.index();
  }
  c10::Stream getStream(c10::Device device) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, device);
  }
  c10::Stream exchangeStream(c10::Stream stream) const noexcept override { return stream; }
  c10::DeviceIndex deviceCount() const noexcept override {
    try {
      return static_cast<c10::DeviceIndex>(runtime::Client::Get().device_count());
    } catch (...) {
      return 0;
    }
  }
};

C10_REGISTER_GUARD_IMPL(XLA, XlaGuardImpl);

}  // namespace
}  // namespace torch_xla
