// Trains y = 3x - 2 (plus a second feature) with torch::nn::Linear and torch::optim::SGD
// on the XLA device. Each step builds a lazy graph; torch_xla::Sync() compiles (once) and
// runs it. Exits 0 when the loss fell.
#include <torch/torch.h>
#include "aten/api.h"  // torch_xla: <site-packages>/torch_xla/include

#include <cstdio>
#include <exception>

// torch::nn::Linear that can be moved to an XLA device. Module::to(device) moves each
// parameter with Variable::set_data, which rejects a CPU -> XLA move ("incompatible tensor
// type": XLA is not one of the dense backends TensorImpl::has_compatible_shallow_copy_type
// accepts). Python's Module._apply makes new Parameters in that case; here the registered
// parameters are replaced the same way when to() refuses.
struct XlaLinearImpl : torch::nn::LinearImpl {
  using torch::nn::LinearImpl::LinearImpl;

  void MoveTo(c10::Device device) {
    try {
      to(device);
      return;
    } catch (const c10::Error&) {
    }
    torch::NoGradGuard no_grad;
    for (auto& item : parameters_) {
      bool requires_grad = item.value().requires_grad();
      item.value() = item.value().to(device).requires_grad_(requires_grad);
    }
    weight = parameters_["weight"];
    if (parameters_.contains("bias")) bias = parameters_["bias"];
  }
};
TORCH_MODULE(XlaLinear);

int main() {
  try {
    const c10::Device device = torch_xla::XlaDevice();
    std::printf("device: %s (%s, %d device(s))\n", device.str().c_str(), torch_xla::DeviceKind().c_str(),
                torch_xla::DeviceCount());

    torch::manual_seed(0);
    // Data: 64 samples of 2 features; target = 3*x0 - 0.5*x1 - 2.
    torch::Tensor x = torch::randn({64, 2});
    torch::Tensor y = x.matmul(torch::tensor({3.0f, -0.5f})).unsqueeze(1) - 2.0f;
    x = x.to(device);
    y = y.to(device);

    XlaLinear model(2, 1);
    model->MoveTo(device);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));

    const int steps = 20;
    float first_loss = 0, last_loss = 0;
    for (int step = 0; step < steps; ++step) {
      optimizer.zero_grad();
      torch::Tensor loss = torch::mse_loss(model->forward(x), y);
      loss.backward();
      optimizer.step();
      torch_xla::Sync();  // run this step's graph (mark_step)
      float value = loss.item<float>();
      if (step == 0) first_loss = value;
      last_loss = value;
      std::printf("step %2d  loss %.6f\n", step, value);
    }
    torch::Tensor w = model->weight.cpu(), b = model->bias.cpu();
    std::printf("weight = [%.3f, %.3f], bias = %.3f (target [3, -0.5], -2)\n", w[0][0].item<float>(),
                w[0][1].item<float>(), b[0].item<float>());
    if (!(last_loss < first_loss)) {
      std::printf("FAIL: loss did not fall (%.6f -> %.6f)\n", first_loss, last_loss);
      return 1;
    }
    std::printf("OK: loss fell from %.6f to %.6f\n", first_loss, last_loss);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
