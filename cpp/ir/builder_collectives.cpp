#include "ir/builder_collectives.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ir/attrs_reader.h"

namespace torch_xla::ir {

namespace op {
const OpKind kAllReduce = OpKind::Get("xla::all_reduce");
const OpKind kAllGather = OpKind::Get("xla::all_gather");
const OpKind kReduceScatter = OpKind::Get("xla::reduce_scatter");
const OpKind kAllToAll = OpKind::Get("xla::all_to_all");
const OpKind kCollectivePermute = OpKind::Get("xla::collective_permute");
const OpKind kCrossProcess = OpKind::Get("xla::cross_process");
}  // namespace op

namespace {

[[noreturn]] void Fail(const std::string& what) { throw std::invalid_argument(what); }

std::string GroupsToString(const ReplicaGroups& groups) {
  std::string s = "[";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    s += g ? ", " : "";
    s += DimsToString(groups[g]);
  }
  return s + "]";
}

void CheckDim(const char* op, const Value& v, int64_t dim, const char* name) {
  if (dim < 0 || dim >= v.shape().rank())
    Fail(std::string(op) + ": " + name + " " + std::to_string(dim) + " out of range for " + v.shape().ToString());
}

bool IsIntegral(ElementType type) { return !runtime::IsFloating(type) && !runtime::IsComplex(type); }

void CheckReduceType(const char* op, ReduceKind reduce, const Shape& shape) {
  if (runtime::IsComplex(shape.type)) Fail(std::string(op) + ": complex tensors are not supported, got " + shape.ToString());
  bool logical = reduce == ReduceKind::kAnd || reduce == ReduceKind::kOr;
  if (logical && !IsIntegral(shape.type))
    Fail(std::string(op) + ": the 'and' and 'or' reductions take integer or bool tensors, got " + shape.ToString());
  bool arithmetic = reduce == ReduceKind::kSum || reduce == ReduceKind::kProd;
  if (arithmetic && shape.type == ElementType::kPred)
    Fail(std::string(op) + ": bool tensors reduce with 'and', 'or', 'min' or 'max', not 'sum' or 'mul' (got " +
         shape.ToString() + ")");
}

NodePtr Collective(OpKind kind, std::vector<Value> operands, std::vector<Shape> shapes, const CollectiveAttrs& a) {
  return MakeNode(kind, std::move(operands), std::move(shapes), a.ToAttrs());
}

int64_t GroupSize(const ReplicaGroups& groups) { return static_cast<int64_t>(groups[0].size()); }

// CollectiveAttrs::ToAttrs's values, read from `r` to the end.
CollectiveAttrs ReadCollective(IntsReader& r) {
  CollectiveAttrs a;
  const int64_t reduce = r.Next();
  if (reduce < static_cast<int64_t>(ReduceKind::kSum) || reduce > static_cast<int64_t>(ReduceKind::kOr)) r.Malformed();
  a.reduce = static_cast<ReduceKind>(reduce);
  a.dim = r.Next();
  a.concat_dim = r.Next();
  a.num_replicas = r.Next();
  const int64_t count = r.Next(), size = r.Next();
  if (count < 0) r.Malformed();
  for (int64_t g = 0; g < count; ++g) a.groups.push_back(r.Take(size));
  r.Finish();
  return a;
}

}  // namespace

bool IsCollective(OpKind kind) {
  return kind == op::kAllReduce || kind == op::kAllGather || kind == op::kReduceScatter || kind == op::kAllToAll ||
         kind == op::kCollectivePermute;
}

ReplicaGroups NormalizeReplicaGroups(const ReplicaGroups& groups, int64_t num_replicas, const char* op) {
  if (num_replicas < 1) Fail(std::string(op) + ": the number of replicas must be positive");
  if (groups.empty()) {
    std::vector<int64_t> all(num_replicas);
    for (int64_t r = 0; r < num_replicas; ++r) all[r] = r;
    return {all};
  }
  std::vector<bool> seen(num_replicas, false);
  int64_t count = 0;
  for (const auto& group : groups) {
    if (group.empty() || group.size() != groups[0].size())
      Fail(std::string(op) + ": replica groups " + GroupsToString(groups) + " must all have the same, non-zero size");
    for (int64_t r : group) {
      if (r < 0 || r >= num_replicas)
        Fail(std::string(op) + ": replica groups " + GroupsToString(groups) + " name replica " + std::to_string(r) +
             ", but there are " + std::to_string(num_replicas) + " replicas (0 to " + std::to_string(num_replicas - 1) +
             ")");
      if (seen[r])
        Fail(std::string(op) + ": replica groups " + GroupsToString(groups) + " name replica " + std::to_string(r) +
             " twice");
      seen[r] = true;
      ++count;
    }
  }
  if (count != num_replicas)
    Fail(std::string(op) + ": replica groups " + GroupsToString(groups) + " must name each of the " +
         std::to_string(num_replicas) + " replicas once");
  return groups;
}

// attrs.ints: [reduce, dim, concat_dim, num_replicas, group count, group size, groups' members...]
Attrs CollectiveAttrs::ToAttrs() const {
  Attrs attrs;
  attrs.ints = {static_cast<int64_t>(reduce), dim, concat_dim, num_replicas, static_cast<int64_t>(groups.size()),
                groups.empty() ? 0 : static_cast<int64_t>(groups[0].size())};
  for (const auto& group : groups) attrs.ints.insert(attrs.ints.end(), group.begin(), group.end());
  return attrs;
}

CollectiveAttrs CollectiveAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "collective");
  return ReadCollective(r);
}

std::vector<Value> AllReduce(ReduceKind reduce, const std::vector<Value>& values, const ReplicaGroups& groups,
                             int64_t num_replicas) {
  if (values.empty()) Fail("all_reduce: no tensors to reduce");
  std::vector<Shape> shapes;
  for (const Value& v : values) {
    CheckReduceType("all_reduce", reduce, v.shape());
    if (v.shape().type != values[0].shape().type)
      Fail("all_reduce: one reduction takes tensors of one element type, got " + values[0].shape().ToString() +
           " and " + v.shape().ToString());
    shapes.push_back(v.shape());
  }
  CollectiveAttrs a;
  a.reduce = reduce;
  a.num_replicas = num_replicas;
  a.groups = NormalizeReplicaGroups(groups, num_replicas, "all_reduce");
  NodePtr node = Collective(op::kAllReduce, values, std::move(shapes), a);
  std::vector<Value> out;
  for (std::size_t i = 0; i < values.size(); ++i) out.emplace_back(node, static_cast<uint32_t>(i));
  return out;
}

Value AllGather(const Value& value, int64_t dim, const ReplicaGroups& groups, int64_t num_replicas) {
  CheckDim("all_gather", value, dim, "dimension");
  CollectiveAttrs a;
  a.dim = dim;
  a.num_replicas = num_replicas;
  a.groups = NormalizeReplicaGroups(groups, num_replicas, "all_gather");
  Shape shape = value.shape();
  shape.dims[dim] *= GroupSize(a.groups);
  return Value(Collective(op::kAllGather, {value}, {std::move(shape)}, a));
}

Value ReduceScatter(ReduceKind reduce, const Value& value, int64_t dim, const ReplicaGroups& groups,
                    int64_t num_replicas) {
  CheckReduceType("reduce_scatter", reduce, value.shape());
  CheckDim("reduce_scatter", value, dim, "scatter dimension");
  CollectiveAttrs a;
  a.reduce = reduce;
  a.dim = dim;
  a.num_replicas = num_replicas;
  a.groups = NormalizeReplicaGroups(groups, num_replicas, "reduce_scatter");
  int64_t shards = GroupSize(a.groups);
  Shape shape = value.shape();
  if (shape.dims[dim] % shards != 0)
    Fail("reduce_scatter: dimension " + std::to_string(dim) + " of " + shape.ToString() +
         " must be divisible by the " + std::to_string(shards) + " replicas of a group");
  shape.dims[dim] /= shards;
  return Value(Collective(op::kReduceScatter, {value}, {std::move(shape)}, a));
}

Value AllToAll(const Value& value, int64_t split_dim, int64_t concat_dim, int64_t split_count,
               const ReplicaGroups& groups, int64_t num_replicas) {
  CheckDim("all_to_all", value, split_dim, "split dimension");
  CheckDim("all_to_all", value, concat_dim, "concat dimension");
  CollectiveAttrs a;
  a.dim = split_dim;
  a.concat_dim = concat_dim;
  a.num_replicas = num_replicas;
  a.groups = NormalizeReplicaGroups(groups, num_replicas, "all_to_all");
  if (split_count != GroupSize(a.groups))
    Fail("all_to_all: split_count " + std::to_string(split_count) + " must equal the number of replicas in a group (" +
         std::to_string(GroupSize(a.groups)) + ")");
  Shape shape = value.shape();
  if (shape.dims[split_dim] % split_count != 0)
    Fail("all_to_all: split dimension " + std::to_string(split_dim) + " of " + shape.ToString() +
         " must be divisible by split_count " + std::to_string(split_count));
  shape.dims[split_dim] /= split_count;
  shape.dims[concat_dim] *= split_count;
  return Value(Collective(op::kAllToAll, {value}, {std::move(shape)}, a));
}

Value CollectivePermute(const Value& value, const std::vector<std::pair<int64_t, int64_t>>& pairs,
                        int64_t num_replicas) {
  if (num_replicas < 1) Fail("collective_permute: the number of replicas must be positive");
  std::vector<bool> source_seen(num_replicas, false), target_seen(num_replicas, false);
  CollectiveAttrs a;
  a.num_replicas = num_replicas;
  for (const auto& [source, target] : pairs) {
    for (int64_t r : {source, target}) {
      if (r < 0 || r >= num_replicas)
        Fail("collective_permute: pair (" + std::to_string(source) + ", " + std::to_string(target) +
             ") names replica " + std::to_string(r) + ", but there are " + std::to_string(num_replicas) +
             " replicas");
    }
    if (source_seen[source]) Fail("collective_permute: replica " + std::to_string(source) + " is the source of two pairs");
    if (target_seen[target]) Fail("collective_permute: replica " + std::to_string(target) + " is the target of two pairs");
    source_seen[source] = target_seen[target] = true;
    a.groups.push_back({source, target});
  }
  return Value(Collective(op::kCollectivePermute, {value}, {value.shape()}, a));
}

// attrs.ints: [what, local_replicas, the collective's attrs (CollectiveAttrs::ToAttrs)...]
Attrs CrossProcessAttrs::ToAttrs() const {
  Attrs attrs = collective.ToAttrs();
  attrs.ints.insert(attrs.ints.begin(), {static_cast<int64_t>(what), local_replicas});
  return attrs;
}

CrossProcessAttrs CrossProcessAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "cross-process collective");
  CrossProcessAttrs a;
  const int64_t what = r.Next();
  if (what < static_cast<int64_t>(CrossProcessKind::kAllReduceSum) ||
      what > static_cast<int64_t>(CrossProcessKind::kCollectivePermute))
    r.Malformed();
  a.what = static_cast<CrossProcessKind>(what);
  a.local_replicas = r.Next();
  a.collective = ReadCollective(r);
  return a;
}

Value CrossProcess(const CrossProcessAttrs& attrs, const Value& operand, Shape result) {
  if (attrs.local_replicas < 1 || attrs.collective.num_replicas % attrs.local_replicas != 0)
    Fail("cross-process collective: " + std::to_string(attrs.collective.num_replicas) +
         " replicas cannot be split into processes of " + std::to_string(attrs.local_replicas));
  return Value(MakeNode(op::kCrossProcess, std::vector<Value>{operand}, std::move(result), attrs.ToAttrs()));
}

}  // namespace torch_xla::ir
