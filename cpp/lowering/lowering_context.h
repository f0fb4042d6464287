#pragma once
// Builds one StableHLO module (MLIR text, generic operation syntax) from an IR graph.
// Lowering rules (see lowering/rules_*.cpp) call Emit() to append operations; the
// context tracks the SSA name and type of each emitted value.
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/node.h"
#include "ir/region.h"

namespace torch_xla::lowering {

using ir::ElementType;
using ir::Node;
using ir::Shape;
using ir::Value;

// An SSA value of the module being built, by index.
struct Ssa {
  int id = -1;
};

class LoweringContext {
 public:
  LoweringContext() = default;

  // Declares the next function argument, a buffer of `shape` given in its device form
  // (runtime/device_dims.h), and returns it in `shape` (a reshape where the forms
  // differ). `aliased_output` >= 0 lets the result of that index reuse the argument's
  // buffer (the caller donates the argument at execution).
  // `sharding` (SPMD): the argument's layout over the devices as HloSharding text
  // (runtime/sharding.h), written as its mhlo.sharding attribute; empty for none.
  Ssa AddParameter(const Shape& shape, int aliased_output = -1, const std::string& sharding = {});
  // Appends `%r = "op"(operands) {attrs} : (operand types) -> result type`.
  Ssa Emit(std::string_view op, const std::vector<Ssa>& operands, const Shape& result,
           std::string_view attrs = {});
  // The same for an op with several results; returns one Ssa per result.
  std::vector<Ssa> EmitMulti(std::string_view op, const std::vector<Ssa>& operands,
                             const std::vector<Shape>& results, std::string_view attrs = {});
  // Appends an op with one region (reduce, reduce_window, scatter, sort...): `region`
  // is the body text, built with RegionArgument()/EmitInRegion() style helpers below.
  std::vector<Ssa> EmitWithRegion(std::string_view op, const std::vector<Ssa>& operands,
                                  const std::vector<Shape>& results, std::string_view region,
                                  std::string_view attrs);
  // The same with several regions (stablehlo.while: condition, then body).
  std::vector<Ssa> EmitWithRegions(std::string_view op, const std::vector<Ssa>& operands,
                                   const std::vector<Shape>& results, const std::vector<std::string>& regions,
                                   std::string_view attrs);
  // The text of a region computing an IR sub-graph (ir/region.h): block arguments for its
  // parameters, its operations, and a stablehlo.return of its results. The values it
  // binds are forgotten at its end: they are not visible after the region.
  std::string LowerRegion(const ir::Region& region);
  // Emits the operations of one node (its operands already lowered) and binds its outputs.
  std::vector<Ssa> LowerNode(const Node& node);
  // A splat constant of `shape` holding `value` converted to the element type.
  Ssa Constant(const Shape& shape, double value);
  // `v` converted to element type `type` (v itself where it has that type already).
  Ssa Convert(Ssa v, ElementType type);

  // The body of a binary region `^bb0(%a: tensor<T>, %b: tensor<T>): r = op(a, b); return r`
  // for the scalar type T (used by reduce, reduce_window, scatter, all_reduce).
  std::string BinaryRegion(std::string_view op, ElementType type);

  const Shape& TypeOf(Ssa v) const { return types_[v.id]; }
  // Whether `v` is an argument of the function (a buffer the graph is given), or the
  // reshape of one held in another device form (AddParameter).
  bool IsParameter(Ssa v) const;
  const std::string& Name(Ssa v) const { return names_[v.id]; }

  // The source location ("file.py:12 (function)", ir/debug_location.h) that operations
  // emitted from now on carry as MLIR locations; "" for none.
  void SetLocation(const std::string& location);

  void Bind(const Node* node, uint32_t index, Ssa ssa);
  Ssa Lookup(const Value& value) const;
  bool IsBound(const Node* node) const { return bound_.count(ValueKey{node, 0}) != 0; }

  // The one-dimensional form of `v`: the value it was computed from or given as (a
  // parameter in its device form, runtime/device_dims.h, or a flattened element-wise
  // result, lowering/flat_elementwise.h), else a reshape.
  Ssa Flat(Ssa v);
  // Whether a region's body is being lowered (values bound there are local to it).
  bool InRegion() const { return region_bindings_ != nullptr; }
  // Whether `v` was given or computed in its one-dimensional form.
  bool HasFlatForm(Ssa v) const { return flat_of_.count(v.id) != 0; }
  // Records that `v` is the reshape of `flat`.
  void SetFlatForm(Ssa v, Ssa flat) { flat_of_[v.id] = flat; }

  // SPMD manual sharding: whether `v` is a per-device piece ({manual}): a parameter given
  // as one, a value made so (SPMDFullToShardShape, a {manual} constraint), or one
  // computed from such values. XLA's partitioner aborts the process on a result whose
  // value is manual unless the result is annotated {manual}, so Finish annotates them.
  void SetManual(Ssa v) { manual_.insert(v.id); }
  bool IsManual(Ssa v) const { return manual_.count(v.id) != 0; }
  // Values laid out over the devices in tiles as they are given or constrained (tiled
  // parameters, tiled constraints): an op that mixes one with a manual value gets wrong
  // values from XLA, without an error, so LowerNode refuses it.
  void SetTiled(Ssa v) { tiled_.insert(v.id); }
  // A channel id for a collective between partitions (SPMD), new in the module.
  int64_t NextChannelId() { return ++channel_ids_; }

  // Calls that must run one after another in the order they are lowered: the exchanges
  // with other processes, which meet in the order each process issues them. Each such
  // call takes the previous one's result as an extra operand, so that XLA, which runs
  // independent operations concurrently, runs them in that order. Inside a region (whose
  // values are local) there is no chain.
  std::optional<Ssa> LastOrderedCall() const;
  void SetLastOrderedCall(Ssa call);

  // Adds the definition of a function the graph calls (`text`, a func.func named
  // `symbol`: a computation built in Python, ir/user_function.h) to the module, after
  // @main. Declaring a symbol again with the same text does nothing; with another text
  // it throws std::logic_error.
  void AddFunction(const std::string& symbol, const std::string& text);

  // The module text returning `results`, each in its device form. An SPMD program has
  // num_partitions > 1 and each result's sharding text (result_shardings, one per result).
  std::string Finish(const std::vector<Ssa>& results, int num_replicas, int num_partitions = 1,
                     const std::vector<std::string>& result_shardings = {});

 private:
  Ssa NewValue(const Shape& shape);
  std::string FreshName() { return "%r" + std::to_string(region_counter_++); }

  std::vector<Shape> types_;
  std::vector<std::string> names_;  // "%7", or "%g5#1" for a result of a multi-result op
  std::vector<Ssa> parameters_;
  std::unordered_map<int, Ssa> flat_of_;  // Ssa id -> its one-dimensional form
  std::unordered_set<int> manual_;        // Ssa ids of manual values (SetManual)
  std::unordered_set<int> tiled_;         // Ssa ids of tiled values (SetTiled)
  int64_t channel_ids_ = 0;               // the last NextChannelId
  std::optional<Ssa> last_ordered_call_;
  std::vector<int> parameter_aliases_;
  std::vector<std::string> parameter_shardings_;  // aliased output per parameter, or -1
  std::string body_;
  std::unordered_map<std::string, std::string> function_texts_;  // by symbol (AddFunction)
  std::vector<std::string> function_order_;                        // symbols, as added
  std::string location_;  // " loc(...)" appended to each operation, or ""
  int region_counter_ = 0;
  struct ValueKey {
    const Node* node;
    uint32_t index;
    bool operator==(const ValueKey& o) const { return node == o.node && index == o.index; }
  };
  struct ValueKeyHash {
    std::size_t operator()(const ValueKey& k) const {
      return std::hash<const void*>()(k.node) ^ (static_cast<std::size_t>(k.index) << 1);
    }
  };
  std::unordered_map<ValueKey, Ssa, ValueKeyHash> bound_;
  // While a region is lowered: the keys bound inside it, to be erased at its end.
  std::vector<ValueKey>* region_bindings_ = nullptr;
};

// "array<i64: 1, 2>"
std::string I64Array(const std::vector<int64_t>& values);
// A typed-FFI custom call (api_version 4) of the host kernel registered as `target`
// (host/host_kernel.h) on `operands`, giving `results`; a non-empty `config` becomes
// the kernel's config integers (backend_config = {config = ...}).
std::vector<Ssa> EmitHostKernelCall(LoweringContext& ctx, std::string_view target, const std::vector<Ssa>& operands,
                                    const std::vector<Shape>& results, const std::vector<int64_t>& config = {});
// A literal of `value` in element type `type`, as MLIR's dense<> takes it.
std::string ScalarLiteral(double value, ElementType type);

// The attribute text of stablehlo.compare: `direction` ("EQ", "NE", "GE", "GT", "LE",
// "LT") and the comparison type that operands of element type `type` need.
std::string CompareAttributes(std::string_view direction, ElementType type);

// The dot_dimension_numbers attribute of stablehlo.dot_general; each argument a list
// such as "[0, 1]".
std::string DotDimensions(const std::string& lhs_batching, const std::string& rhs_batching,
                          const std::string& lhs_contracting, const std::string& rhs_contracting);

// A lowering rule emits the operations of one node and returns one Ssa per output.
using LowerFn = std::vector<Ssa> (*)(LoweringContext& ctx, const Node& node,
                                     const std::vector<Ssa>& operands);

void RegisterLowering(ir::OpKind kind, LowerFn fn);
LowerFn FindLowering(ir::OpKind kind);

// Registers a rule at static-initialisation time: static LoweringRule r("stablehlo.add", Fn);
struct LoweringRule {
  LoweringRule(std::string_view op_name, LowerFn fn) { RegisterLowering(ir::OpKind::Get(op_name), fn); }
};

}  // namespace torch_xla::lowering
