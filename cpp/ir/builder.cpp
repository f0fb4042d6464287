#include "ir/builder.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <stdexcept>

#include "ir/attrs_reader.h"

namespace torch_xla::ir {

namespace op {
const OpKind kAdd = OpKind::Get("stablehlo.add");
const OpKind kSubtract = OpKind::Get("stablehlo.subtract");
const OpKind kMultiply = OpKind::Get("stablehlo.multiply");
const OpKind kDivide = OpKind::Get("stablehlo.divide");
const OpKind kMaximum = OpKind::Get("stablehlo.maximum");
const OpKind kMinimum = OpKind::Get("stablehlo.minimum");
const OpKind kPower = OpKind::Get("stablehlo.power");
const OpKind kRemainder = OpKind::Get("stablehlo.remainder");
const OpKind kAnd = OpKind::Get("stablehlo.and");
const OpKind kOr = OpKind::Get("stablehlo.or");
const OpKind kXor = OpKind::Get("stablehlo.xor");
const OpKind kNot = OpKind::Get("stablehlo.not");
const OpKind kNegate = OpKind::Get("stablehlo.negate");
const OpKind kAbs = OpKind::Get("stablehlo.abs");
const OpKind kExp = OpKind::Get("stablehlo.exponential");
const OpKind kExpm1 = OpKind::Get("stablehlo.exponential_minus_one");
const OpKind kLog = OpKind::Get("stablehlo.log");
const OpKind kLog1p = OpKind::Get("stablehlo.log_plus_one");
const OpKind kSqrt = OpKind::Get("stablehlo.sqrt");
const OpKind kRsqrt = OpKind::Get("stablehlo.rsqrt");
const OpKind kTanh = OpKind::Get("stablehlo.tanh");
const OpKind kLogistic = OpKind::Get("stablehlo.logistic");
const OpKind kSin = OpKind::Get("stablehlo.sine");
const OpKind kCos = OpKind::Get("stablehlo.cosine");
const OpKind kTan = OpKind::Get("stablehlo.tan");
const OpKind kFloor = OpKind::Get("stablehlo.floor");
const OpKind kCeil = OpKind::Get("stablehlo.ceil");
const OpKind kSign = OpKind::Get("stablehlo.sign");
const OpKind kRoundEven = OpKind::Get("stablehlo.round_nearest_even");
const OpKind kAtan2 = OpKind::Get("stablehlo.atan2");
const OpKind kSelect = OpKind::Get("stablehlo.select");
const OpKind kClamp = OpKind::Get("stablehlo.clamp");
const OpKind kIsFinite = OpKind::Get("stablehlo.is_finite");
const OpKind kConvert = OpKind::Get("stablehlo.convert");
const OpKind kErf = OpKind::Get("chlo.erf");
const OpKind kShiftLeft = OpKind::Get("stablehlo.shift_left");
const OpKind kShiftRightArithmetic = OpKind::Get("stablehlo.shift_right_arithmetic");
const OpKind kShiftRightLogical = OpKind::Get("stablehlo.shift_right_logical");
const OpKind kNanMaximum = OpKind::Get("xla::nan_maximum");
const OpKind kNanMinimum = OpKind::Get("xla::nan_minimum");
}  // namespace op

namespace {

const OpKind kConstant = OpKind::Get("xla::constant");
const OpKind kBroadcastInDim = OpKind::Get("stablehlo.broadcast_in_dim");
const OpKind kReshape = OpKind::Get("stablehlo.reshape");
const OpKind kTranspose = OpKind::Get("stablehlo.transpose");
const OpKind kSlice = OpKind::Get("stablehlo.slice");
const OpKind kConcatenate = OpKind::Get("stablehlo.concatenate");
const OpKind kPad = OpKind::Get("stablehlo.pad");
const OpKind kReverse = OpKind::Get("stablehlo.reverse");
const OpKind kIota = OpKind::Get("stablehlo.iota");
const OpKind kCompare = OpKind::Get("stablehlo.compare");
const OpKind kReduce = OpKind::Get("xla::reduce");
const OpKind kDotGeneral = OpKind::Get("stablehlo.dot_general");

[[noreturn]] void Fail(const std::string& what) { throw std::invalid_argument(what); }

void CheckSameShape(const char* op, const Value& a, const Value& b) {
  if (a.shape() != b.shape())
    Fail(std::string(op) + ": operand shapes differ: " + a.shape().ToString() + " vs " + b.shape().ToString());
}

void CheckDim(const char* op, int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank)
    Fail(std::string(op) + ": dimension " + std::to_string(dim) + " out of range for rank " + std::to_string(rank));
}

// A zero padding of `v`: pad(src, 0) with no interior padding. Fills `src`, `low`, `high`.
bool IsZeroPadding(const Value& v, Value* src, std::vector<int64_t>* low, std::vector<int64_t>* high) {
  if (v.node->op() != kPad || !IsZeroConstant(v.node->operand(1))) return false;
  PadAttrs p = PadAttrs::FromAttrs(v.node->attrs());
  for (int64_t i : p.interior)
    if (i != 0) return false;
  *src = v.node->operand(0);
  *low = std::move(p.low);
  *high = std::move(p.high);
  return true;
}

// add(pad(a, 0), pad(b, 0)) where a and b fill adjacent ranges of one dimension (and the
// same positions in every other): pad(concatenate(a, b), 0). The backward of a tensor
// taken apart with select, unbind or chunk sums one zero-padded gradient per piece;
// XLA evaluates every padded operand at every position (selecting on masks built from
// the padding), while the concatenation reads each element once. Returns nullopt when
// the operands are not of that form.
std::optional<Value> AddAdjacentZeroPaddings(const Value& a, const Value& b) {
  Value src_a, src_b;
  std::vector<int64_t> low_a, high_a, low_b, high_b;
  if (!IsZeroPadding(a, &src_a, &low_a, &high_a) || !IsZeroPadding(b, &src_b, &low_b, &high_b)) return std::nullopt;
  int64_t dim = -1;
  for (std::size_t i = 0; i < low_a.size(); ++i) {
    if (low_a[i] == low_b[i] && high_a[i] == high_b[i]) continue;
    if (dim >= 0) return std::nullopt;
    dim = static_cast<int64_t>(i);
  }
  if (dim < 0) return std::nullopt;
  const int64_t end_a = low_a[dim] + src_a.shape().dims[dim], end_b = low_b[dim] + src_b.shape().dims[dim];
  std::vector<int64_t> low = low_a, high = high_a;
  Value joined;
  if (end_a == low_b[dim]) {
    joined = Concatenate({src_a, src_b}, dim);
    high[dim] = high_b[dim];
  } else if (end_b == low_a[dim]) {
    joined = Concatenate({src_b, src_a}, dim);
    low[dim] = low_b[dim];
  } else {
    return std::nullopt;
  }
  return Pad(joined, a.node->operand(1), low, high, std::vector<int64_t>(low.size(), 0));
}

}  // namespace

bool IsZeroConstant(const Value& v) {
  return v.node->op() == kConstant && v.node->attrs().floats.size() == 1 && v.node->attrs().floats[0] == 0;
}

std::vector<int64_t> BroadcastDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                   const char* op_name) {
  std::size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      Fail(std::string(op_name) + ": shapes " + DimsToString(a) + " and " + DimsToString(b) +
           " cannot be broadcast together (dimension " + std::to_string(i) + ": " + std::to_string(da) +
           " vs " + std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Value Constant(double value, Shape shape) {
  Attrs attrs;
  attrs.floats.push_back(value);
  return Value(MakeNode(kConstant, std::vector<Value>{}, std::move(shape), std::move(attrs)));
}

Value ScalarParameter(double value, ElementType type) { return Value(Node::Scalar(value, type)); }

Value Convert(const Value& v, ElementType type) {
  if (v.shape().type == type) return v;
  return Value(MakeNode(op::kConvert, std::vector<Value>{v}, Shape(type, v.shape().dims)));
}

Value Broadcast(const Value& v, const std::vector<int64_t>& dims) {
  const auto& in = v.shape().dims;
  if (in == dims) return v;
  if (in.size() > dims.size())
    Fail("broadcast: cannot broadcast " + v.shape().ToString() + " to " + DimsToString(dims));
  std::size_t offset = dims.size() - in.size();
  std::vector<int64_t> bdims(in.size());
  bool needs_reshape = false;
  std::vector<int64_t> kept_dims, kept_bdims;
  for (std::size_t i = 0; i < in.size(); ++i) {
    bdims[i] = static_cast<int64_t>(i + offset);
    if (in[i] != dims[i + offset]) {
      if (in[i] != 1) Fail("broadcast: cannot broadcast " + v.shape().ToString() + " to " + DimsToString(dims));
      needs_reshape = true;  // size-1 dims that expand are dropped, then broadcast
    } else {
      kept_dims.push_back(in[i]);
      kept_bdims.push_back(bdims[i]);
    }
  }
  if (!needs_reshape) return BroadcastInDim(v, dims, bdims);
  return BroadcastInDim(Reshape(v, kept_dims), dims, kept_bdims);
}

Value BroadcastInDim(const Value& v, const std::vector<int64_t>& dims, const std::vector<int64_t>& broadcast_dims) {
  if (broadcast_dims.size() != v.shape().dims.size())
    Fail("broadcast_in_dim: " + v.shape().ToString() + " with broadcast dimensions " + DimsToString(broadcast_dims));
  for (std::size_t i = 0; i < broadcast_dims.size(); ++i) {
    int64_t d = broadcast_dims[i];
    int64_t size = v.shape().dims[i];
    if (d < 0 || d >= static_cast<int64_t>(dims.size()) || (size != 1 && size != dims[d]))
      Fail("broadcast_in_dim: cannot broadcast " + v.shape().ToString() + " to " + DimsToString(dims) +
           " with broadcast dimensions " + DimsToString(broadcast_dims));
  }
  return Value(MakeNode(kBroadcastInDim, std::vector<Value>{v}, Shape(v.shape().type, dims),
                        BroadcastInDimAttrs{broadcast_dims}.ToAttrs()));
}

Value Reshape(const Value& v, std::vector<int64_t> dims) {
  if (v.shape().dims == dims) return v;
  Shape out(v.shape().type, std::move(dims));
  if (out.numel() != v.shape().numel())
    Fail("reshape: shape " + DimsToString(out.dims) + " is invalid for input of size " +
         std::to_string(v.shape().numel()) + " (" + v.shape().ToString() + ")");
  // A reshape of a reshape is one reshape of the first one's input (row-major order is
  // kept through both), and none where that input already has the shape: a view that
  // flattens dimensions and its inverse leave no op behind (which XLA's SPMD partitioner
  // needs to keep a sharded minor dimension sharded).
  if (v.node->op() == kReshape) return Reshape(v.node->operand(0), std::move(out.dims));
  return Value(MakeNode(kReshape, std::vector<Value>{v}, std::move(out)));
}

Value Transpose(const Value& v, const std::vector<int64_t>& permutation) {
  const auto& in = v.shape().dims;
  if (permutation.size() != in.size())
    Fail("transpose: permutation " + DimsToString(permutation) + " for " + v.shape().ToString());
  std::vector<int64_t> dims(in.size());
  bool identity = true;
  for (std::size_t i = 0; i < permutation.size(); ++i) {
    CheckDim("transpose", permutation[i], static_cast<int64_t>(in.size()));
    dims[i] = in[permutation[i]];
    identity &= permutation[i] == static_cast<int64_t>(i);
  }
  if (identity) return v;
  return Value(MakeNode(kTranspose, std::vector<Value>{v}, Shape(v.shape().type, dims),
                        TransposeAttrs{permutation}.ToAttrs()));
}

Value Slice(const Value& v, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& strides) {
  const auto& in = v.shape().dims;
  std::size_t rank = in.size();
  if (start.size() != rank || limit.size() != rank || strides.size() != rank)
    Fail("slice: index lists do not match " + v.shape().ToString());
  std::vector<int64_t> dims(rank);
  bool identity = true;
  for (std::size_t i = 0; i < rank; ++i) {
    if (start[i] < 0 || limit[i] > in[i] || start[i] > limit[i] || strides[i] < 1)
      Fail("slice: bad range [" + std::to_string(start[i]) + ", " + std::to_string(limit[i]) + ") step " +
           std::to_string(strides[i]) + " on dimension " + std::to_string(i) + " of " + v.shape().ToString());
    dims[i] = (limit[i] - start[i] + strides[i] - 1) / strides[i];
    identity &= dims[i] == in[i] && strides[i] == 1;
  }
  if (identity) return v;
  return Value(MakeNode(kSlice, std::vector<Value>{v}, Shape(v.shape().type, dims),
                        SliceAttrs{start, limit, strides}.ToAttrs()));
}

Value Concatenate(const std::vector<Value>& values, int64_t dim) {
  if (values.empty()) Fail("concatenate: no operands");
  if (values.size() == 1) return values[0];
  const Shape& first = values[0].shape();
  CheckDim("concatenate", dim, first.rank());
  std::vector<int64_t> dims = first.dims;
  dims[dim] = 0;
  for (const Value& v : values) {
    const Shape& s = v.shape();
    bool ok = s.type == first.type && s.rank() == first.rank();
    for (int64_t i = 0; ok && i < s.rank(); ++i) ok = i == dim || s.dims[i] == first.dims[i];
    if (!ok) Fail("concatenate: " + s.ToString() + " does not match " + first.ToString() + " outside dimension " +
                  std::to_string(dim));
    dims[dim] += s.dims[dim];
  }
  return Value(MakeNode(kConcatenate, values, Shape(first.type, dims), ConcatenateAttrs{dim}.ToAttrs()));
}

Value Pad(const Value& v, const Value& pad_value, const std::vector<int64_t>& low, const std::vector<int64_t>& high,
          const std::vector<int64_t>& interior) {
  const auto& in = v.shape().dims;
  if (low.size() != in.size() || high.size() != in.size() || interior.size() != in.size())
    Fail("pad: " + v.shape().ToString() + " with padding low " + DimsToString(low) + ", high " + DimsToString(high) +
         ", interior " + DimsToString(interior) + " (one entry per dimension expected)");
  std::vector<int64_t> dims(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (interior[i] < 0) Fail("pad: negative interior padding for " + v.shape().ToString());
    dims[i] = low[i] + high[i] + in[i] + (in[i] > 0 ? (in[i] - 1) * interior[i] : 0);
    if (dims[i] < 0) Fail("pad: negative output size for " + v.shape().ToString());
  }
  auto zero = [](const std::vector<int64_t>& p) { return std::all_of(p.begin(), p.end(), [](int64_t x) { return x == 0; }); };
  if (zero(low) && zero(high) && zero(interior)) return v;
  return Value(MakeNode(kPad, std::vector<Value>{v, Convert(pad_value, v.shape().type)},
                        Shape(v.shape().type, dims), PadAttrs{low, high, interior}.ToAttrs()));
}

Value Reverse(const Value& v, const std::vector<int64_t>& dims) {
  if (dims.empty()) return v;
  for (int64_t d : dims) CheckDim("reverse", d, v.shape().rank());
  return Value(MakeNode(kReverse, std::vector<Value>{v}, v.shape(), ReverseAttrs{dims}.ToAttrs()));
}

Value Iota(Shape shape, int64_t dim) {
  CheckDim("iota", dim, shape.rank());
  return Value(MakeNode(kIota, std::vector<Value>{}, std::move(shape), IotaAttrs{dim}.ToAttrs()));
}

Value Unary(OpKind kind, const Value& v) {
  Shape shape = v.shape();
  // The absolute value of a complex number is real (StableHLO's abs says so too).
  if (kind == op::kAbs && runtime::IsComplex(shape.type))
    shape.type = shape.type == ElementType::kC64 ? ElementType::kF32 : ElementType::kF64;
  return Value(MakeNode(kind, std::vector<Value>{v}, std::move(shape)));
}

Value Binary(OpKind kind, const Value& a, const Value& b) {
  CheckSameShape(kind.name().c_str(), a, b);
  if (kind == op::kAdd) {
    if (std::optional<Value> joined = AddAdjacentZeroPaddings(a, b)) return *joined;
  }
  return Value(MakeNode(kind, std::vector<Value>{a, b}, a.shape()));
}

Value Complex(const Value& real, const Value& imag) {
  CheckSameShape("complex", real, imag);
  ElementType type = real.shape().type;
  if (type != ElementType::kF32 && type != ElementType::kF64)
    Fail("complex: the parts must be f32 or f64, got " + real.shape().ToString());
  static const OpKind kComplex = OpKind::Get("stablehlo.complex");
  return Value(MakeNode(kComplex, std::vector<Value>{real, imag},
                        Shape(type == ElementType::kF32 ? ElementType::kC64 : ElementType::kC128, real.shape().dims)));
}

Value Compare(CompareDirection direction, const Value& a, const Value& b) {
  CheckSameShape("compare", a, b);
  return Value(MakeNode(kCompare, std::vector<Value>{a, b}, Shape(ElementType::kPred, a.shape().dims),
                        CompareAttrs{direction}.ToAttrs()));
}

Value Select(const Value& pred, const Value& on_true, const Value& on_false) {
  CheckSameShape("select", on_true, on_false);
  if (pred.shape().type != ElementType::kPred || pred.shape().dims != on_true.shape().dims)
    Fail("select: predicate " + pred.shape().ToString() + " for values " + on_true.shape().ToString());
  return Value(MakeNode(op::kSelect, std::vector<Value>{pred, on_true, on_false}, on_true.shape()));
}

Value Reduce(ReduceKind kind, const Value& v, const std::vector<int64_t>& dims) {
  const Shape& in = v.shape();
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t d : dims) {
    CheckDim("reduce", d, in.rank());
    reduced[d] = true;
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < in.rank(); ++i)
    if (!reduced[i]) out.push_back(in.dims[i]);
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (sorted.empty()) return v;
  return Value(MakeNode(kReduce, std::vector<Value>{v}, Shape(in.type, out), ReduceAttrs{kind, sorted}.ToAttrs()));
}

Value DotGeneral(const Value& a, const Value& b, const std::vector<int64_t>& lhs_batch,
                 const std::vector<int64_t>& rhs_batch, const std::vector<int64_t>& lhs_contract,
                 const std::vector<int64_t>& rhs_contract, ElementType type) {
  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  auto fail = [&]() {
    Fail("dot_general: incompatible shapes " + sa.ToString() + " and " + sb.ToString());
  };
  if (lhs_batch.size() != rhs_batch.size() || lhs_contract.size() != rhs_contract.size()) fail();
  std::vector<bool> used_a(sa.rank(), false), used_b(sb.rank(), false);
  std::vector<int64_t> dims;
  for (std::size_t i = 0; i < lhs_batch.size(); ++i) {
    if (sa.dims.at(lhs_batch[i]) != sb.dims.at(rhs_batch[i])) fail();
    used_a[lhs_batch[i]] = used_b[rhs_batch[i]] = true;
    dims.push_back(sa.dims[lhs_batch[i]]);
  }
  for (std::size_t i = 0; i < lhs_contract.size(); ++i) {
    if (sa.dims.at(lhs_contract[i]) != sb.dims.at(rhs_contract[i])) fail();
    used_a[lhs_contract[i]] = used_b[rhs_contract[i]] = true;
  }
  for (int64_t i = 0; i < sa.rank(); ++i)
    if (!used_a[i]) dims.push_back(sa.dims[i]);
  for (int64_t i = 0; i < sb.rank(); ++i)
    if (!used_b[i]) dims.push_back(sb.dims[i]);
  return Value(MakeNode(kDotGeneral, std::vector<Value>{a, b}, Shape(type, dims),
                        DotGeneralAttrs{lhs_batch, rhs_batch, lhs_contract, rhs_contract}.ToAttrs()));
}

// ---- node attributes --------------------------------------------------------------------

namespace {

// The lists' values one after another; throws naming `op` unless they have one size.
Attrs EqualLists(const char* op, std::initializer_list<const std::vector<int64_t>*> lists) {
  Attrs attrs;
  attrs.ints.reserve(lists.size() * (*lists.begin())->size());
  for (const std::vector<int64_t>* list : lists) {
    if (list->size() != (*lists.begin())->size())
      Fail(std::string(op) + ": attribute lists of different lengths");
    AppendInts(attrs.ints, *list);
  }
  return attrs;
}

// `count` lists of one length that fill the attrs.
std::vector<std::vector<int64_t>> ReadEqualLists(const Attrs& attrs, const char* op, std::size_t count) {
  IntsReader r(attrs, op);
  if (r.left() % count != 0) r.Malformed();
  const int64_t n = static_cast<int64_t>(r.left() / count);
  std::vector<std::vector<int64_t>> lists;
  for (std::size_t i = 0; i < count; ++i) lists.push_back(r.Take(n));
  return lists;
}

// One list that is all of the attrs.
Attrs OneList(const std::vector<int64_t>& list) {
  Attrs attrs;
  attrs.ints = list;
  return attrs;
}

std::vector<int64_t> ReadOneList(const Attrs& attrs, const char* op) { return IntsReader(attrs, op).TakeRest(); }

// One integer that is all of the attrs.
Attrs OneInt(int64_t value) {
  Attrs attrs;
  attrs.ints = {value};
  return attrs;
}

int64_t ReadOneInt(const Attrs& attrs, const char* op) {
  IntsReader r(attrs, op);
  const int64_t value = r.Next();
  r.Finish();
  return value;
}

}  // namespace

Attrs BroadcastInDimAttrs::ToAttrs() const { return OneList(broadcast_dims); }
BroadcastInDimAttrs BroadcastInDimAttrs::FromAttrs(const Attrs& attrs) {
  return {ReadOneList(attrs, "broadcast_in_dim")};
}

Attrs TransposeAttrs::ToAttrs() const { return OneList(permutation); }
TransposeAttrs TransposeAttrs::FromAttrs(const Attrs& attrs) { return {ReadOneList(attrs, "transpose")}; }

Attrs SliceAttrs::ToAttrs() const { return EqualLists("slice", {&start, &limit, &strides}); }
SliceAttrs SliceAttrs::FromAttrs(const Attrs& attrs) {
  std::vector<std::vector<int64_t>> lists = ReadEqualLists(attrs, "slice", 3);
  return {std::move(lists[0]), std::move(lists[1]), std::move(lists[2])};
}

Attrs ConcatenateAttrs::ToAttrs() const { return OneInt(dim); }
ConcatenateAttrs ConcatenateAttrs::FromAttrs(const Attrs& attrs) { return {ReadOneInt(attrs, "concatenate")}; }

Attrs PadAttrs::ToAttrs() const { return EqualLists("pad", {&low, &high, &interior}); }
PadAttrs PadAttrs::FromAttrs(const Attrs& attrs) {
  std::vector<std::vector<int64_t>> lists = ReadEqualLists(attrs, "pad", 3);
  return {std::move(lists[0]), std::move(lists[1]), std::move(lists[2])};
}

Attrs ReverseAttrs::ToAttrs() const { return OneList(dims); }
ReverseAttrs ReverseAttrs::FromAttrs(const Attrs& attrs) { return {ReadOneList(attrs, "reverse")}; }

Attrs IotaAttrs::ToAttrs() const { return OneInt(dim); }
IotaAttrs IotaAttrs::FromAttrs(const Attrs& attrs) { return {ReadOneInt(attrs, "iota")}; }

Attrs CompareAttrs::ToAttrs() const { return OneInt(static_cast<int64_t>(direction)); }
CompareAttrs CompareAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "compare");
  const int64_t direction = r.Next();
  r.Finish();
  if (direction < static_cast<int64_t>(CompareDirection::kEq) ||
      direction > static_cast<int64_t>(CompareDirection::kLt))
    r.Malformed();
  return {static_cast<CompareDirection>(direction)};
}

// [kind, dims...]
Attrs ReduceAttrs::ToAttrs() const {
  Attrs attrs;
  attrs.ints.push_back(static_cast<int64_t>(kind));
  AppendInts(attrs.ints, dims);
  return attrs;
}
ReduceAttrs ReduceAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "reduce");
  const int64_t kind = r.Next();
  if (kind < static_cast<int64_t>(ReduceKind::kSum) || kind > static_cast<int64_t>(ReduceKind::kOr)) r.Malformed();
  return {static_cast<ReduceKind>(kind), r.TakeRest()};
}

// [nb, lhs_batch (nb), rhs_batch (nb), nc, lhs_contract (nc), rhs_contract (nc)]
Attrs DotGeneralAttrs::ToAttrs() const {
  if (lhs_batch.size() != rhs_batch.size() || lhs_contract.size() != rhs_contract.size())
    Fail("dot_general: batch or contracting dimension lists of different lengths");
  Attrs attrs;
  AppendCountedInts(attrs.ints, lhs_batch);
  AppendInts(attrs.ints, rhs_batch);
  AppendCountedInts(attrs.ints, lhs_contract);
  AppendInts(attrs.ints, rhs_contract);
  return attrs;
}
DotGeneralAttrs DotGeneralAttrs::FromAttrs(const Attrs& attrs) {
  IntsReader r(attrs, "dot_general");
  DotGeneralAttrs a;
  a.lhs_batch = r.TakeCounted();
  a.rhs_batch = r.Take(static_cast<int64_t>(a.lhs_batch.size()));
  a.lhs_contract = r.TakeCounted();
  a.rhs_contract = r.Take(static_cast<int64_t>(a.lhs_contract.size()));
  r.Finish();
  return a;
}

}  // namespace torch_xla::ir
