#include "ops/pooling_util.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

namespace torch_xla::pooling_util {

using ir::CompareDirection;
using ir::ReduceKind;

std::vector<int64_t> LastN(const std::vector<int64_t>& dims, int64_t n) {
  return std::vector<int64_t>(dims.end() - n, dims.end());
}

std::vector<int64_t> WithLastN(std::vector<int64_t> dims, const std::vector<int64_t>& tail) {
  std::copy(tail.begin(), tail.end(), dims.end() - tail.size());
  return dims;
}

Value ToLastN(const Value& v, const std::vector<int64_t>& dims) {
  int64_t r = static_cast<int64_t>(dims.size()), n = v.shape().rank();
  std::vector<int64_t> bdims;
  for (int64_t a = 0; a < n; ++a) bdims.push_back(r - n + a);
  return ir::BroadcastInDim(v, dims, bdims);
}

void CheckPoolInput(const char* op, const at::Tensor& self, int64_t n) {
  TORCH_CHECK(self.dim() == n + 1 || self.dim() == n + 2, op, ": Expected ", n + 1, "D or ", n + 2,
              "D (batch mode) tensor with optional 0 dim batch size for input, but got ", DescribeTensor(self));
  for (int64_t i = self.dim() - n - 1; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, op, ": Expected input's non-batch dimensions to have positive length, but got ",
                DescribeTensor(self));
}

std::vector<int64_t> OutSizes(const PoolDims& g) {
  std::vector<int64_t> o;
  for (const PoolDim& d : g) o.push_back(d.out);
  return o;
}

PoolDims PoolGeometry(const char* op, const at::Tensor& self, int64_t n, at::IntArrayRef kernel_size,
                      at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
  CheckPoolInput(op, self, n);
  auto ok = [&](at::IntArrayRef v) { return v.size() == 1 || static_cast<int64_t>(v.size()) == n; };
  TORCH_CHECK(ok(kernel_size), op, ": kernel_size must either be a single int, or a tuple of ", CountWord(n),
              " ints, got ", SizesString(kernel_size));
  TORCH_CHECK(stride.empty() || ok(stride), op, ": stride must either be omitted, a single int, or a tuple of ",
              CountWord(n), " ints, got ", SizesString(stride));
  TORCH_CHECK(ok(padding), op, ": padding must either be a single int, or a tuple of ", CountWord(n), " ints, got ",
              SizesString(padding));
  TORCH_CHECK(ok(dilation), op, ": dilation must be either a single int, or a tuple of ", CountWord(n),
              " ints, got ", SizesString(dilation));
  PoolDims g(n);
  for (int64_t i = 0; i < n; ++i) {
    PoolDim& d = g[i];
    d.in = self.size(self.dim() - n + i);
    d.k = PickDim(kernel_size, i);
    d.s = stride.empty() ? d.k : PickDim(stride, i);
    d.p = PickDim(padding, i);
    d.d = PickDim(dilation, i);
    TORCH_CHECK(d.k > 0, op, ": kernel size should be greater than zero, but got kernel_size=",
                SizesString(kernel_size));
    TORCH_CHECK(d.s > 0, op, ": stride should be greater than zero, but got stride=", SizesString(stride));
    TORCH_CHECK(d.d > 0, op, ": dilation should be greater than zero, but got dilation=", SizesString(dilation));
    TORCH_CHECK(d.p >= 0 && d.p <= d.k / 2, op, ": pad should be at most half of effective kernel size, but got pad=",
                d.p, ", kernel_size=", d.k, " and dilation=", d.d);
    int64_t span = d.in + 2 * d.p - d.d * (d.k - 1) - 1 + (ceil_mode ? d.s - 1 : 0);
    // floor division (span may be negative)
    int64_t q = span >= 0 ? span / d.s : -((-span + d.s - 1) / d.s);
    d.out = q + 1;
    if (ceil_mode && (d.out - 1) * d.s >= d.in + d.p) --d.out;
  }
  bool positive = true;
  for (const PoolDim& d : g) positive = positive && d.out >= 1;
  TORCH_CHECK(positive, op, ": Given input size: ", DescribeTensor(self), ". Calculated output size: ",
              SizesString(OutSizes(g)), ". Output size is too small");
  return g;
}

std::vector<int64_t> KernelSizes(const PoolDims& g) {
  std::vector<int64_t> k;
  for (const PoolDim& d : g) k.push_back(d.k);
  return k;
}

Value PadForWindows(const Value& x, const PoolDims& g, double fill) {
  int64_t r = x.shape().rank(), n = static_cast<int64_t>(g.size());
  std::vector<int64_t> low(r, 0), high(r, 0), interior(r, 0);
  for (int64_t i = 0; i < n; ++i) {
    const PoolDim& d = g[i];
    low[r - n + i] = d.p;
    high[r - n + i] = std::max<int64_t>(0, (d.out - 1) * d.s + d.d * (d.k - 1) + 1 - d.in - d.p);
  }
  return ir::Pad(x, Full(fill, x.shape().type, {}), low, high, interior);
}

Value WindowSlice(const Value& padded, const PoolDims& g, const std::vector<int64_t>& off) {
  int64_t r = padded.shape().rank(), n = static_cast<int64_t>(g.size());
  std::vector<int64_t> start(r, 0), limit = padded.shape().dims, strides(r, 1);
  for (int64_t a = 0; a < n; ++a) {
    const PoolDim& d = g[a];
    start[r - n + a] = off[a] * d.d;
    limit[r - n + a] = off[a] * d.d + (d.out - 1) * d.s + 1;
    strides[r - n + a] = d.s;
  }
  return ir::Slice(padded, start, limit, strides);
}

Value ScatterWindows(const std::vector<Value>& contribs, const PoolDims& g, const std::vector<int64_t>& in_dims) {
  const Value& first = contribs.at(0);
  int64_t r = first.shape().rank(), n = static_cast<int64_t>(g.size()), lead = r - n;
  ElementType type = first.shape().type;
  std::vector<int64_t> q(n);
  std::vector<std::vector<int64_t>> residue_of(n), shift_of(n);
  for (int64_t a = 0; a < n; ++a) {
    const PoolDim& d = g[a];
    q[a] = (d.in + d.s - 1) / d.s;
    for (int64_t i = 0; i < d.k; ++i) {
      int64_t o = i * d.d - d.p;
      int64_t res = ((o % d.s) + d.s) % d.s;
      residue_of[a].push_back(res);
      shift_of[a].push_back((o - res) / d.s);
    }
  }
  std::vector<int64_t> kernel = KernelSizes(g);
  int64_t offsets = Product(kernel);
  std::vector<int64_t> phase_dims = WithLastN(in_dims, q);
  // each phase as [.., q1, 1, .., qn, 1]
  std::vector<int64_t> cell_dims(in_dims.begin(), in_dims.end() - n);
  for (int64_t a = 0; a < n; ++a) cell_dims.insert(cell_dims.end(), {q[a], 1});
  std::vector<int64_t> residue(n);
  // Builds the phases of dimensions a.. for the residues fixed before a, concatenated
  // along their stride axes: [.., q1, 1, .., qa, sa, .., qn, sn].
  std::function<Value(int64_t)> build = [&](int64_t a) -> Value {
    if (a == n) {
      Value phase;
      for (int64_t f = 0; f < offsets; ++f) {
        std::vector<int64_t> off = Unflatten(f, kernel);
        bool match = true;
        for (int64_t b = 0; b < n; ++b) match = match && residue_of[b][off[b]] == residue[b];
        if (!match) continue;
        std::vector<int64_t> low(r, 0), high(r, 0), interior(r, 0);
        for (int64_t b = 0; b < n; ++b) {
          low[lead + b] = shift_of[b][off[b]];
          high[lead + b] = q[b] - g[b].out - shift_of[b][off[b]];
        }
        Value placed = ir::Pad(contribs[f], Full(0, type, {}), low, high, interior);
        phase = phase ? Add(phase, placed) : placed;
      }
      if (!phase) phase = Full(0, type, phase_dims);
      return ir::Reshape(phase, cell_dims);
    }
    std::vector<Value> parts;
    for (int64_t res = 0; res < g[a].s; ++res) {
      residue[a] = res;
      parts.push_back(build(a + 1));
    }
    return parts.size() == 1 ? parts[0] : ir::Concatenate(parts, lead + 2 * a + 1);
  };
  Value grid = build(0);  // [.., q1, s1, .., qn, sn]
  std::vector<int64_t> flat = in_dims;
  for (int64_t a = 0; a < n; ++a) flat[lead + a] = q[a] * g[a].s;
  Value full = ir::Reshape(grid, flat);
  std::vector<int64_t> start(r, 0), strides(r, 1);
  return ir::Slice(full, start, in_dims, strides);
}

Value WindowStart(const PoolDim& d) {
  Value o = ir::Iota(ir::Shape(ElementType::kS64, {d.out}), 0);
  return Sub(Mul(o, S64(static_cast<double>(d.s), {d.out})), S64(static_cast<double>(d.p), {d.out}));
}

void CheckPoolGrad(const char* op, const at::Tensor& grad_output, const at::Tensor& self,
                   const std::vector<int64_t>& od, const at::Tensor* indices) {
  TORCH_CHECK(grad_output.sizes().vec() == od && (!indices || indices->sizes().vec() == od), op,
              ": expected grad_output", indices ? " and indices" : "", " of size ", SizesString(od), " for input ",
              DescribeTensor(self), ", got grad_output ", DescribeTensor(grad_output),
              indices ? " and indices " + DescribeTensor(*indices) : std::string());
  TORCH_CHECK(!indices || indices->scalar_type() == at::kLong, op, ": expected indices of dtype Long, got ",
              DescribeTensor(*indices));
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && at::isFloatingType(self.scalar_type()), op,
              ": expected floating point grad_output and input of the same dtype, got ", DescribeTensor(grad_output),
              " and ", DescribeTensor(self));
}

Value SelectSum(const Value& x, int64_t dim, const Value& mask) {
  const std::vector<int64_t>& dims = x.shape().dims;
  int64_t m = mask.shape().rank();
  int64_t out = mask.shape().dims[m - 2];
  std::vector<int64_t> wide, xdims;
  for (int64_t a = 0; a < x.shape().rank(); ++a) {
    if (a == dim) wide.push_back(out);
    xdims.push_back(static_cast<int64_t>(wide.size()));
    wide.push_back(dims[a]);
  }
  std::vector<int64_t> mdims;
  for (int64_t a = 0; a < m - 2; ++a) mdims.push_back(a);
  mdims.insert(mdims.end(), {dim, dim + 1});
  Value picked = ir::Select(ir::BroadcastInDim(mask, wide, mdims), ir::BroadcastInDim(x, wide, xdims),
                            Full(0, x.shape().type, wide));
  return ir::Reduce(ReduceKind::kSum, picked, {dim + 1});
}

Value ScatterToPlanes(ir::ScatterKind kind, const Value& values, const Value& indices,
                      const std::vector<int64_t>& in_dims, int64_t n) {
  const std::vector<int64_t>& vd = values.shape().dims;
  int64_t planes = Product(std::vector<int64_t>(vd.begin(), vd.end() - n));
  int64_t per_value_plane = Product(LastN(vd, n));
  int64_t plane = Product(LastN(in_dims, n));
  std::vector<int64_t> id = {planes, per_value_plane};
  Value v = ir::Reshape(values, id);
  Value idx = ir::Reshape(indices, {planes, per_value_plane, 1});
  Value which = ir::Reshape(ir::Iota(ir::Shape(ElementType::kS64, id), 0), {planes, per_value_plane, 1});
  Value coords = ir::Concatenate({which, idx}, 2);
  Value zeros = Full(0, values.shape().type, {planes, plane});
  Value out = ir::Scatter(kind, zeros, coords, v, {}, {0, 1}, {0, 1}, 2);
  return ir::Reshape(out, in_dims);
}

Value AtDim(const Value& v, const std::vector<int64_t>& od, int64_t dim) {
  int64_t vr = v.shape().rank();
  std::vector<int64_t> bdims;
  for (int64_t i = 0; i < vr - 1; ++i) bdims.push_back(i);
  bdims.push_back(dim);
  return ir::BroadcastInDim(v, od, bdims);
}

Value FlatIndexIn(const std::vector<Value>& pos, const std::vector<int64_t>& od,
                  const std::vector<int64_t>& in_sizes) {
  int64_t n = static_cast<int64_t>(pos.size()), r = static_cast<int64_t>(od.size());
  Value flat;
  for (int64_t a = 0; a < n; ++a) {
    Value p = AtDim(pos[a], od, r - n + a);
    flat = flat ? Add(Mul(flat, S64(static_cast<double>(in_sizes[a]), od)), p) : p;
  }
  return flat;
}

void ForEachTap(const Value& x, const std::vector<std::vector<WindowTap>>& windows,
                const std::function<void(const Value&, const std::vector<const WindowTap*>&)>& visit) {
  int64_t n = static_cast<int64_t>(windows.size()), r = x.shape().rank();
  std::vector<const WindowTap*> chosen(n);
  std::function<void(int64_t, const Value&)> walk = [&](int64_t a, const Value& partial) {
    if (a == n) return visit(partial, chosen);
    for (const WindowTap& t : windows[a]) {
      chosen[a] = &t;
      walk(a + 1, SelectSum(partial, r - n + a, t.mask));
    }
  };
  walk(0, x);
}

std::vector<int64_t> TapOutDims(const Value& x, const std::vector<std::vector<WindowTap>>& windows) {
  int64_t n = static_cast<int64_t>(windows.size()), r = x.shape().rank();
  std::vector<int64_t> od = x.shape().dims;
  for (int64_t a = 0; a < n; ++a) od[r - n + a] = windows[a][0].pos.shape().dims.back();
  return od;
}

Value TapsValid(const std::vector<const WindowTap*>& chosen, const std::vector<int64_t>& od) {
  int64_t n = static_cast<int64_t>(chosen.size()), r = static_cast<int64_t>(od.size());
  Value valid;
  for (int64_t b = 0; b < n; ++b) {
    Value ok = AtDim(chosen[b]->valid, od, r - n + b);
    valid = valid ? ir::Binary(ir::op::kAnd, valid, ok) : ok;
  }
  return valid;
}

std::pair<Value, Value> MaxOverTaps(const Value& x, const std::vector<std::vector<WindowTap>>& windows,
                                    const std::vector<Value>& first) {
  std::vector<int64_t> od = TapOutDims(x, windows);
  std::vector<int64_t> in_sizes = LastN(x.shape().dims, static_cast<int64_t>(windows.size()));
  Value best = Full(-std::numeric_limits<double>::infinity(), x.shape().type, od);
  Value best_index = FlatIndexIn(first, od, in_sizes);
  ForEachTap(x, windows, [&](const Value& v, const std::vector<const WindowTap*>& chosen) {
    std::vector<Value> pos;
    for (const WindowTap* t : chosen) pos.push_back(t->pos);
    Value take = ir::Binary(ir::op::kOr, Cmp(CompareDirection::kGt, v, best), Cmp(CompareDirection::kNe, v, v));
    take = ir::Binary(ir::op::kAnd, take, TapsValid(chosen, od));
    best = ir::Select(take, v, best);
    best_index = ir::Select(take, FlatIndexIn(pos, od, in_sizes), best_index);
  });
  return {best, best_index};
}

at::Tensor ScatterAddBackward(const char* op, const at::Tensor& grad_output, const at::Tensor& self, int64_t n,
                              const at::Tensor& indices) {
  CheckPoolInput(op, self, n);
  TORCH_CHECK(grad_output.dim() == self.dim() && grad_output.sizes() == indices.sizes(), op,
              ": expected grad_output and indices of the same size with the input's rank, got grad_output ",
              DescribeTensor(grad_output), ", indices ", DescribeTensor(indices), " for input ", DescribeTensor(self));
  for (int64_t i = 0; i < self.dim() - n; ++i)
    TORCH_CHECK(grad_output.size(i) == self.size(i), op, ": grad_output ", DescribeTensor(grad_output),
                " does not match input ", DescribeTensor(self), " outside the pooled dimensions");
  CheckPoolGrad(op, grad_output, self, grad_output.sizes().vec(), &indices);
  int device = CommonDevice({&grad_output, &self, &indices}, op);
  ElementType type = ElementTypeOf(self.scalar_type());
  ElementType acc = AccumulationType(type);
  Value dy = ir::Convert(GetXlaTensor(grad_output, op)->GetIrValue(), acc);
  Value idx = GetXlaTensor(indices, op)->GetIrValue();
  return AtenFromIr(Checked(op, [&] {
                      return ir::Convert(ScatterToPlanes(ir::ScatterKind::kAdd, dy, idx, self.sizes().vec(), n), type);
                    }),
                    device);
}

}  // namespace torch_xla::pooling_util
