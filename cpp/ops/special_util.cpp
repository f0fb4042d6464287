#include "ops/special_util.h"

#include <ATen/ATen.h>

#include "ir/region.h"

namespace torch_xla::special_util {

const ir::OpKind kErfc = ir::OpKind::Get("chlo.erfc");

void CheckReal(const at::Tensor& t, const char* op) {
  TORCH_CHECK(!t.is_complex(), op, ": complex tensors are not supported, got ", DescribeTensor(t));
}

UnaryIn GetUnary(const at::Tensor& self, const char* op) {
  CheckReal(self, op);
  XlaTensorPtr t = GetXlaTensor(self, op);
  ElementType result = FloatResult(t->shape().type);
  return UnaryIn{ir::Convert(t->GetIrValue(), AccumulationType(result)), result, t->device()};
}

BinaryIn GetBinary(const at::Tensor& self, const at::Tensor& other, const char* op) {
  CheckReal(self, op);
  CheckReal(other, op);
  ElementType result = FloatResult(ElementTypeOf(at::result_type(self, other)));
  int device = CommonDevice({&self, &other}, op);
  std::vector<Value> v = BroadcastOperands({&self, &other}, AccumulationType(result), op);
  return BinaryIn{v[0], v[1], result, device};
}

Value Polevl(const Value& x, const std::vector<double>& c) {
  Value r = C(c[0], x);
  for (size_t i = 1; i < c.size(); ++i) r = Add(Mul(r, x), C(c[i], x));
  return r;
}

Value AnyTrue(const Value& v) {
  if (v.shape().rank() == 0) return v;
  std::vector<int64_t> dims(v.shape().rank());
  for (int64_t i = 0; i < v.shape().rank(); ++i) dims[i] = i;
  return ir::Reduce(ir::ReduceKind::kOr, v, dims);
}

std::vector<Value> ElementwiseLoop(const std::vector<Value>& inputs, const std::vector<Value>& state, const Value& done,
                                   int64_t max_steps, const LoopBody& body) {
  const std::size_t ni = inputs.size(), ns = state.size();
  std::vector<Value> init = {ir::Constant(0, ir::Shape(ElementType::kS64, {})), AnyTrue(Not(done)), done};
  init.insert(init.end(), inputs.begin(), inputs.end());
  init.insert(init.end(), state.begin(), state.end());
  std::vector<Value> out = ir::While(
      init, [](const std::vector<Value>& c) { return c[1]; },
      [&](const std::vector<Value>& c) {
        const Value &i = c[0], &finished = c[2];
        std::vector<Value> in(c.begin() + 3, c.begin() + 3 + ni), st(c.begin() + 3 + ni, c.end());
        LoopStep step = body(i, in, st);
        Value i1 = Add(i, C(1, i));
        Value out_of_steps = Cmp(CompareDirection::kGe, i1, IntLike(max_steps, i1));
        Value finished1 = Or(finished, Or(step.stop, ir::Broadcast(out_of_steps, finished.shape().dims)));
        std::vector<Value> next = {i1, AnyTrue(Not(finished1)), finished1};
        next.insert(next.end(), in.begin(), in.end());
        for (std::size_t k = 0; k < ns; ++k) next.push_back(Sel(finished, st[k], step.state[k]));
        return next;
      });
  return std::vector<Value>(out.begin() + 3 + ni, out.end());
}

}  // namespace torch_xla::special_util
