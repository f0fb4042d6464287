"""Casts and copies on the XLA device against eager PyTorch on the CPU: dtype casts
(_to_copy), transfers between devices and to the host, clone, copy_ and _copy_from, and
item(); values, dtype and shape, and the counters."""

import pytest
import torch

from testing.device_marks import needs_devices
from testing.op_testing import DEV, assert_same, check, ids, lowered, make
from testing.counter_cases import positive as _pos


# ------------------------------------------------------------- dtype casts


CAST_INPUT = torch.tensor([[-2.7, -1.0, -0.5, 0.0], [0.25, 0.5, 1.5, 100.75]])


@pytest.mark.parametrize('cast', [
    lambda t: t.to(torch.bfloat16), lambda t: t.int(), lambda t: t.long(), lambda t: t.bool(),
    lambda t: t.double(), lambda t: t.float(), lambda t: t.to(torch.bfloat16).float(),
    lambda t: t.int().float(), lambda t: t.bool().int(), lambda t: t.double().to(torch.bfloat16),
    lambda t: t.to(torch.int64).to(torch.bfloat16), lambda t: t.half(),
], ids=['bf16', 'int', 'long', 'bool', 'double', 'float', 'bf16-float', 'int-float', 'bool-int', 'double-bf16',
        'long-bf16', 'half'])
def test_casts(cast):
  check(cast, CAST_INPUT, ops=[] if cast(CAST_INPUT) is CAST_INPUT else ['_to_copy'])


def test_cast_same_dtype_and_int_bool():
  x = torch.tensor([-3, 0, 2, 7], dtype=torch.int64)
  check(lambda t: t.bool(), x, ops=['_to_copy'])
  check(lambda t: t.int(), x, ops=['_to_copy'])
  check(lambda t: t.to(torch.float32), x, ops=['_to_copy'])
  check(lambda t: t.bool().float(), x, ops=['_to_copy'])
  d = x.to(DEV)
  assert d.to(torch.int64) is d  # no-op cast keeps the tensor


@needs_devices(2)
def test_transfers_between_devices():
  x = make((2, 3), torch.float32)
  with lowered('_to_copy'):
    d1 = x.to('xla:1')
  assert d1.device == torch.device('xla', 1)
  assert_same(d1, x)
  d0 = d1.to(DEV)
  assert d0.device == DEV
  assert_same(d0 * 2, x * 2)
  assert_same(d1.to(DEV, torch.int32), x.int())


def test_clone():
  x = make((3, 4), torch.float32)
  d = x.to(DEV)
  with lowered('clone'):
    c = d.clone()
  c.add_(1)
  assert_same(d, x)
  assert_same(c, x + 1)


def test_copy_from_ops():
  x = make((3, 4), torch.float32)
  d = x.to(DEV)
  with lowered('_copy_from'):
    dst = torch.ops.aten._copy_from(d, torch.empty(3, 4, dtype=torch.float64, device=DEV))
  assert_same(dst, x.double())
  with lowered('_copy_from_and_resize'):
    dst = torch.ops.aten._copy_from_and_resize(d, torch.empty(0, device=DEV))
  assert_same(dst, x)


@needs_devices(2)
def test_copy_inplace_values():
  x = make((3, 4), torch.float32)
  d = torch.zeros(3, 4, dtype=torch.int32, device=DEV)
  d.copy_(x.to(DEV))  # device -> device, with a cast
  assert_same(d, x.int())
  d.copy_(torch.arange(4))  # host -> device, broadcast
  assert_same(d, torch.arange(4, dtype=torch.int32).expand(3, 4).contiguous())
  d.copy_(torch.ones(3, 4, device='xla:1'))  # another device
  assert_same(d, torch.ones(3, 4, dtype=torch.int32))


def test_copy_is_lowered():
  with lowered('copy'):
    d = torch.zeros(3, 4, device=DEV)
    d.copy_(torch.ones(4, device=DEV))
  assert_same(d, torch.ones(3, 4))


def test_copy_device_to_host():
  """cpu_tensor.copy_(xla_tensor): functionalization asks the XLA copy for the value, in
  the host tensor's dtype and shape, then writes it to the host tensor."""
  c = torch.zeros(2, 3)
  c.copy_(torch.ones(2, 3, device=DEV) * 3)
  assert torch.equal(c, torch.full((2, 3), 3.0))
  d = torch.zeros(2, 3, dtype=torch.float64)
  d.copy_(torch.arange(3, device=DEV))  # broadcast and cast, as eager's copy_
  assert torch.equal(d, torch.arange(3, dtype=torch.float64).expand(2, 3))
  v = torch.zeros(6)
  v[2:5].copy_(torch.ones(3, device=DEV))  # into a view of a host tensor
  assert v.tolist() == [0, 0, 1, 1, 1, 0]


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.bool], ids=ids)
def test_item(dtype):
  x = make((2, 3), dtype, seed=3)
  with lowered('_local_scalar_dense'):
    got = x.to(DEV)[1, 2].item()
  assert type(got) is type(x[1, 2].item())
  assert got == x[1, 2].item()


def test_item_of_many_elements_raises():
  with pytest.raises(RuntimeError, match='elements cannot be converted to Scalar'):
    torch.ones(2, device=DEV).item()


def test_tensor_constructor_gives_a_functional_tensor():
  # Like every other XLA tensor, so that views, in-place ops and torch.compile's fake
  # copies work on it.
  with lowered('lift_fresh'):
    t = torch.tensor([[1.5, 2.5], [3.5, 4.5]], device=DEV)
  assert torch._is_functional_tensor(t)
  row = t[1]
  row.mul_(2)
  assert t.cpu().tolist() == [[1.5, 2.5], [7.0, 9.0]]
  compiled = torch.compile(lambda a: a.sum(0) * 2, backend='openxla')
  assert compiled(torch.tensor([1.0, 2.0], device=DEV)).item() == 6.0


# ---- counter cases ------------------------------------------------------------

COUNTER_CASES = {
    '_to_copy': (lambda: _pos().to(torch.bfloat16), '_to_copy'),
    '_copy_from': (lambda: torch.ops.aten._copy_from(_pos(), torch.empty(2, 3, device=DEV)), '_copy_from'),
    '_copy_from_and_resize': (lambda: torch.ops.aten._copy_from_and_resize(_pos(), torch.empty(0, device=DEV)),
                              '_copy_from_and_resize'),
    'copy': (lambda: torch.ops.aten.copy(_pos(), _pos() * 2), 'copy'),
    'clone': (lambda: _pos().clone(), 'clone'),
    '_local_scalar_dense': (lambda: _pos().sum().item(), '_local_scalar_dense'),
    'lift_fresh': (lambda: torch.tensor([1.0, 2.0], device=DEV), 'lift_fresh'),
    # On the XLA tensor inside a functional one, as PyTorch hands it over.
    'lift': (lambda: torch.ops.aten.lift(torch._from_functional_tensor(_pos())), 'lift'),
}
