#include "tensor/rng_state.h"

#include <map>
#include <mutex>

#include "ir/builder.h"
#include "tensor/xla_tensor.h"

namespace torch_xla {
namespace {

using runtime::ElementType;

struct DeviceRng {
  uint64_t seed = 0;
  XlaTensorPtr state;  // u64[2]
  bool drawn = false;  // random numbers were drawn since `seed` was set
};

std::mutex& RngMutex() {
  static std::mutex mu;
  return mu;
}

std::map<int, DeviceRng>& States() {
  static std::map<int, DeviceRng>* states = new std::map<int, DeviceRng>();
  return *states;
}

XlaTensorPtr InitialState(int device, uint64_t seed) {
  uint64_t words[2] = {seed, 0x9e3779b97f4a7c15ULL ^ seed};
  return XlaTensor::FromBuffer(runtime::Client::Get().TransferToDevice(words, ElementType::kU64, {2}, device));
}

DeviceRng& StateOf(int device) {
  auto& states = States();
  auto it = states.find(device);
  if (it == states.end()) {
    DeviceRng rng;
    rng.seed = 101;  // deterministic default, as the reference implementation has
    rng.state = InitialState(device, rng.seed);
    it = states.emplace(device, rng).first;
  }
  return it->second;
}

const ir::OpKind kRngBitGenerator = ir::OpKind::Get("stablehlo.rng_bit_generator");
const ir::OpKind kBitcastConvert = ir::OpKind::Get("stablehlo.bitcast_convert");

}  // namespace

void SetRngSeed(int device, uint64_t seed) {
  XlaTensorPtr state = InitialState(device, seed);
  std::lock_guard<std::mutex> lock(RngMutex());
  DeviceRng& rng = States()[device];
  rng.seed = seed;
  rng.state = state;
  rng.drawn = false;
}

uint64_t GetRngSeed(int device) {
  std::lock_guard<std::mutex> lock(RngMutex());
  DeviceRng& rng = StateOf(device);
  if (rng.drawn) {
    // splitmix64's finalizer: successive seeds look unrelated.
    uint64_t z = rng.seed + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    rng.seed = z ^ (z >> 31);
    rng.state = InitialState(device, rng.seed);
    rng.drawn = false;
  }
  return rng.seed;
}

XlaTensorPtr RngStateTensor(int device) {
  std::lock_guard<std::mutex> lock(RngMutex());
  return StateOf(device).state;
}

bool IsRngStateTensor(int device, const XlaTensor* tensor) {
  std::lock_guard<std::mutex> lock(RngMutex());
  auto it = States().find(device);
  return it != States().end() && it->second.state.get() == tensor;
}

void SetRngStateTensor(int device, XlaTensorPtr state, bool drawn) {
  std::lock_guard<std::mutex> lock(RngMutex());
  DeviceRng& rng = StateOf(device);
  rng.state = std::move(state);
  rng.drawn = rng.drawn || drawn;
}

ir::Value RandomBits(int device, const std::vector<int64_t>& dims, bool wide) {
  std::lock_guard<std::mutex> lock(RngMutex());
  DeviceRng& rng = StateOf(device);
  ir::Value state = rng.state->GetIrValue();
  ir::Shape bits(wide ? ElementType::kU64 : ElementType::kU32, dims);
  ir::NodePtr node = ir::MakeNode(kRngBitGenerator, std::vector<ir::Value>{state},
                                  std::vector<ir::Shape>{state.shape(), bits});
  // The next random op continues from the new state; the state tensor is synced
  // with the step like any pending tensor.
  XlaTensorPtr next = XlaTensor::FromIr(ir::Value(node, 0), device);
  rng.state = next;
  rng.drawn = true;
  return ir::Value(node, 1);
}

ir::Value RandomUniform(int device, const ir::Shape& shape) {
  if (shape.type == ElementType::kF64) {
    // 52 random mantissa bits under exponent 0 give [1, 2); subtract 1.
    ir::Value bits = RandomBits(device, shape.dims, true);
    ir::Value mantissa = ir::Binary(ir::op::kShiftRightLogical, bits, ir::Constant(12, bits.shape()));
    ir::Value one_bits = ir::Binary(ir::op::kOr, mantissa, ir::Constant(static_cast<double>(0x3FF0000000000000ULL), bits.shape()));
    ir::Value f = ir::Value(ir::MakeNode(kBitcastConvert, std::vector<ir::Value>{one_bits}, ir::Shape(ElementType::kF64, shape.dims)));
    return ir::Binary(ir::op::kSubtract, f, ir::Constant(1, f.shape()));
  }
  ir::Value bits = RandomBits(device, shape.dims, false);
  ir::Value mantissa = ir::Binary(ir::op::kShiftRightLogical, bits, ir::Constant(9, bits.shape()));
  ir::Value one_bits = ir::Binary(ir::op::kOr, mantissa, ir::Constant(static_cast<double>(0x3F800000u), bits.shape()));
  ir::Value f = ir::Value(ir::MakeNode(kBitcastConvert, std::vector<ir::Value>{one_bits}, ir::Shape(ElementType::kF32, shape.dims)));
  ir::Value u = ir::Binary(ir::op::kSubtract, f, ir::Constant(1, f.shape()));
  return ir::Convert(u, shape.type);
}

}  // namespace torch_xla
