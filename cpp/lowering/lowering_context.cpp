#include "lowering/lowering_context.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "lowering/flat_elementwise.h"
#include "ir/builder_sharding.h"
#include "runtime/device_dims.h"

namespace torch_xla::lowering {
namespace {

void AppendTypes(std::string& out, const std::vector<Shape>& shapes) {
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (i) out += ", ";
    out += shapes[i].ToMlir();
  }
}

uint16_t FloatToBf16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (std::isnan(f)) return 0x7fc0;
  // Round to nearest even, as PyTorch's conversion does.
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

uint16_t FloatToHalfBits(float f) {
  // IEEE half conversion (round to nearest even).
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t mant = x & 0x7fffff;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff);
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  exp = exp - 127 + 15;
  if (exp >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return static_cast<uint16_t>(half);
}

std::mutex& RulesMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<LowerFn>& Rules() {
  static std::vector<LowerFn> rules;
  return rules;
}

}  // namespace

std::string I64Array(const std::vector<int64_t>& values) {
  std::string s = "array<i64";
  for (std::size_t i = 0; i < values.size(); ++i) {
    s += i ? ", " : ": ";
    s += std::to_string(values[i]);
  }
  return s + ">";
}

std::vector<Ssa> EmitHostKernelCall(LoweringContext& ctx, std::string_view target, const std::vector<Ssa>& operands,
                                    const std::vector<Shape>& results, const std::vector<int64_t>& config) {
  std::string attrs = "call_target_name = \"" + std::string(target) + "\", api_version = 4 : i32";
  if (!config.empty()) attrs += ", backend_config = {config = " + I64Array(config) + "}";
  return ctx.EmitMulti("stablehlo.custom_call", operands, results, attrs);
}

std::string ScalarLiteral(double value, ElementType type) {
  char buf[64];
  switch (type) {
    case ElementType::kPred:
      return value != 0 ? "true" : "false";
    case ElementType::kF32: {
      float f = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      std::snprintf(buf, sizeof buf, "0x%08X", bits);
      return buf;
    }
    case ElementType::kF64: {
      uint64_t bits;
      std::memcpy(&bits, &value, sizeof bits);
      std::snprintf(buf, sizeof buf, "0x%016llX", static_cast<unsigned long long>(bits));
      return buf;
    }
    case ElementType::kBF16:
      std::snprintf(buf, sizeof buf, "0x%04X", FloatToBf16Bits(static_cast<float>(value)));
      return buf;
    case ElementType::kF16:
      std::snprintf(buf, sizeof buf, "0x%04X", FloatToHalfBits(static_cast<float>(value)));
      return buf;
    case ElementType::kC64:
    case ElementType::kC128:
      std::snprintf(buf, sizeof buf, "(%.17e, 0.0)", value);  // a float literal: 2 reads as an integer
      return buf;
    default:
      if (runtime::IsUnsigned(type)) {
        std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(value < 0 ? 0 : value));
      } else {
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(value));
      }
      return buf;
  }
}

Ssa LoweringContext::NewValue(const Shape& shape) {
  types_.push_back(shape);
  names_.push_back("%" + std::to_string(types_.size() - 1));
  return Ssa{static_cast<int>(types_.size() - 1)};
}

Ssa LoweringContext::AddParameter(const Shape& shape, int aliased_output, const std::string& sharding) {
  const Shape device_shape(shape.type, runtime::DeviceDims(shape.type, shape.dims));
  Ssa v = NewValue(device_shape);
  parameters_.push_back(v);
  parameter_aliases_.push_back(aliased_output);
  parameter_shardings_.push_back(sharding);
  const bool manual = sharding == "{manual}";
  const bool tiled = !manual && !sharding.empty() && sharding != "{replicated}";
  if (manual) SetManual(v);
  if (tiled) SetTiled(v);
  if (device_shape == shape) return v;
  Ssa reshaped = Emit("stablehlo.reshape", {v}, shape);
  SetFlatForm(reshaped, v);
  if (manual) SetManual(reshaped);
  if (tiled) SetTiled(reshaped);
  return reshaped;
}

Ssa LoweringContext::Flat(Ssa v) {
  auto it = flat_of_.find(v.id);
  if (it != flat_of_.end()) return it->second;
  const Shape& shape = TypeOf(v);
  Ssa flat = Emit("stablehlo.reshape", {v}, Shape(shape.type, {shape.numel()}));
  flat_of_[v.id] = flat;
  return flat;
}

bool LoweringContext::IsParameter(Ssa v) const {
  // A parameter held in another device form arrives as the reshape AddParameter made.
  auto flat = flat_of_.find(v.id);
  const int id = flat != flat_of_.end() ? flat->second.id : v.id;
  for (Ssa p : parameters_)
    if (p.id == v.id || p.id == id) return true;
  return false;
}

Ssa LoweringContext::Emit(std::string_view op, const std::vector<Ssa>& operands, const Shape& result,
                          std::string_view attrs) {
  return EmitMulti(op, operands, {result}, attrs)[0];
}

std::vector<Ssa> LoweringContext::EmitMulti(std::string_view op, const std::vector<Ssa>& operands,
                                            const std::vector<Shape>& results, std::string_view attrs) {
  return EmitWithRegion(op, operands, results, {}, attrs);
}

std::vector<Ssa> LoweringContext::EmitWithRegion(std::string_view op, const std::vector<Ssa>& operands,
                                                 const std::vector<Shape>& results, std::string_view region,
                                                 std::string_view attrs) {
  std::vector<std::string> regions;
  if (!region.empty()) regions.emplace_back(region);
  return EmitWithRegions(op, operands, results, regions, attrs);
}

std::vector<Ssa> LoweringContext::EmitWithRegions(std::string_view op, const std::vector<Ssa>& operands,
                                                  const std::vector<Shape>& results,
                                                  const std::vector<std::string>& regions, std::string_view attrs) {
  std::vector<Ssa> out;
  out.reserve(results.size());
  for (const Shape& s : results) out.push_back(NewValue(s));
  body_ += "    ";
  if (results.size() == 1) {
    body_ += Name(out[0]);
  } else {
    // A multi-result op defines a group "%gN:count"; its results are "%gN#i".
    body_ += "%g" + std::to_string(out[0].id) + ":" + std::to_string(results.size());
  }
  body_ += " = \"";
  body_ += op;
  body_ += "\"(";
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (i) body_ += ", ";
    body_ += Name(operands[i]);
  }
  body_ += ")";
  for (std::size_t i = 0; i < regions.size(); ++i) {
    body_ += i ? ", {\n" : " ({\n";
    body_ += regions[i];
    body_ += "    }";
  }
  if (!regions.empty()) body_ += ")";
  if (!attrs.empty()) {
    body_ += " {";
    body_ += attrs;
    body_ += "}";
  }
  body_ += " : (";
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (i) body_ += ", ";
    body_ += types_[operands[i].id].ToMlir();
  }
  body_ += ") -> ";
  if (results.size() == 1) {
    body_ += results[0].ToMlir();
  } else {
    body_ += "(";
    AppendTypes(body_, results);
    body_ += ")";
  }
  body_ += location_;
  body_ += "\n";
  if (results.size() > 1) {
    for (std::size_t i = 0; i < results.size(); ++i)
      names_[out[i].id] = "%g" + std::to_string(out[0].id) + "#" + std::to_string(i);
  }
  return out;
}

Ssa LoweringContext::Convert(Ssa v, ElementType type) {
  const Shape shape = TypeOf(v);  // a copy: Emit may move the types it refers into
  return shape.type == type ? v : Emit("stablehlo.convert", {v}, Shape(type, shape.dims));
}

Ssa LoweringContext::Constant(const Shape& shape, double value) {
  std::string attrs = "value = dense<" + ScalarLiteral(value, shape.type) + "> : " + shape.ToMlir();
  return Emit("stablehlo.constant", {}, shape, attrs);
}

std::string CompareAttributes(std::string_view direction, ElementType type) {
  const char* compare_type = runtime::IsFloating(type) || runtime::IsComplex(type) ? "FLOAT"
                             : type == ElementType::kPred || runtime::IsUnsigned(type) ? "UNSIGNED"
                                                                                         : "SIGNED";
  return "comparison_direction = #stablehlo<comparison_direction " + std::string(direction) +
         ">, compare_type = #stablehlo<comparison_type " + compare_type + ">";
}

std::string DotDimensions(const std::string& lhs_batching, const std::string& rhs_batching,
                          const std::string& lhs_contracting, const std::string& rhs_contracting) {
  return "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = " + lhs_batching +
         ", rhs_batching_dimensions = " + rhs_batching + ", lhs_contracting_dimensions = " + lhs_contracting +
         ", rhs_contracting_dimensions = " + rhs_contracting + ">";
}

std::string LoweringContext::BinaryRegion(std::string_view op, ElementType type) {
  std::string t = Shape(type, {}).ToMlir();
  std::string a = FreshName(), b = FreshName(), r = FreshName();
  std::string s;
  s += "      ^bb0(" + a + ": " + t + ", " + b + ": " + t + "):\n";
  s += "        " + r + " = \"" + std::string(op) + "\"(" + a + ", " + b + ") : (" + t + ", " + t + ") -> " + t + "\n";
  s += "        \"stablehlo.return\"(" + r + ") : (" + t + ") -> ()\n";
  return s;
}

namespace {

std::string Quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

// "path:12 (function)" becomes loc("function"("path":12:1)): a name and a file line,
// which XLA keeps as the operation's op_name and source_file/source_line metadata.
void LoweringContext::SetLocation(const std::string& location) {
  location_.clear();
  if (location.empty()) return;
  std::size_t open = location.rfind(" (");
  std::string where = open == std::string::npos ? location : location.substr(0, open);
  std::string name = open == std::string::npos ? "" : location.substr(open + 2, location.size() - open - 3);
  std::size_t colon = where.rfind(':');
  std::string file = colon == std::string::npos ? where : where.substr(0, colon);
  std::string line = colon == std::string::npos ? "0" : where.substr(colon + 1);
  if (line.empty() || line.find_first_not_of("0123456789") != std::string::npos) line = "0";
  location_ = " loc(" + Quoted(name.empty() ? where : name) + "(" + Quoted(file) + ":" + line + ":1))";
}

void LoweringContext::Bind(const Node* node, uint32_t index, Ssa ssa) {
  auto [it, inserted] = bound_.insert_or_assign(ValueKey{node, index}, ssa);
  if (inserted && region_bindings_) region_bindings_->push_back(it->first);
}

std::vector<Ssa> LoweringContext::LowerNode(const Node& node) {
  LowerFn fn = FindLowering(node.op());
  if (!fn) throw std::runtime_error("no lowering rule for IR op " + node.ToString());
  std::vector<Ssa> operands;
  operands.reserve(node.operands().size());
  for (const Value& v : node.operands()) operands.push_back(Lookup(v));
  // An op on a manual value takes its other operands whole on every device: a tiled one
  // would give wrong values (XLA does not refuse it).
  if (!manual_.empty() && !tiled_.empty() && node.operands().size() > 1) {
    bool manual = false;
    for (Ssa o : operands) manual = manual || IsManual(o);
    for (std::size_t i = 0; manual && i < operands.size(); ++i)
      if (!IsManual(operands[i]) && tiled_.count(operands[i].id) != 0)
        throw std::runtime_error(
            node.op().name() + " of a manually sharded value ({manual}) with a value of shape " +
            node.operand(i).shape().ToString() +
            " laid out in tiles over the devices: inside manual sharding the other operands must be replicated, "
            "or enter as pieces themselves (torch_xla.distributed.spmd.enable_manual_sharding)");
  }
  std::vector<Ssa> outs;
  if (std::optional<Ssa> flat = LowerFlatElementwise(*this, node, operands)) {
    outs = {*flat};
  } else {
    outs = fn(*this, node, operands);
  }
  // What is computed from a manual value is manual, up to the rule that leaves the
  // manual view (SPMDShardToFullShape: its rule decides, as do those that enter it).
  if (!manual_.empty() && node.op() != ir::SpmdShardToFullOp()) {
    bool manual = false;
    for (Ssa o : operands) manual = manual || IsManual(o);
    if (manual)
      for (Ssa o : outs) SetManual(o);
  }
  for (std::size_t i = 0; i < outs.size(); ++i) Bind(&node, static_cast<uint32_t>(i), outs[i]);
  return outs;
}

std::string LoweringContext::LowerRegion(const ir::Region& region) {
  std::string outer_body;
  std::swap(outer_body, body_);
  std::vector<ValueKey> bindings;
  std::vector<ValueKey>* outer_bindings = region_bindings_;
  region_bindings_ = &bindings;

  std::string header = "      ^bb0(";
  for (std::size_t i = 0; i < region.parameters.size(); ++i) {
    const Shape& shape = region.parameters[i]->shape();
    Ssa arg = NewValue(shape);
    Bind(region.parameters[i].get(), 0, arg);
    header += (i ? ", " : "") + Name(arg) + ": " + shape.ToMlir();
  }
  header += "):\n";

  // Post-order over the nodes not yet lowered; values of enclosing scopes stay visible.
  std::vector<std::pair<const Node*, bool>> stack;
  for (auto it = region.results.rbegin(); it != region.results.rend(); ++it) stack.emplace_back(it->node.get(), false);
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    stack.pop_back();
    if (IsBound(node)) continue;
    if (expanded) {
      LowerNode(*node);
      continue;
    }
    stack.emplace_back(node, true);
    for (auto it = node->operands().rbegin(); it != node->operands().rend(); ++it)
      if (!IsBound(it->node.get())) stack.emplace_back(it->node.get(), false);
  }

  std::vector<Ssa> results;
  for (const Value& v : region.results) results.push_back(Lookup(v));
  std::string ret = "    \"stablehlo.return\"(";
  std::string types;
  for (std::size_t i = 0; i < results.size(); ++i) {
    ret += (i ? ", " : "") + Name(results[i]);
    types += (i ? ", " : "") + TypeOf(results[i]).ToMlir();
  }
  ret += ") : (" + types + ") -> ()\n";

  std::string text = header + body_ + ret;
  std::swap(outer_body, body_);
  for (const ValueKey& k : bindings) bound_.erase(k);
  region_bindings_ = outer_bindings;
  return text;
}

Ssa LoweringContext::Lookup(const Value& value) const {
  auto it = bound_.find(ValueKey{value.node.get(), value.index});
  if (it == bound_.end()) throw std::logic_error("lowering: operand lowered out of order: " + value.node->ToString());
  return it->second;
}

std::optional<Ssa> LoweringContext::LastOrderedCall() const {
  if (InRegion()) return std::nullopt;
  return last_ordered_call_;
}

void LoweringContext::SetLastOrderedCall(Ssa call) {
  if (!InRegion()) last_ordered_call_ = call;
}

void LoweringContext::AddFunction(const std::string& symbol, const std::string& text) {
  auto [it, inserted] = function_texts_.try_emplace(symbol, text);
  if (inserted) {
    function_order_.push_back(symbol);
  } else if (it->second != text) {
    throw std::logic_error("lowering: two different functions named @" + symbol);
  }
}

std::string LoweringContext::Finish(const std::vector<Ssa>& given_results, int num_replicas, int num_partitions,
                                    const std::vector<std::string>& result_shardings) {
  std::vector<Ssa> results;
  std::vector<std::string> shardings = result_shardings;
  for (std::size_t i = 0; i < given_results.size(); ++i) {
    Ssa r = given_results[i];
    const Shape& shape = TypeOf(r);
    results.push_back(runtime::DeviceDims(shape.type, shape.dims) == shape.dims ? r : Flat(r));
    if (num_partitions > 1 && IsManual(r)) {
      if (shardings.size() < given_results.size()) shardings.resize(given_results.size());
      if (shardings[i].empty()) {
        shardings[i] = "{manual}";
      } else if (shardings[i] != "{manual}") {
        throw std::runtime_error(
            "an SPMD graph result of shape " + shape.ToString() + " is to be sharded as " + shardings[i] +
            ", but it is computed from a manually sharded value ({manual}: each device's own piece); turn the "
            "pieces back into a global tensor first (torch_xla.distributed.spmd.disable_manual_sharding)");
      }
    }
  }
  std::string m = "module @SyncTensorsGraph attributes {mhlo.num_replicas = " + std::to_string(num_replicas) +
                  " : i32, mhlo.num_partitions = " + std::to_string(num_partitions) +
                  " : i32} {\n  func.func public @main(";
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (i) m += ", ";
    m += Name(parameters_[i]) + ": " + types_[parameters_[i].id].ToMlir();
    std::vector<std::string> attrs;
    // XLA's MLIR import turns this into the module's input/output alias config.
    if (parameter_aliases_[i] >= 0) attrs.push_back("tf.aliasing_output = " + std::to_string(parameter_aliases_[i]) + " : i32");
    if (!parameter_shardings_[i].empty()) attrs.push_back("mhlo.sharding = \"" + parameter_shardings_[i] + "\"");
    for (std::size_t a = 0; a < attrs.size(); ++a) m += (a ? ", " : " {") + attrs[a];
    if (!attrs.empty()) m += "}";
  }
  m += ") -> (";
  std::vector<Shape> result_types;
  for (Ssa r : results) result_types.push_back(types_[r.id]);
  if (shardings.empty()) {
    AppendTypes(m, result_types);
  } else {
    for (std::size_t i = 0; i < result_types.size(); ++i) {
      if (i) m += ", ";
      m += result_types[i].ToMlir();
      if (i < shardings.size() && !shardings[i].empty())
        m += " {mhlo.sharding = \"" + shardings[i] + "\"}";
    }
  }
  m += ") {\n";
  m += body_;
  m += "    \"func.return\"(";
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i) m += ", ";
    m += Name(results[i]);
  }
  m += ") : (";
  AppendTypes(m, result_types);
  m += ") -> ()\n  }\n";
  for (const std::string& symbol : function_order_) {
    m += "  ";
    m += function_texts_.at(symbol);
    m += "\n";
  }
  m += "}\n";
  return m;
}

void RegisterLowering(ir::OpKind kind, LowerFn fn) {
  std::lock_guard<std::mutex> lock(RulesMutex());
  auto& rules = Rules();
  if (rules.size() <= kind.id()) rules.resize(kind.id() + 1, nullptr);
  rules[kind.id()] = fn;
}

LowerFn FindLowering(ir::OpKind kind) {
  std::lock_guard<std::mutex> lock(RulesMutex());
  auto& rules = Rules();
  return kind.id() < rules.size() ? rules[kind.id()] : nullptr;
}

}  // namespace torch_xla::lowering
