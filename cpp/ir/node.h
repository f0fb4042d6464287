#pragma once
// IR nodes. A node is an operation with operands, attributes and output shapes; its
// structural hash is computed once, at creation, from the op, the attributes, the
// output shapes and the operands' hashes, so hashing a whole graph costs nothing more.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "ir/hash.h"
#include "ir/op_kind.h"
#include "ir/shape.h"
#include "runtime/client.h"

namespace torch_xla::ir {

class Node;
using NodePtr = std::shared_ptr<Node>;

// One output of a node.
struct Value {
  NodePtr node;
  uint32_t index = 0;

  Value() = default;
  Value(NodePtr n, uint32_t i = 0) : node(std::move(n)), index(i) {}
  explicit operator bool() const { return node != nullptr; }
  const Shape& shape() const;
  hash_t hash() const;
};

// Integer and floating attributes of a node, in the op's own layout. An op with several
// attributes has a struct that names them and writes and reads this layout (ToAttrs /
// FromAttrs beside its constructor, e.g. ir::SliceAttrs in ir/builder.h).
struct Attrs {
  std::vector<int64_t> ints;
  std::vector<double> floats;
  hash_t Hash() const;
};

// What a leaf node stands for: a device buffer, or a host scalar that becomes a
// parameter of the compiled graph (so changing it does not recompile).
enum class LeafKind : unsigned char { kNone, kDeviceData, kScalar };

class Node {
 public:
  Node(OpKind op, std::vector<Value> operands, std::vector<Shape> shapes, Attrs attrs = {});
  // A single-output node. (A braced list would copy the shape out of its initializer_list.)
  Node(OpKind op, std::vector<Value> operands, Shape shape, Attrs attrs = {})
      : Node(op, std::move(operands), SingleShape(std::move(shape)), std::move(attrs)) {}

  // A parameter leaf holding a device buffer. Its hash covers the shape only.
  static NodePtr DeviceData(runtime::BufferPtr buffer);
  // A parameter leaf holding a host scalar of the given element type.
  static NodePtr Scalar(double value, ElementType type);

  OpKind op() const { return op_; }
  const std::vector<Value>& operands() const { return operands_; }
  const Value& operand(std::size_t i) const { return operands_[i]; }
  const std::vector<Shape>& shapes() const { return shapes_; }
  const Shape& shape(std::size_t i = 0) const { return shapes_[i]; }
  std::size_t num_outputs() const { return shapes_.size(); }
  const Attrs& attrs() const { return attrs_; }
  hash_t hash() const { return hash_; }

  LeafKind leaf_kind() const { return leaf_kind_; }
  const runtime::BufferPtr& buffer() const { return buffer_; }
  double scalar_value() const { return scalar_; }

  // "aten::add(f32[2,3], f32[2,3]) -> f32[2,3]", for error messages and debug dumps.
  std::string ToString() const;
  // Where the user's program made the node (ir/debug_location.h), or "" when IR debugging
  // is off.
  const std::string& location() const;

  // Graph walks mark the nodes they reach with their own walk number instead of keeping
  // a set of visited nodes (a step's graph has thousands; the set allocated per node).
  // Returns whether the node was not yet marked with `walk`. Walks that mark must not
  // run concurrently (exec::BuildGraph holds a lock).
  bool MarkVisited(uint64_t walk) const {
    if (visited_by_walk_ == walk) return false;
    visited_by_walk_ = walk;
    return true;
  }

 private:
  Node(OpKind op, Shape shape, LeafKind kind);
  static std::vector<Shape> SingleShape(Shape shape) {
    std::vector<Shape> shapes;
    shapes.reserve(1);
    shapes.push_back(std::move(shape));
    return shapes;
  }

  OpKind op_;
  std::vector<Value> operands_;
  std::vector<Shape> shapes_;
  Attrs attrs_;
  hash_t hash_ = 0;
  LeafKind leaf_kind_ = LeafKind::kNone;
  runtime::BufferPtr buffer_;
  double scalar_ = 0;
  mutable uint64_t visited_by_walk_ = 0;
  std::shared_ptr<const std::string> location_;  // only with IR debugging
};

inline const Shape& Value::shape() const { return node->shape(index); }
inline hash_t Value::hash() const { return HashCombine(node->hash(), index); }

// Op kinds the executor and lowering treat specially.
OpKind DeviceDataOp();
OpKind ScalarOp();

template <typename... Args>
NodePtr MakeNode(Args&&... args) {
  return std::make_shared<Node>(std::forward<Args>(args)...);
}

}  // namespace torch_xla::ir
