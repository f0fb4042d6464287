#include "ir/builder_control.h"

#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace torch_xla::ir {
namespace {

const OpKind kOptimizationBarrier = OpKind::Get("stablehlo.optimization_barrier");

// How a node of a traced function relates to the loop being built.
enum class Role : unsigned char {
  kCarried,  // computed from the loop's stand-ins: rebuilt in each region
  kClosed,   // reads nothing but constants: lowered inside the region as it is
  kOutside,  // reads a graph input or an enclosing loop's value: computed outside, passed in
};

struct ValueKeyHash {
  std::size_t operator()(const std::pair<const Node*, uint32_t>& k) const {
    return std::hash<const void*>()(k.first) ^ (static_cast<std::size_t>(k.second) << 1);
  }
};

class LoopBuilder {
 public:
  LoopBuilder(const std::vector<Value>& init, const TracedFunction& condition, const TracedFunction& body,
              const char* op_name)
      : init_(init), condition_(condition), body_(body), op_name_(op_name) {}

  std::vector<Value> Build() {
    CheckTraces();
    for (const TracedFunction* f : {&condition_, &body_}) {
      for (std::size_t i = 0; i < f->placeholders.size(); ++i) slot_of_[f->placeholders[i].get()] = i;
      for (const Value& v : f->results) Classify(v.node.get());
    }
    for (const TracedFunction* f : {&condition_, &body_}) {
      for (const Value& v : f->results) CollectOutsideValues(v);
    }
    std::vector<Value> carried = init_;
    carried.insert(carried.end(), outside_.begin(), outside_.end());
    const std::size_t n = init_.size();
    std::vector<Value> out = While(
        carried,
        [&](const std::vector<Value>& params) {
          rebuilt_.clear();
          return Rebuild(condition_.results[0], params);
        },
        [&](const std::vector<Value>& params) {
          rebuilt_.clear();
          std::vector<Value> results;
          for (const Value& v : body_.results) results.push_back(Rebuild(v, params));
          // Values from outside pass through every iteration unchanged.
          results.insert(results.end(), params.begin() + static_cast<std::ptrdiff_t>(n), params.end());
          return results;
        });
    out.resize(n);
    return out;
  }

 private:
  std::string Name() const { return op_name_; }

  void CheckTraces() const {
    const std::size_t n = init_.size();
    if (n == 0) throw std::invalid_argument(Name() + ": no carried values");
    if (condition_.placeholders.size() != n || body_.placeholders.size() != n)
      throw std::invalid_argument(Name() + ": the traces ran on " + std::to_string(condition_.placeholders.size()) +
                                  " and " + std::to_string(body_.placeholders.size()) + " values for " +
                                  std::to_string(n) + " carried values");
    if (condition_.results.size() != 1)
      throw std::invalid_argument(Name() + ": the condition returns " + std::to_string(condition_.results.size()) +
                                  " values, not one");
    const Shape& pred = condition_.results[0].shape();
    if (pred.type != ElementType::kPred || pred.rank() != 0)
      throw std::invalid_argument(Name() + ": the condition returns " + pred.ToString() +
                                  ", not a bool scalar (pred[])");
    if (body_.results.size() != n)
      throw std::invalid_argument(Name() + ": the body returns " + std::to_string(body_.results.size()) +
                                  " values for " + std::to_string(n) + " carried values");
    for (std::size_t i = 0; i < n; ++i) {
      if (!(body_.results[i].shape() == init_[i].shape()))
        throw std::invalid_argument(Name() + ": the body returns " + body_.results[i].shape().ToString() +
                                    " for carried value " + std::to_string(i) + " of " + init_[i].shape().ToString() +
                                    "; each result must keep its carried value's shape and dtype");
    }
  }

  // The role of every node reachable from `root`, operands before users.
  void Classify(const Node* root) {
    std::vector<std::pair<const Node*, std::size_t>> stack;
    if (role_.count(root)) return;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->operands().size()) {
        const Node* child = node->operand(next++).node.get();
        if (!role_.count(child)) stack.emplace_back(child, 0);
        continue;
      }
      const Node* done = node;
      stack.pop_back();
      if (role_.count(done)) continue;  // reached twice before it was finished
      Role role = Role::kClosed;
      if (slot_of_.count(done)) {
        role = Role::kCarried;
      } else if (done->leaf_kind() != LeafKind::kNone || done->op() == RegionParameterOp()) {
        role = Role::kOutside;
      } else {
        for (const Value& v : done->operands()) {
          Role r = role_.at(v.node.get());
          if (r == Role::kCarried) role = Role::kCarried;
          else if (r == Role::kOutside && role == Role::kClosed) role = Role::kOutside;
        }
      }
      role_[done] = role;
    }
  }

  // The values computed outside that the rebuilt regions read: results of the traces and
  // operands of carried nodes, in the order first met.
  void CollectOutsideValues(const Value& result) {
    auto note = [&](const Value& v) {
      if (role_.at(v.node.get()) != Role::kOutside) return;
      auto key = std::make_pair(v.node.get(), v.index);
      if (outside_slot_.emplace(key, init_.size() + outside_.size()).second) outside_.push_back(v);
    };
    note(result);
    std::vector<const Node*> stack{result.node.get()};
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (role_.at(n) != Role::kCarried || !walked_.insert(n).second) continue;
      for (const Value& v : n->operands()) {
        note(v);
        stack.push_back(v.node.get());
      }
    }
  }

  // `v` inside a region whose block arguments are `params`.
  Value Rebuild(const Value& v, const std::vector<Value>& params) {
    const Node* node = v.node.get();
    switch (role_.at(node)) {
      case Role::kClosed:
        return v;
      case Role::kOutside:
        return params.at(outside_slot_.at(std::make_pair(node, v.index)));
      case Role::kCarried:
        break;
    }
    if (auto slot = slot_of_.find(node); slot != slot_of_.end()) return params.at(slot->second);
    // Operands before users, each node rebuilt once per region.
    std::unordered_map<const Node*, NodePtr>& rebuilt = rebuilt_;
    std::vector<std::pair<const Node*, std::size_t>> stack{{node, 0}};
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->operands().size()) {
        const Node* child = n->operand(next++).node.get();
        if (role_.at(child) == Role::kCarried && !slot_of_.count(child) && !rebuilt.count(child))
          stack.emplace_back(child, 0);
        continue;
      }
      const Node* done = n;
      stack.pop_back();
      if (rebuilt.count(done)) continue;
      std::vector<Value> operands;
      operands.reserve(done->operands().size());
      for (const Value& o : done->operands()) {
        const Node* child = o.node.get();
        if (role_.at(child) == Role::kCarried && !slot_of_.count(child)) operands.emplace_back(rebuilt.at(child), o.index);
        else operands.push_back(Rebuild(o, params));
      }
      rebuilt[done] = CloneWithOperands(*done, std::move(operands));
    }
    return Value(rebuilt.at(node), v.index);
  }

  const std::vector<Value>& init_;
  const TracedFunction& condition_;
  const TracedFunction& body_;
  const char* op_name_;
  std::unordered_map<const Node*, std::size_t> slot_of_;  // stand-in -> carried position
  std::unordered_map<const Node*, Role> role_;
  std::vector<Value> outside_;  // values from outside, carried after init_'s
  std::unordered_map<std::pair<const Node*, uint32_t>, std::size_t, ValueKeyHash> outside_slot_;
  std::unordered_set<const Node*> walked_;
  // The nodes rebuilt in the region being built.
  std::unordered_map<const Node*, NodePtr> rebuilt_;
};

}  // namespace

std::vector<Value> OptimizationBarrier(const std::vector<Value>& values) {
  if (values.empty()) return {};
  std::vector<Shape> shapes;
  for (const Value& v : values) shapes.push_back(v.shape());
  NodePtr node = MakeNode(kOptimizationBarrier, values, std::move(shapes));
  std::vector<Value> out;
  for (uint32_t i = 0; i < values.size(); ++i) out.emplace_back(node, i);
  return out;
}

NodePtr LoopPlaceholder(const Shape& shape) {
  Attrs attrs;
  attrs.ints.push_back(-1);  // not a block argument yet
  return MakeNode(RegionParameterOp(), std::vector<Value>{}, shape, std::move(attrs));
}

std::vector<Value> LoopFromTraces(const std::vector<Value>& init, const TracedFunction& condition,
                                  const TracedFunction& body, const char* op_name) {
  return LoopBuilder(init, condition, body, op_name).Build();
}

}  // namespace torch_xla::ir
