"""DLPack exchange (torch_xla.utils.dlpack) and _unsafe_buffer_pointer on the CPU
device, whose buffers are host memory: views share it both ways."""

import gc

import numpy as np
import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.utils.dlpack as xdlpack
from testing.device_marks import cpu_device

DEV = xm.xla_device()

pytestmark = cpu_device('DLPack views of host memory')

DTYPES = [torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8,
          torch.bfloat16, torch.bool]


def sample(dtype, shape=(3, 4)):
  if dtype == torch.bool:
    return torch.rand(shape) > 0.5
  if dtype.is_floating_point:
    return torch.randn(shape).to(dtype)
  return torch.randint(0, 100, shape).to(dtype)


@pytest.mark.parametrize('dtype', DTYPES)
def test_to_dlpack_views_the_buffer(dtype):
  x = sample(dtype)
  xd = x.to(DEV)
  view = torch.from_dlpack(xdlpack.to_dlpack(xd))
  assert view.device.type == 'cpu'
  assert view.dtype == dtype and view.shape == x.shape
  torch.testing.assert_close(view, x)
  assert view.data_ptr() == torch_xla._XLAC._unsafe_buffer_pointer(xd)
  assert xdlpack.shares_memory(xd, view)


def test_writes_through_the_view_reach_the_xla_tensor():
  x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
  xd = x.to(DEV)
  view = torch.from_dlpack(xdlpack.to_dlpack(xd))
  view[1, 2] = -5.0
  view[0].mul_(10)
  expected = x.clone()
  expected[1, 2] = -5.0
  expected[0] *= 10
  torch.testing.assert_close(xd.cpu(), expected)
  # And a graph reading the XLA tensor computes with the written values.
  torch.testing.assert_close((xd * 2).cpu(), expected * 2)


def test_pending_tensor_is_computed_first():
  a, b = torch.randn(4, 4), torch.randn(4, 4)
  pending = a.to(DEV) @ b.to(DEV) + 1
  view = torch.from_dlpack(xdlpack.to_dlpack(pending))
  torch.testing.assert_close(view, a @ b + 1, atol=1e-5, rtol=1e-5)
  pointer = torch_xla._XLAC._unsafe_buffer_pointer(torch.ones(3, device=DEV) * 2)
  assert pointer > 0


def test_view_keeps_the_buffer_alive():
  x = torch.randn(64, 64)
  xd = x.to(DEV)
  view = torch.from_dlpack(xdlpack.to_dlpack(xd))
  del xd
  gc.collect()
  # New buffers of the same size must not reuse the viewed memory.
  others = [torch.zeros(64, 64, device=DEV) + i for i in range(4)]
  torch_xla.sync()
  torch.testing.assert_close(view, x)
  assert all(o.cpu()[0, 0].item() == i for i, o in enumerate(others))


def test_in_place_update_of_the_xla_tensor_leaves_the_view_its_old_value():
  x = torch.randn(8)
  xd = x.to(DEV)
  view = torch.from_dlpack(xdlpack.to_dlpack(xd))
  xd.add_(1)
  torch_xla.sync()
  torch.testing.assert_close(xd.cpu(), x + 1)
  torch.testing.assert_close(view, x)


@pytest.mark.parametrize('dtype', DTYPES)
def test_from_dlpack_shares_the_cpu_tensor(dtype):
  x = sample(dtype)
  xd = xdlpack.from_dlpack(x)
  assert xd.device == DEV and xd.dtype == dtype and xd.shape == x.shape
  torch.testing.assert_close(xd.cpu(), x)
  assert xdlpack.shares_memory(xd, x)


def test_writes_to_the_cpu_tensor_reach_the_xla_tensor():
  x = torch.zeros(5, 3)
  xd = xdlpack.from_dlpack(x)
  x[2] = 7.0
  expected = torch.zeros(5, 3)
  expected[2] = 7.0
  torch.testing.assert_close(xd.cpu(), expected)
  torch.testing.assert_close((xd + 1).cpu(), expected + 1)


def test_in_place_update_of_a_taken_tensor_leaves_the_producer_its_values():
  x = torch.arange(4096, dtype=torch.float32)
  xd = xdlpack.from_dlpack(x)
  xd.mul_(2)
  torch_xla.sync()
  torch.testing.assert_close(xd.cpu(), torch.arange(4096, dtype=torch.float32) * 2)
  torch.testing.assert_close(x, torch.arange(4096, dtype=torch.float32))


def test_from_dlpack_keeps_the_producer_alive():
  xd = xdlpack.from_dlpack(torch.full((128,), 3.0))
  gc.collect()
  torch.testing.assert_close((xd * 2).cpu(), torch.full((128,), 6.0))


def test_from_dlpack_copies_what_it_cannot_view():
  x = torch.randn(4, 6)
  strided = x.t()
  xd = xdlpack.from_dlpack(strided)
  torch.testing.assert_close(xd.cpu(), strided)
  assert not xdlpack.shares_memory(xd, strided)
  empty = xdlpack.from_dlpack(torch.zeros(0, 3))
  assert empty.shape == (0, 3) and empty.device == DEV


def test_from_capsule_and_numpy():
  x = torch.randn(2, 5)
  xd = xdlpack.from_dlpack(torch.utils.dlpack.to_dlpack(x))
  torch.testing.assert_close(xd.cpu(), x)
  arr = np.arange(6, dtype=np.int32).reshape(2, 3)
  xa = xdlpack.from_dlpack(arr)
  assert xa.dtype == torch.int32
  torch.testing.assert_close(xa.cpu(), torch.from_numpy(arr))


def test_memory_the_plugin_cannot_view_is_copied():
  # The CPU plugin takes memory aligned to 64 bytes only.
  base = torch.arange(100, dtype=torch.float32)
  unaligned = base[1:]
  xd = xdlpack.from_dlpack(unaligned)
  torch.testing.assert_close(xd.cpu(), unaligned)
  assert not xdlpack.shares_memory(xd, unaligned)
  aligned = base[16:]
  assert aligned.data_ptr() % 64 == 0
  assert xdlpack.shares_memory(xdlpack.from_dlpack(aligned), aligned)


def test_xla_round_trip_shares_memory():
  x = torch.randn(3, 3)
  xd = x.to(DEV)
  again = xdlpack.from_dlpack(xdlpack.to_dlpack(xd))
  assert torch_xla._XLAC._unsafe_buffer_pointer(
      again) == torch_xla._XLAC._unsafe_buffer_pointer(xd)
  torch.testing.assert_close((again + xd).cpu(), 2 * x)
  numpy_view = np.from_dlpack(torch.from_dlpack(xdlpack.to_dlpack(xd)))
  np.testing.assert_allclose(numpy_view, x.numpy())


def test_bad_inputs():
  with pytest.raises(RuntimeError, match='to_dlpack: expected a tensor on an XLA device'):
    xdlpack.to_dlpack(torch.zeros(3))
  with pytest.raises(RuntimeError, match='_unsafe_buffer_pointer'):
    torch_xla._XLAC._unsafe_buffer_pointer(torch.zeros(3))
  with pytest.raises(TypeError):
    xdlpack.from_dlpack('not a tensor')
