"""The in-place ops of a training step get their shape and dtype checks from PyTorch's C++
meta functions (cpp/aten/inplace_meta.cpp) instead of its Python ones. The results, and
the errors of in-place ops that would have to resize `self` or change its dtype, must stay
those of eager PyTorch, on the device and on meta tensors alike."""

import pytest
import torch

from testing.op_testing import DEV, assert_same, ids, make

OPS = ['add_.Tensor', 'add_.Scalar', 'sub_.Tensor', 'sub_.Scalar', 'mul_.Tensor', 'mul_.Scalar',
       'div_.Tensor', 'div_.Scalar', 'addcmul_', 'addcdiv_', 'lerp_.Scalar', 'lerp_.Tensor',
       'sqrt_', 'zero_', 'fill_.Scalar', 'clamp_']


@pytest.mark.parametrize('op', OPS)
def test_meta_kernel_is_the_cpp_one(op):
  dump = torch._C._dispatch_dump('aten::' + op)
  active = [l for l in dump.splitlines() if l.startswith('Meta:')]
  assert len(active) == 1 and 'inplace_meta.cpp' in active[0], active


# (name, in-place call on self, other operands...). Operands broadcast into self.
VALID = [
    ('add', lambda s, o: s.add_(o, alpha=2)),
    ('add_scalar', lambda s, o: s.add_(3)),
    ('sub', lambda s, o: s.sub_(o, alpha=3)),
    ('sub_scalar', lambda s, o: s.sub_(2)),
    ('mul', lambda s, o: s.mul_(o)),
    ('mul_scalar', lambda s, o: s.mul_(3)),
    ('div', lambda s, o: s.div_(o)),
    ('div_scalar', lambda s, o: s.div_(4)),
    ('addcmul', lambda s, o: s.addcmul_(o, o, value=0.5)),
    ('addcdiv', lambda s, o: s.addcdiv_(o, o.abs() + 1, value=2)),
    ('lerp', lambda s, o: s.lerp_(o, 0.25)),
    ('lerp_tensor', lambda s, o: s.lerp_(o, torch.full_like(o, 0.75))),
    ('sqrt', lambda s, o: s.abs_().sqrt_()),
    ('zero', lambda s, o: s.zero_()),
    ('fill', lambda s, o: s.fill_(1.5)),
    ('clamp', lambda s, o: s.clamp_(-0.5, 0.5)),
]


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('name,fn', VALID, ids=[v[0] for v in VALID])
def test_inplace_results_match_eager(name, fn, dtype):
  self_c, other_c = make((2, 3), dtype), make((3,), dtype, seed=1)
  expected = fn(self_c.clone(), other_c)
  actual = fn(self_c.to(DEV), other_c.to(DEV))
  assert_same(actual, expected)
  meta = fn(self_c.to('meta'), other_c.to('meta'))
  assert (meta.shape, meta.dtype) == (expected.shape, expected.dtype)


def test_integer_inplace_results_match_eager():
  for fn in (lambda s, o: s.add_(o, alpha=2), lambda s, o: s.sub_(o), lambda s, o: s.mul_(o),
             lambda s, o: s.clamp_(-2, 2), lambda s, o: s.fill_(7), lambda s, o: s.zero_()):
    self_c, other_c = make((2, 3), torch.int32), make((3,), torch.int32, seed=1)
    assert_same(fn(self_c.to(DEV), other_c.to(DEV)), fn(self_c.clone(), other_c))


# In-place calls eager rejects, with a fragment of eager's message.
INVALID = [
    ('grow_add', lambda d: torch.ones(3, device=d).add_(torch.ones(2, 3, device=d)),
     "doesn't match the broadcast shape"),
    ('grow_mul', lambda d: torch.ones(3, device=d).mul_(torch.ones(2, 3, device=d)),
     "doesn't match the broadcast shape"),
    ('grow_lerp', lambda d: torch.ones(3, device=d).lerp_(torch.ones(2, 3, device=d), 0.5),
     "doesn't match the broadcast shape"),
    ('grow_addcmul', lambda d: torch.ones(3, device=d).addcmul_(torch.ones(2, 1, device=d),
                                                                torch.ones(3, device=d)),
     "doesn't match the broadcast shape"),
    ('int_div', lambda d: torch.ones(3, dtype=torch.long, device=d).div_(2),
     "can't be cast to the desired output type Long"),
    ('int_sqrt', lambda d: torch.ones(3, dtype=torch.long, device=d).sqrt_(),
     "can't be cast to the desired output type Long"),
    ('int_mul_float', lambda d: torch.ones(3, dtype=torch.long, device=d).mul_(0.5),
     "can't be cast to the desired output type Long"),
    ('bool_sub', lambda d: torch.ones(3, dtype=torch.bool, device=d).sub_(
        torch.ones(3, dtype=torch.bool, device=d)), 'Subtraction'),
    ('int_addcdiv', lambda d: torch.ones(3, dtype=torch.long, device=d).addcdiv_(
        torch.ones(3, dtype=torch.long, device=d), torch.ones(3, dtype=torch.long, device=d)),
     'Integer division with addcdiv'),
]


@pytest.mark.parametrize('name,fn,message', INVALID, ids=[v[0] for v in INVALID])
def test_rejected_inplace_raises_as_eager(name, fn, message):
  for device in ('cpu', 'meta', DEV):
    with pytest.raises(RuntimeError, match=message):
      fn(device)
  # The device stays usable.
  assert torch.ones(2, device=DEV).add_(1).cpu().tolist() == [2.0, 2.0]


def test_symbolic_shapes_keep_working():
  # FakeTensor tracing with dynamic shapes (torch.compile) runs these meta kernels on
  # symbolic sizes, which PyTorch's C++ meta functions of binary ops cannot read.
  from torch._subclasses.fake_tensor import FakeTensorMode
  from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
  mode = FakeTensorMode(shape_env=ShapeEnv())
  dynamic_rows = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC, DimDynamic.STATIC])
  fake = lambda t: mode.from_tensor(t, symbolic_context=dynamic_rows)
  x, y = fake(torch.ones(3, 4)), fake(torch.ones(3, 4))
  row = mode.from_tensor(torch.ones(4))
  longs = fake(torch.ones(3, 4, dtype=torch.long))
  with mode:
    calls = [lambda: x.add_(y, alpha=2), lambda: x.add_(row), lambda: x.add_(2), lambda: x.sub_(y),
             lambda: x.sub_(1), lambda: x.mul_(y), lambda: x.mul_(0.5), lambda: x.div_(y), lambda: x.div_(2),
             lambda: x.addcmul_(y, row), lambda: x.addcdiv_(y, y), lambda: x.lerp_(y, 0.5),
             lambda: x.lerp_(y, y), lambda: longs.add_(longs)]
    for call in calls:
      out = call()
      assert isinstance(out.shape[0], torch.SymInt) and out.shape[1] == 4
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
      row.add_(x)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
      longs.div_(2)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
      longs.mul_(y)
    with pytest.raises(RuntimeError, match='Subtraction'):
      fake(torch.ones(3, 4, dtype=torch.bool)).sub_(fake(torch.ones(3, 4, dtype=torch.bool)))


# In-place ops whose only tensor is self (cpp/aten/inplace_meta_self_only.cpp).
SELF_ONLY = {
    'sigmoid_': lambda s: s.sigmoid_(), 'tanh_': lambda s: s.tanh_(), 'relu_': lambda s: s.relu_(),
    'silu_': lambda s: torch.nn.functional.silu(s, inplace=True), 'exp_': lambda s: s.exp_(),
    'log1p_': lambda s: s.abs_().log1p_(), 'rsqrt_': lambda s: s.abs_().add_(1).rsqrt_(),
    'neg_': lambda s: s.neg_(), 'floor_': lambda s: s.floor_(), 'round_.decimals': lambda s: s.round_(decimals=1),
    'clamp_min_': lambda s: s.clamp_min_(0.1), 'clamp_max_': lambda s: s.clamp_max_(0.1),
    'leaky_relu_': lambda s: torch.nn.functional.leaky_relu_(s, 0.2),
    'hardtanh_': lambda s: torch.nn.functional.hardtanh_(s, -0.5, 0.5),
    'gelu_': lambda s: torch.ops.aten.gelu_(s, approximate='tanh'),
    'elu_': lambda s: torch.nn.functional.elu_(s, 0.5), 'threshold_': lambda s: torch.nn.functional.threshold_(s, 0.1, 2.0),
}


@pytest.mark.parametrize('op', sorted(SELF_ONLY) + ['erf_', 'sin_'])
def test_self_only_meta_kernel_is_the_cpp_one(op):
  dump = torch._C._dispatch_dump('aten::' + op)
  active = [l for l in dump.splitlines() if l.startswith('Meta:')]
  assert len(active) == 1 and 'inplace_meta_self_only.cpp' in active[0], active


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('op', sorted(SELF_ONLY))
def test_self_only_results_match_eager(op, dtype):
  fn = SELF_ONLY[op]
  self_c = make((2, 3), dtype)
  assert_same(fn(self_c.to(DEV)), fn(self_c.clone()))
  meta = fn(self_c.to('meta'))
  assert (meta.shape, meta.dtype) == (self_c.shape, self_c.dtype)


@pytest.mark.parametrize('name,fn,message', [
    ('int_sigmoid', lambda d: torch.ones(3, dtype=torch.long, device=d).sigmoid_(), "can't be cast"),
    ('int_tanh', lambda d: torch.ones(3, dtype=torch.long, device=d).tanh_(), "can't be cast"),
    ('bool_relu', lambda d: torch.ones(3, dtype=torch.bool, device=d).relu_(), 'Boolean inputs'),
    ('bool_neg', lambda d: torch.ones(3, dtype=torch.bool, device=d).neg_(), 'Negation'),
], ids=lambda v: v if isinstance(v, str) else '')
def test_self_only_rejected_raises_as_eager(name, fn, message):
  for device in ('cpu', 'meta', DEV):
    with pytest.raises(RuntimeError, match=message):
      fn(device)


def test_self_only_symbolic_shapes_keep_working():
  from torch._subclasses.fake_tensor import FakeTensorMode
  from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
  mode = FakeTensorMode(shape_env=ShapeEnv())
  dynamic_rows = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC, DimDynamic.STATIC])
  x = mode.from_tensor(torch.ones(3, 4), symbolic_context=dynamic_rows)
  longs = mode.from_tensor(torch.ones(3, 4, dtype=torch.long), symbolic_context=dynamic_rows)
  with mode:
    for op, fn in SELF_ONLY.items():
      out = fn(x)
      assert isinstance(out.shape[0], torch.SymInt) and out.shape[1] == 4, op
    with pytest.raises(RuntimeError, match='cast'):  # FakeTensor words its own check
      longs.sigmoid_()
