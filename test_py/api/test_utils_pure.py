"""Tests of the pure-Python parts of torch_xla (no XLA device needed).

Where a module would call the compiled extension, the tests replace
xla_model._xlac with a fake recording the calls.
"""

import collections
import os
import threading
import time

import pytest
import torch

import torch_xla.core.functions as xf
import torch_xla.core.xla_model as xm
from torch_xla.core import _replica
from torch_xla.distributed import data_parallel as dp
from torch_xla.distributed import parallel_loader as pl
from torch_xla.distributed import xla_multiprocessing as xmp
from torch_xla.utils import serialization
from torch_xla.utils import utils as xu


class FakeXLAC:
  """Records the calls the Python layer makes into _XLAC."""

  def __init__(self, kind='TPU', count=2):
    self.kind = kind
    self.count = count
    self.spmd = False
    self.calls = []

  def _xla_is_spmd(self):
    return self.spmd

  def _xla_device_kind(self):
    return self.kind

  def _xla_device_count(self):
    return self.count

  def _xla_sync(self, devices=None, wait=False):
    self.calls.append(('sync', devices, wait))

  def _xla_wait_device_ops(self):
    self.calls.append(('wait',))

  def _xla_memory_info(self, device):
    if device == 0:
      return (3 * 1024 * 1024, 8 * 1024 * 1024, -1)
    raise RuntimeError('no such device')

  def _xla_set_rng_state(self, seed, device):
    self.calls.append(('set_rng', seed, device))


@pytest.fixture
def fake_xlac(monkeypatch):
  fake = FakeXLAC()
  monkeypatch.setattr(xm, '_xlac', lambda: fake)
  return fake


# ------------------------------------------------------------ serialization


def test_serialization_round_trip(tmp_path):
  shared = torch.arange(6.0).reshape(2, 3)
  state = collections.OrderedDict(w=shared, b=torch.tensor([1, 2], dtype=torch.int32))
  state._metadata = {'': {'version': 3}}
  data = {
      'state': state,
      'tied': [shared, shared],
      'pair': (torch.tensor(5.0), 'label'),
      'step': 7,
  }
  path = str(tmp_path / 'ckpt.pt')
  serialization.save(data, path)

  # One file per distinct tensor: shared, b, pair[0].
  assert sorted(os.listdir(path + '.tensors')) == [
      'tensor_0.pt', 'tensor_1.pt', 'tensor_2.pt']
  loaded = serialization.load(path)
  assert isinstance(loaded['state'], collections.OrderedDict)
  assert loaded['state']._metadata == {'': {'version': 3}}
  assert torch.equal(loaded['state']['w'], shared)
  assert loaded['state']['b'].dtype == torch.int32
  assert loaded['state']['b'].tolist() == [1, 2]
  assert loaded['tied'][0] is loaded['tied'][1] is loaded['state']['w']
  assert isinstance(loaded['pair'], tuple)
  assert loaded['pair'][0].item() == 5.0 and loaded['pair'][1] == 'label'
  assert loaded['step'] == 7


def test_serialization_non_master_does_not_write(tmp_path, monkeypatch):
  path = str(tmp_path / 'x.pt')
  monkeypatch.setattr(xm, 'is_master_ordinal', lambda local=True: False)
  serialization.save({'a': torch.ones(2)}, path)
  assert not os.path.exists(path)
  serialization.save({'a': torch.ones(2)}, path, master_only=False)
  assert torch.equal(serialization.load(path)['a'], torch.ones(2))


def test_xm_save_cpu_tensors(tmp_path):
  path = str(tmp_path / 'm.pt')
  model = torch.nn.Linear(3, 2)
  xm.save(model.state_dict(), path)
  loaded = torch.load(path)
  assert set(loaded) == {'weight', 'bias'}
  assert torch.equal(loaded['weight'], model.weight.detach())


# ------------------------------------------------------------------ utils


def test_sample_generator():
  data = (torch.zeros(2), torch.ones(1))
  gen = xu.SampleGenerator(data, 3)
  assert len(gen) == 3
  first = list(gen)
  assert len(first) == 3 and all(x is data for x in first)
  assert len(list(gen)) == 3  # a new pass each epoch


Point = collections.namedtuple('Point', 'x y')


def test_map_tensors_keeps_structure():

  class Pair(xu.DataWrapper):

    def __init__(self, a, b):
      self.a, self.b = a, b

    def get_tensors(self):
      return [self.a, self.b]

    def from_tensors(self, tensors):
      return Pair(*tensors)

  t = torch.ones(2)
  out = xu.map_tensors(
      {'p': Pair(t, t * 2), 's': {3}, 'l': (t, 'x'), 'n': Point(t, 1)},
      lambda x: x + 1)
  assert isinstance(out['n'], Point) and out['n'].x is out['p'].a
  assert out['p'].a.tolist() == [2.0, 2.0] and out['p'].b.tolist() == [3.0, 3.0]
  assert out['s'] == {3} and out['l'][1] == 'x'
  assert out['l'][0] is out['p'].a  # the same input tensor maps to one result


# -------------------------------------------------------------------- nms


def _iou(a, b):
  ay0, ay1 = sorted((a[0], a[2]))
  ax0, ax1 = sorted((a[1], a[3]))
  by0, by1 = sorted((b[0], b[2]))
  bx0, bx1 = sorted((b[1], b[3]))
  ih = max(0.0, min(ay1, by1) - max(ay0, by0))
  iw = max(0.0, min(ax1, bx1) - max(ax0, bx0))
  inter = ih * iw
  union = (ay1 - ay0) * (ax1 - ax0) + (by1 - by0) * (bx1 - bx0) - inter
  return inter / union if union > 0 else 0.0


def _brute_force_nms(boxes, scores, score_threshold, iou_threshold):
  order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
  selected = []
  for i in order:
    if scores[i] <= score_threshold:
      continue
    if all(_iou(boxes[i], boxes[j]) <= iou_threshold for j in selected):
      selected.append(i)
  return selected


@pytest.mark.parametrize('seed', range(5))
def test_nms_matches_brute_force(seed):
  g = torch.Generator().manual_seed(seed)
  n = 40
  corners = torch.rand(n, 2, generator=g) * 10
  sizes = torch.rand(n, 2, generator=g) * 4 + 0.5
  boxes = torch.cat([corners, corners + sizes], dim=1)
  boxes[::3] = boxes[::3][:, [2, 3, 0, 1]]  # some boxes with swapped corners
  scores = torch.rand(n, generator=g)
  scores[5] = scores[6]  # a tie
  expected = _brute_force_nms(boxes.tolist(), scores.tolist(), 0.2, 0.3)
  output_size = 30
  indices, num_valid = xf.nms(boxes, scores, 0.2, torch.tensor(0.3),
                              output_size)
  assert indices.shape == (output_size,) and indices.dtype == torch.int32
  assert num_valid.item() == min(len(expected), output_size)
  assert indices[:num_valid].tolist() == expected[:output_size]
  assert indices[num_valid:].tolist() == [0] * (output_size - num_valid.item())


def test_nms_output_size_truncates():
  boxes = torch.tensor([[0., 0., 1., 1.], [0., 0., 1., 1.], [5., 5., 6., 6.],
                        [10., 10., 11., 11.]])
  scores = torch.tensor([0.9, 0.8, 0.7, 0.6])
  indices, num_valid = xf.nms(boxes, scores, 0.0, 0.5, 2)
  assert indices.tolist() == [0, 2] and num_valid.item() == 2
  indices, num_valid = xf.nms(boxes, scores, 0.65, 0.5, 4)
  assert indices.tolist() == [0, 2, 0, 0] and num_valid.item() == 2


# ------------------------------------- xla_model single-replica semantics


def test_single_replica_collectives():
  assert xm.xrt_world_size() == 1 and xm.world_size() == 1
  assert xm.get_ordinal() == 0 and xm.is_master_ordinal(local=False)
  assert xm.xrt_world_size(defval=5) == 5  # no replication info
  t = torch.tensor([1.0, 2.0])
  reduced = xm.all_reduce(xm.REDUCE_SUM, t, scale=0.5)
  assert reduced.tolist() == [0.5, 1.0] and t.tolist() == [1.0, 2.0]
  ts = [torch.tensor([2.0]), torch.tensor([4.0])]
  assert xm.all_reduce(xm.REDUCE_MAX, ts, scale=0.25) is ts
  assert [x.item() for x in ts] == [0.5, 1.0]
  with pytest.raises(ValueError):
    xm.all_reduce('avg', t)
  assert torch.equal(xm.all_gather(t), t)
  assert torch.equal(xm.all_to_all(t, 0, 0, 1), t)
  assert xm.rendezvous('tag', b'abc') == [b'abc']
  assert xm.mesh_reduce('tag', 3, sum) == 3
  assert xm.do_on_ordinals(lambda a, b: a + b, (1, 2)) == 3
  assert xm.do_on_ordinals(lambda: 1, (), ordinals=(1,)) is None


def test_functions_all_reduce_gradient():
  x = torch.tensor([1.0, 3.0], requires_grad=True)
  y = xf.all_reduce(xm.REDUCE_SUM, x, scale=2.0)
  y.sum().backward()
  assert y.tolist() == [2.0, 6.0] and x.grad.tolist() == [2.0, 2.0]
  z = torch.ones(2, 3, requires_grad=True)
  g = xf.all_gather(z, dim=1)
  (g * 3).sum().backward()
  assert g.shape == (2, 3) and z.grad.tolist() == [[3.0] * 3] * 2


def test_replica_state_thread_local():
  info = _replica.ReplicaInfo(ordinal=3, world_size=4, local_ordinal=1,
                              local_world_size=2)
  seen = {}

  def worker():
    with _replica.replica(info, thread_only=True):
      seen['worker'] = (xm.get_ordinal(), xm.xrt_world_size(),
                        xm.get_local_ordinal(), xm.is_master_ordinal())

  th = threading.Thread(target=worker)
  th.start()
  th.join()
  assert seen['worker'] == (3, 4, 1, False)
  assert xm.get_ordinal() == 0 and xm.xrt_world_size() == 1


def test_devices(fake_xlac):
  assert xm.xla_device() == torch.device('xla', 0)
  assert xm.xla_device(1, devkind='TPU') == torch.device('xla', 1)
  with pytest.raises(RuntimeError, match='GPU'):
    xm.xla_device(devkind='GPU')
  with pytest.raises(RuntimeError):
    xm.xla_device(2)
  assert xm.get_xla_supported_devices() == ['xla:0', 'xla:1']
  assert xm.get_xla_supported_devices(max_devices=1) == ['xla:0']
  assert xm.get_xla_supported_devices(devkind='CPU') == []
  fake_xlac.spmd = True  # xla:0 stands for every device
  assert xm.get_xla_supported_devices() == ['xla:0']
  fake_xlac.spmd = False
  assert xm.xla_real_devices(['xla:1', torch.device('xla', 0)]) == [
      'TPU:1', 'TPU:0']
  assert xm.xla_device_hw('xla:0') == 'TPU'
  fake_xlac.kind = 'CUDA'
  assert xm.xla_device_hw(torch.device('xla', 1)) == 'GPU'
  assert xm.xla_device(devkind='GPU') == torch.device('xla', 0)


def test_memory_info_never_raises(fake_xlac):
  info = xm.get_memory_info('xla:0')
  assert info == {'kb_free': 5 * 1024, 'kb_total': 8 * 1024,
                  'bytes_used': 3 * 1024 * 1024, 'bytes_limit': 8 * 1024 * 1024}
  assert xm.get_memory_info('xla:1')['kb_total'] == 0
  assert xm.get_memory_info('cpu')['kb_free'] == 0


def test_step_closures_order_and_async(fake_xlac):
  events = []
  xm.add_step_closure(lambda: events.append(('sync', len(fake_xlac.calls))))

  def slow(x):
    time.sleep(0.05)
    events.append(('async', x))

  xm.add_step_closure(slow, args=(1,), run_async=True)
  xm.add_step_closure(events.append, args=('second',))
  assert events == []
  xm.mark_step()
  assert events[:2] == [('sync', 1), 'second']  # after the sync, in order
  xm.mark_step(wait=True)
  assert ('async', 1) in events  # done before the next mark_step returned
  assert fake_xlac.calls == [('sync', None, False), ('sync', None, True)]

  def failing():
    raise KeyError('boom')

  xm.add_step_closure(failing, run_async=True)
  xm.mark_step()
  with pytest.raises(KeyError):
    xm.mark_step()


def test_optimizer_step(fake_xlac):
  w = torch.nn.Parameter(torch.tensor([1.0]))
  opt = torch.optim.SGD([w], lr=0.5)
  w.grad = torch.tensor([2.0])
  assert xm.optimizer_step(opt, barrier=True,
                           optimizer_args={'closure': lambda: 7.0}) == 7.0
  assert w.item() == 0.0
  assert fake_xlac.calls == [('sync', None, False)]
  xm.optimizer_step(opt)
  assert len(fake_xlac.calls) == 1  # no barrier, no sync


# --------------------------------------- loaders (on the CPU device)


def test_parallel_loader_on_cpu(fake_xlac):
  batches = [(torch.full((2,), float(i)), {'y': torch.tensor(i)})
             for i in range(10)]
  para = pl.ParallelLoader(batches, ['cpu'], batches_per_execution=3,
                           host_to_device_transfer_threads=3,
                           device_prefetch_size=2)
  loader = para.per_device_loader('cpu')
  assert len(loader) == 10
  got = [int(y['y']) for _, y in loader]
  assert got == list(range(10))
  # A step before batches 0, 3, 6, 9 and one after the last batch.
  assert len(fake_xlac.calls) == 5
  with pytest.raises(StopIteration):
    next(loader)


def test_parallel_loader_round_robin_and_fixed_batch(fake_xlac):
  batches = [torch.zeros(4, 1) + i for i in range(5)] + [torch.zeros(2, 1)]
  para = pl.ParallelLoader(batches, ['cpu', 'meta'], fixed_batch_size=True)
  cpu_batches = [b[0, 0].item() for b in para.per_device_loader('cpu')]
  meta_batches = list(para.per_device_loader('meta'))
  # Whole rounds only: batch 4 would give 'cpu' one step more than 'meta'.
  assert cpu_batches == [0.0, 2.0]
  assert len(meta_batches) == 2 and all(b.device.type == 'meta'
                                        for b in meta_batches)
  assert para.per_device_samples() == 3  # 6 batches over 2 devices


def test_parallel_loader_reraises_loader_error(fake_xlac):

  def gen():
    yield torch.ones(1)
    raise OSError('disk gone')

  class Loader:

    def __iter__(self):
      return gen()

  loader = pl.MpDeviceLoader(Loader(), 'cpu')
  it = iter(loader)
  assert next(it).item() == 1.0
  with pytest.raises(OSError, match='disk gone'):
    next(it)


def test_parallel_loader_threads_stop_when_collected(fake_xlac):
  import gc
  before = threading.active_count()
  para = pl.ParallelLoader(xu.SampleGenerator(torch.ones(1), 10**6), ['cpu'],
                           loader_prefetch_size=2, device_prefetch_size=2)
  next(para.per_device_loader('cpu'))
  del para
  gc.collect()
  deadline = time.time() + 5
  while threading.active_count() > before and time.time() < deadline:
    time.sleep(0.01)
  assert threading.active_count() == before


def test_data_parallel_cpu_and_spawn():
  model_parallel = dp.DataParallel(lambda: torch.nn.Linear(2, 1), device_ids=[])
  assert model_parallel.devices == [torch.device('cpu')]

  def loop_fn(model, loader, device, context):
    context.getattr_or('epochs', 0)
    context.epochs += 1
    return (device.type, sum(1 for _ in loader), context.epochs)

  assert model_parallel(loop_fn, [1, 2, 3]) == [('cpu', 3, 1)]
  assert model_parallel(loop_fn, [1]) == [('cpu', 1, 2)]
  with pytest.raises(ValueError, match="runs on XLA devices .* got \\['cpu', 'meta'\\]"):
    dp.DataParallel(torch.nn.Linear(1, 1), device_ids=['cpu', 'meta'])

  seen = []
  xmp.spawn(lambda i, a: seen.append((i, a, xm.xrt_world_size(defval=9))),
            args=('x',), nprocs=1)
  assert seen == [(0, 'x', 1)]
  assert xmp.MpSerialExecutor().run(lambda: 42) == 42
