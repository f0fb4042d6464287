#include "lowering/matmul_precision.h"

#include <atomic>
#include <iterator>
#include <stdexcept>

#include "runtime/client.h"

namespace torch_xla::lowering {
namespace {

std::atomic<MatMulPrecision> g_precision{MatMulPrecision::kHighest};

// By MatMulPrecision's value: the setting's name and StableHLO's precision level.
struct Level {
  const char* name;
  const char* stablehlo;
};
constexpr Level kLevels[] = {{"default", "DEFAULT"}, {"high", "HIGH"}, {"highest", "HIGHEST"}};

bool CarriesPrecision() { return !runtime::Client::Get().LowersForCpu(); }

}  // namespace

void SetMatMulPrecision(MatMulPrecision precision) { g_precision.store(precision, std::memory_order_relaxed); }

MatMulPrecision GetMatMulPrecision() { return g_precision.load(std::memory_order_relaxed); }

std::string MatMulPrecisionName(MatMulPrecision precision) { return kLevels[static_cast<int>(precision)].name; }

MatMulPrecision ParseMatMulPrecision(const std::string& name) {
  for (int i = 0; i < static_cast<int>(std::size(kLevels)); ++i)
    if (name == kLevels[i].name) return static_cast<MatMulPrecision>(i);
  throw std::invalid_argument("mat mul precision must be 'default', 'high' or 'highest', got '" + name + "'");
}

std::string PrecisionConfigAttribute() {
  if (!CarriesPrecision()) return "";
  const std::string one = std::string("#stablehlo<precision ") +
                          kLevels[static_cast<int>(GetMatMulPrecision())].stablehlo + ">";
  return ", precision_config = [" + one + ", " + one + "]";
}

uint64_t MatMulPrecisionKey() {
  return CarriesPrecision() ? 1 + static_cast<uint64_t>(GetMatMulPrecision()) : 0;
}

}  // namespace torch_xla::lowering
