#include "ir/region.h"

#include <stdexcept>
#include <string>
#include <unordered_set>

namespace torch_xla::ir {
namespace {

Attrs WithRegionHashes(Attrs attrs, const std::vector<Region>& regions) {
  for (const Region& r : regions) attrs.ints.push_back(static_cast<int64_t>(r.Hash()));
  return attrs;
}

std::string ShapesToString(const std::vector<Shape>& shapes) {
  std::string s = "(";
  for (std::size_t i = 0; i < shapes.size(); ++i) s += (i ? ", " : "") + shapes[i].ToString();
  return s + ")";
}

// Throws when a node of the sub-graph is a graph input (see region.h).
void CheckClosed(const Region& region, const char* op_name) {
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> stack;
  for (const Value& v : region.results) stack.push_back(v.node.get());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->leaf_kind() != LeafKind::kNone)
      throw std::invalid_argument(std::string(op_name) + ": a region reads a graph input " + n->ToString() +
                                  "; pass it in as a carried value");
    for (const Value& v : n->operands()) stack.push_back(v.node.get());
  }
}

}  // namespace

OpKind RegionParameterOp() {
  static const OpKind kind = OpKind::Get("xla::region_parameter");
  return kind;
}

OpKind WhileOp() {
  static const OpKind kind = OpKind::Get("stablehlo.while");
  return kind;
}

hash_t Region::Hash() const {
  hash_t h = HashCombine(parameters.size(), results.size());
  for (const NodePtr& p : parameters) h = HashCombine(h, p->hash());
  for (const Value& v : results) h = HashCombine(h, v.hash());
  return h;
}

RegionNode::RegionNode(OpKind op, std::vector<Value> operands, std::vector<Shape> shapes, Attrs attrs,
                       std::vector<Region> regions)
    : Node(op, std::move(operands), std::move(shapes), WithRegionHashes(std::move(attrs), regions)),
      regions_(std::move(regions)) {}

NodePtr CloneWithOperands(const Node& node, std::vector<Value> operands) {
  // Nodes are not polymorphic: the op kinds with regions are made as RegionNodes only.
  if (node.op() == WhileOp()) {
    const auto* with_regions = static_cast<const RegionNode*>(&node);
    // The constructor appends the regions' hashes to the op's own attributes again.
    Attrs attrs = node.attrs();
    attrs.ints.resize(attrs.ints.size() - with_regions->regions().size());
    return std::make_shared<RegionNode>(node.op(), std::move(operands), node.shapes(), std::move(attrs),
                                        with_regions->regions());
  }
  return MakeNode(node.op(), std::move(operands), node.shapes(), node.attrs());
}

Region MakeRegion(const std::vector<Shape>& shapes, const RegionFn& fn, const char* op_name) {
  Region region;
  std::vector<Value> params;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    Attrs attrs;
    attrs.ints.push_back(static_cast<int64_t>(i));  // the block argument's position
    NodePtr p = MakeNode(RegionParameterOp(), std::vector<Value>{}, shapes[i], std::move(attrs));
    region.parameters.push_back(p);
    params.emplace_back(p);
  }
  region.results = fn(params);
  CheckClosed(region, op_name);
  return region;
}

std::vector<Value> While(const std::vector<Value>& init, const std::function<Value(const std::vector<Value>&)>& condition,
                         const RegionFn& body) {
  if (init.empty()) throw std::invalid_argument("while: no carried values");
  std::vector<Shape> shapes;
  for (const Value& v : init) shapes.push_back(v.shape());
  Region cond = MakeRegion(shapes, [&](const std::vector<Value>& p) { return std::vector<Value>{condition(p)}; },
                           "while (condition)");
  const Shape& pred = cond.results[0].shape();
  if (pred.type != ElementType::kPred || pred.rank() != 0)
    throw std::invalid_argument("while: the condition returns " + pred.ToString() + ", not pred[]");
  Region step = MakeRegion(shapes, body, "while (body)");
  std::vector<Shape> out;
  for (const Value& v : step.results) out.push_back(v.shape());
  if (out != shapes)
    throw std::invalid_argument("while: the body returns " + ShapesToString(out) + " for carried values " +
                                ShapesToString(shapes));
  std::vector<Region> regions;
  regions.push_back(std::move(cond));
  regions.push_back(std::move(step));
  NodePtr node = std::make_shared<RegionNode>(WhileOp(), init, shapes, Attrs{}, std::move(regions));
  std::vector<Value> results;
  for (uint32_t i = 0; i < shapes.size(); ++i) results.emplace_back(node, i);
  return results;
}

}  // namespace torch_xla::ir
