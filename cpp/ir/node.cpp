#include "ir/node.h"

#include "ir/debug_location.h"

namespace torch_xla::ir {
namespace {

hash_t HashShape(const Shape& shape) {
  hash_t h = static_cast<hash_t>(shape.type) + 1;
  for (int64_t d : shape.dims) h = HashCombine(h, static_cast<hash_t>(d));
  return HashCombine(h, shape.dims.size());
}

}  // namespace

OpKind DeviceDataOp() {
  static const OpKind kind = OpKind::Get("xla::device_data");
  return kind;
}

OpKind ScalarOp() {
  static const OpKind kind = OpKind::Get("xla::scalar");
  return kind;
}

hash_t Attrs::Hash() const {
  hash_t h = HashCombine(ints.size(), floats.size());
  for (int64_t v : ints) h = HashCombine(h, static_cast<hash_t>(v));
  for (double v : floats) h = HashCombine(h, HashDouble(v));
  return h;
}

Node::Node(OpKind op, std::vector<Value> operands, std::vector<Shape> shapes, Attrs attrs)
    : op_(op), operands_(std::move(operands)), shapes_(std::move(shapes)), attrs_(std::move(attrs)) {
  hash_t h = HashCombine(op_.id(), attrs_.Hash());
  for (const Shape& s : shapes_) h = HashCombine(h, HashShape(s));
  for (const Value& v : operands_) h = HashCombine(h, v.hash());
  hash_ = h;
  if (IrDebug()) location_ = std::make_shared<const std::string>(CurrentCaller());
}

const std::string& Node::location() const {
  static const std::string none;
  return location_ ? *location_ : none;
}

Node::Node(OpKind op, Shape shape, LeafKind kind) : op_(op), leaf_kind_(kind) {
  hash_ = HashCombine(op_.id(), HashShape(shape));
  shapes_.push_back(std::move(shape));
}

NodePtr Node::DeviceData(runtime::BufferPtr buffer) {
  Shape shape(buffer->type(), buffer->dims());
  NodePtr node(new Node(DeviceDataOp(), std::move(shape), LeafKind::kDeviceData));
  node->buffer_ = std::move(buffer);
  return node;
}

NodePtr Node::Scalar(double value, ElementType type) {
  NodePtr node(new Node(ScalarOp(), Shape(type, {}), LeafKind::kScalar));
  node->scalar_ = value;
  return node;
}

std::string Node::ToString() const {
  std::string s = op_.name() + "(";
  for (std::size_t i = 0; i < operands_.size(); ++i) {
    if (i) s += ", ";
    s += operands_[i].shape().ToString();
  }
  s += ") -> ";
  for (std::size_t i = 0; i < shapes_.size(); ++i) {
    if (i) s += ", ";
    s += shapes_[i].ToString();
  }
  return s;
}

}  // namespace torch_xla::ir
