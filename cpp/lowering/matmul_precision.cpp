#include "lowering/matmul_precision.h"

#include <atomic>
#include <stdexcept>

#include "runtime/client.h"

namespace torch_xla::lowering {
namespace {

std::atomic<MatMulPrecision> g_precision{MatMulPrecision::kHighest};

bool CarriesPrecision() { return !runtime::Client::Get().LowersForCpu(); }

}  // namespace

void SetMatMulPrecision(MatMulPrecision precision) { g_precision.store(precision, std::memory_order_relaxed); }

MatMulPrecision GetMatMulPrecision() { return g_precision.load(std::memory_order_relaxed); }

std::string MatMulPrecisionName(MatMulPrecision precision) {
  switch (precision) {
    case MatMulPrecision::kDefault:
      return "default";
    case MatMulPrecision::kHigh:
      return "high";
    case MatMulPrecision::kHighest:
      return "highest";
  }
  return "highest";
}

MatMulPrecision ParseMatMulPrecision(const std::string& name) {
  if (name == "default") return MatMulPrecision::kDefault;
  if (name == "high") return MatMulPrecision::kHigh;
  if (name == "highest") return MatMulPrecision::kHighest;
  throw std::invalid_argument("mat mul precision must be 'default', 'high' or 'highest', got '" + name + "'");
}

std::string PrecisionConfigAttribute() {
  if (!CarriesPrecision()) return "";
  const char* level = "DEFAULT";
  switch (GetMatMulPrecision()) {
    case MatMulPrecision::kDefault:
      level = "DEFAULT";
      break;
    case MatMulPrecision::kHigh:
      level = "HIGH";
      break;
    case MatMulPrecision::kHighest:
      level = "HIGHEST";
      break;
  }
  const std::string one = std::string("#stablehlo<precision ") + level + ">";
  return ", precision_config = [" + one + ", " + one + "]";
}

uint64_t MatMulPrecisionKey() {
  return CarriesPrecision() ? 1 + static_cast<uint64_t>(GetMatMulPrecision()) : 0;
}

}  // namespace torch_xla::lowering
