#pragma once
// Nodes that hold sub-graphs (regions), and the loop built from them: stablehlo.while,
// whose trip count is computed on the device.
//
// A region is an IR sub-graph over its own parameter leaves (xla::region_parameter, one per
// block argument); its results are what the region returns. The lowering emits the
// sub-graph inside the operation's region (LoweringContext::LowerRegion). A region is
// closed: it reads its parameters and constants only, never a graph input (device data or
// a scalar parameter), because those are collected from the outer graph's operands and a
// region's nodes are not among them. Pass outer values into a loop as carried values.
#include <functional>
#include <vector>

#include "ir/node.h"

namespace torch_xla::ir {

struct Region {
  std::vector<NodePtr> parameters;  // xla::region_parameter leaves, in block-argument order
  std::vector<Value> results;
  hash_t Hash() const;
};

// A node with regions. Its structural hash covers the regions: their hashes are
// appended to the node's attrs.ints, after the op's own attributes.
class RegionNode : public Node {
 public:
  RegionNode(OpKind op, std::vector<Value> operands, std::vector<Shape> shapes, Attrs attrs,
             std::vector<Region> regions);
  const std::vector<Region>& regions() const { return regions_; }

 private:
  std::vector<Region> regions_;
};

// A node like `node` (op, shapes, attributes, regions) on other operands.
NodePtr CloneWithOperands(const Node& node, std::vector<Value> operands);

OpKind RegionParameterOp();
OpKind WhileOp();

using RegionFn = std::function<std::vector<Value>(const std::vector<Value>& parameters)>;

// A region with parameters of `shapes` whose results `fn` computes from them. Throws
// std::invalid_argument naming `op_name` when the sub-graph reads a graph input.
Region MakeRegion(const std::vector<Shape>& shapes, const RegionFn& fn, const char* op_name);

// stablehlo.while: carried = init; while (condition(carried)) carried = body(carried);
// returns the final carried values. `condition` returns one pred[] scalar; `body` returns
// values of the carried shapes and types.
std::vector<Value> While(const std::vector<Value>& init, const std::function<Value(const std::vector<Value>&)>& condition,
                         const RegionFn& body);

}  // namespace torch_xla::ir
