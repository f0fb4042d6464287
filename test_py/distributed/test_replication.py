"""The process model of replication on one host: xmp.spawn and torch_xla.launch run
one thread per device, every replica knows itself (xm, torch_xla.runtime, autograd's
threads), the host rendezvous and the mesh functions exchange data in ordinal order,
and every way for the replicas to fall out of step (a replica raising, returning early,
running another graph, not arriving) ends in a clean error within a bounded time, the
process living on."""

import os
import threading
import time

import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr
import torch_xla.utils.serialization as xser
from torch_xla.core import _replica
from testing.closure_testing import ClosureInBackward
from testing.replica_testing import REPLICAS, RUN_TIMEOUT, run_replicas
from testing.device_marks import needs_devices

pytestmark = needs_devices(4)

# A clean failure comes well before any timeout.
PROMPT = 10.0


def test_spawn_runs_every_device_as_a_replica():

  def replica(index, tag):
    device = xm.xla_device()
    default = torch.zeros(2, device='xla')
    return dict(
        index=index,
        tag=tag,
        device=device,
        default_device=default.device,
        torch_xla_device=torch_xla.device(),
        ordinal=xm.get_ordinal(),
        local_ordinal=xm.get_local_ordinal(),
        world=xm.xrt_world_size(),
        master=xm.is_master_ordinal(),
        global_master=xm.is_master_ordinal(local=False),
        runtime=(xr.world_size(), xr.global_ordinal(), xr.local_ordinal(), xr.local_device_count(),
                 xr.global_device_count(), xr.addressable_device_count(), xr.device_type()),
        thread=threading.current_thread().name,
    )

  results = run_replicas(replica, args=('t',))
  assert len(results) == REPLICAS
  for index, r in enumerate(results):
    expected_device = torch.device('xla', index)
    assert r['index'] == index and r['tag'] == 't'
    assert r['device'] == r['default_device'] == r['torch_xla_device'] == expected_device
    assert r['ordinal'] == r['local_ordinal'] == index
    assert r['world'] == REPLICAS
    assert r['master'] == r['global_master'] == (index == 0)
    assert r['runtime'] == (REPLICAS, index, index, REPLICAS, REPLICAS, REPLICAS, 'CPU')
  assert len({r['thread'] for r in results}) == REPLICAS
  # Outside the replicas again:
  assert xm.xrt_world_size() == 1 and xm.xla_device() == torch.device('xla', 0)
  assert xr.world_size() == 1 and _replica.active() is None


def test_spawn_nprocs_and_join():
  seen = []
  xmp.spawn(lambda i, a: seen.append((i, a, xm.xrt_world_size(), xm.xla_device().index)), args=('x',), nprocs=2)
  assert sorted(seen) == [(0, 'x', 2, 0), (1, 'x', 2, 1)]
  seen.clear()
  # One replica runs on the calling thread.
  xmp.spawn(lambda i: seen.append((i, threading.current_thread() is threading.main_thread())), nprocs=1)
  assert seen == [(0, True)]
  with pytest.raises(ValueError, match='nprocs=5, but this process has 4'):
    xmp.spawn(lambda i: None, nprocs=5)
  with pytest.raises(ValueError, match='nprocs=0'):
    xmp.spawn(lambda i: None, nprocs=0)
  running = xmp.spawn(lambda i: i * 10, nprocs=3, join=False)
  assert running.join(RUN_TIMEOUT) == [0, 10, 20]
  seen.clear()
  torch_xla.launch(lambda i, a: seen.append((i, a)), args=('l',))
  assert sorted(seen) == [(i, 'l') for i in range(REPLICAS)]
  torch_xla.launch(lambda i: seen.append(('single', i, xm.xrt_world_size())), debug_single_process=True)
  assert seen[-1] == ('single', 0, 1)


def test_replicas_do_not_nest():

  def replica(index):
    with pytest.raises(RuntimeError, match='do not nest'):
      xmp.spawn(lambda i: None)
    return True

  assert run_replicas(replica) == [True] * REPLICAS


def sync_with_collective():
  x = torch.ones(2, device=xm.xla_device())
  y = xm.all_reduce(xm.REDUCE_SUM, x)
  xm.mark_step()
  return y


def test_a_raising_replica_releases_the_others():
  """Replica 2 raises while the others wait for it at a collective and at a host
  rendezvous: spawn raises ReplicaError for replica 2 at once, with its traceback."""

  def replica(index):
    if index == 2:
      time.sleep(0.3)  # the others are waiting by now
      raise ValueError('replica two is broken')
    if index == 1:
      xm.rendezvous('never complete')
    sync_with_collective()

  start = time.monotonic()
  with pytest.raises(xmp.ReplicaError) as info:
    xmp.spawn(replica)
  assert time.monotonic() - start < PROMPT
  error = info.value
  assert error.replica == 2 and error.device == 2
  assert isinstance(error.error, ValueError) and error.__cause__ is error.error
  assert 'replica 2 (xla:2) raised ValueError: replica two is broken' in str(error)
  assert "raise ValueError('replica two is broken')" in str(error)  # the traceback
  assert 'replicas [0, 1, 3] stopped with errors after it' in str(error)
  # The process lives on, and replicas work again.
  assert [y.cpu().tolist() for y in run_replicas(lambda i: sync_with_collective())] == [[4.0, 4.0]] * REPLICAS


def test_a_replica_returning_early_releases_the_others():

  def replica(index):
    if index == 3:
      return 'done early'
    sync_with_collective()

  start = time.monotonic()
  with pytest.raises(xmp.ReplicaError, match='replica 3 has returned from its function') as info:
    xmp.spawn(replica)
  assert time.monotonic() - start < PROMPT
  assert info.value.replica in (0, 1, 2)


def test_different_graphs_are_an_error_naming_replicas_and_graphs():

  def replica(index):
    x = torch.ones(3, device=xm.xla_device())
    y = xm.all_reduce(xm.REDUCE_SUM, x if index != 1 else x * x * 3)
    xm.mark_step()
    return y

  with pytest.raises(xmp.ReplicaError) as info:
    xmp.spawn(replica)
  message = str(info.value)
  assert 'the replicas ran different graphs at the same step' in message
  assert 'replicas 0, 2, 3: graph ' in message and '\n  replica 1: graph ' in message
  assert 'xla::all_reduce(f32[3]) -> f32[3]' in message


def test_a_replica_that_does_not_arrive_times_out(monkeypatch):
  monkeypatch.setenv('XLA_REPLICA_TIMEOUT', '1')

  def replica(index):
    if index == 0:
      time.sleep(2.5)  # Python work of its own: the GIL must be free meanwhile
    sync_with_collective()

  start = time.monotonic()
  with pytest.raises(xmp.ReplicaError, match=r'replica 0 did not arrive within 1 s \(XLA_REPLICA_TIMEOUT\)'):
    xmp.spawn(replica)
  assert time.monotonic() - start < PROMPT


def test_host_rendezvous_timeout(monkeypatch):
  monkeypatch.setenv('XLA_REPLICA_TIMEOUT', '0.5')

  def replica(index):
    if index != 3:
      xm.rendezvous('lonely')
    else:
      time.sleep(1.5)

  with pytest.raises(xmp.ReplicaError, match=r"rendezvous 'lonely': replicas \[3\] did not arrive within 0.5 s"):
    xmp.spawn(replica)


def test_bad_timeout_value_names_the_variable(monkeypatch):
  monkeypatch.setenv('XLA_REPLICA_TIMEOUT', 'soon')
  with pytest.raises(ValueError, match="XLA_REPLICA_TIMEOUT must be a positive number of seconds, got 'soon'"):
    xmp.spawn(lambda i: None)
  assert _replica.active() is None


def test_join_timeout_releases_the_replicas():

  def replica(index):
    if index == 0:
      time.sleep(1.0)
    xm.rendezvous('slow')

  running = xmp.spawn(replica, join=False)
  with pytest.raises(TimeoutError, match=r'replicas \[0, 1, 2, 3\] did not finish within 0.2 s'):
    running.join(0.2)
  assert _replica.active() is None
  time.sleep(1.2)  # replica 0 reaches the closed rendezvous and ends with an error
  assert all(not t.is_alive() for t in running._threads)


def test_rendezvous_and_mesh_functions():

  def replica(index):
    device = xm.xla_device()
    payloads = xm.rendezvous('all', f'p{index}'.encode())
    subset = xm.rendezvous('odd', bytes([index]), replicas=[1, 3]) if index % 2 else None
    reduced = xm.mesh_reduce('sum', index * 10, sum)
    tensors = xm.mesh_reduce('tensors', torch.full((2,), float(index), device=device), lambda ts: torch.stack(ts))
    ran = xm.do_on_ordinals(lambda a: a + index, (100,), ordinals=(0, 2))
    return payloads, subset, reduced, tensors, ran

  results = run_replicas(replica)
  for index, (payloads, subset, reduced, tensors, ran) in enumerate(results):
    assert payloads == [b'p0', b'p1', b'p2', b'p3']
    assert subset == ([b'\x01', b'\x03'] if index % 2 else None)
    assert reduced == 60
    assert tensors.device.type == 'cpu' and tensors.tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    assert ran == (100 + index if index in (0, 2) else None)


def test_saves_write_once(tmp_path, monkeypatch):
  writes = []
  real_save = torch.save
  lock = threading.Lock()

  def counting_save(obj, f, *args, **kwargs):
    with lock:
      writes.append(threading.current_thread().name)
    return real_save(obj, f, *args, **kwargs)

  monkeypatch.setattr(torch, 'save', counting_save)

  def replica(index):
    data = {'w': torch.full((3,), float(index + 1), device=xm.xla_device()), 'index': index}
    xm.save(data, str(tmp_path / 'xm.pt'))
    xm.save(data, str(tmp_path / 'global.pt'), global_master=True)
    xser.save(data, str(tmp_path / 'xser.pt'))
    xm.save(data, str(tmp_path / f'each{index}.pt'), master_only=False)

  run_replicas(replica)
  # xm.save twice from the master, xser.save (a file per tensor and the main file), and
  # once per replica with master_only=False.
  assert len(writes) == 2 + 2 + REPLICAS
  monkeypatch.setattr(torch, 'save', real_save)
  assert torch.load(tmp_path / 'xm.pt')['w'].tolist() == [1.0] * 3
  assert xser.load(str(tmp_path / 'xser.pt'))['index'] == 0
  assert [torch.load(tmp_path / f'each{i}.pt')['index'] for i in range(REPLICAS)] == list(range(REPLICAS))


def test_mp_model_wrapper_moves_one_host_copy_per_device():
  torch.manual_seed(0)
  host = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
  wrapped = xmp.MpModelWrapper(host)

  def replica(index):
    device = xm.xla_device()
    model = wrapped.to(device)
    assert wrapped.to(device) is model
    return model, [p.cpu() for p in model.state_dict().values()], {p.device for p in model.parameters()}

  results = run_replicas(replica)
  assert len({id(m) for m, _, _ in results}) == REPLICAS
  for index, (model, values, devices) in enumerate(results):
    assert devices == {torch.device('xla', index)}
    for got, expected in zip(values, host.state_dict().values()):
      assert torch.equal(got, expected)
    assert all(p.requires_grad for p in model.parameters())
  assert all(p.device.type == 'cpu' for p in host.parameters())


def test_mp_serial_executor_runs_one_at_a_time():
  serial = xmp.MpSerialExecutor()
  inside = []
  overlaps = []

  def work(index):
    inside.append(index)
    overlaps.append(len(inside))
    time.sleep(0.02)
    inside.remove(index)
    return index

  assert run_replicas(lambda i: serial.run(lambda: work(i))) == list(range(REPLICAS))
  assert overlaps == [1] * REPLICAS


def test_set_replication_with_threads_of_ones_own():
  devices = [f'xla:{i}' for i in range(REPLICAS)]
  results = {}
  errors = []

  def worker(index):
    try:
      xm.set_replication(devices[index], devices)
      results[index] = (sync_with_collective().cpu().tolist(), xm.get_ordinal(), xm.xrt_world_size(),
                        xm.xla_replication_devices(devices), xm.xla_device().index)
      xm.set_replication(devices[index], [])  # done: the last thread ends the replication
    except BaseException as e:  # reported below
      errors.append(e)

  threads = [threading.Thread(target=worker, args=(i,)) for i in range(REPLICAS)]
  for t in threads:
    t.start()
  for t in threads:
    t.join(RUN_TIMEOUT)
  assert not errors, errors
  assert _replica.active() is None
  for index in range(REPLICAS):
    assert results[index] == ([4.0, 4.0], index, REPLICAS, [f'CPU:{i}' for i in range(REPLICAS)], index)
  with pytest.raises(ValueError, match='is not one of the replication devices'):
    xm.set_replication('xla:3', ['xla:0', 'xla:1'])


def test_set_replication_from_one_thread_fails_at_the_first_collective():
  """What Accelerate does with several devices listed: one thread sets a replication
  over all of them and then reduces. No thread runs the other replicas, so the
  collective fails within the short grace instead of waiting out the timeout."""
  from torch_xla.core._replication_error import ReplicationError
  devices = ['xla:0', 'xla:1']
  xm.set_replication(devices[0], devices)
  try:
    x = torch.ones(2, device=devices[0])
    start = time.monotonic()
    with pytest.raises(ReplicationError, match=r'threads for 1 of its 2 devices.*xm.set_replication'):
      xm.all_reduce(xm.REDUCE_SUM, x)
    assert time.monotonic() - start < 10
  finally:
    xm.set_replication(devices[0], [])
  assert _replica.active() is None
  # One device listed is no replication at all: the reduction of a value alone.
  xm.set_replication(devices[0], devices[:1])
  assert xm.all_reduce(xm.REDUCE_SUM, torch.ones(2, device=devices[0]), scale=2.0).cpu().tolist() == [2.0, 2.0]
  xm.set_replication(devices[0], [])


def test_replica_identity_follows_the_device_in_backward():
  """Backward runs on PyTorch's per-device threads, not on the replica's: Python code
  there (hooks, autograd functions) still sees the replica of the tensor's device."""

  def replica(index):
    seen = {}
    w = torch.ones(3, device=xm.xla_device(), requires_grad=True)

    def hook(grad):
      seen['ordinal'] = xm.get_ordinal()
      seen['device'] = xm.xla_device().index
      seen['thread'] = threading.current_thread() is threading.current_thread()
      return grad

    w.register_hook(hook)
    (w * 2).sum().backward()
    xm.mark_step()
    return seen

  for index, seen in enumerate(run_replicas(replica)):
    assert seen['ordinal'] == index and seen['device'] == index


def test_step_closures_run_on_their_own_replica():

  def replica(index):
    ran = []
    x = torch.full((2,), float(index), device=xm.xla_device())
    xm.add_step_closure(lambda t: ran.append((xm.get_ordinal(), t.cpu().tolist())), args=(x,))
    xm.mark_step()
    return ran

  for index, ran in enumerate(run_replicas(replica)):
    assert ran == [(index, [float(index)] * 2)]


def test_step_closures_queued_by_a_replicas_backward_run_at_its_step():

  def replica(index):
    seen = []
    x = torch.zeros(2, device=xm.xla_device(), requires_grad=True)
    ClosureInBackward.apply(x, seen).sum().mul(index + 1).backward()
    xm.mark_step()
    return seen

  # Queued on PyTorch's autograd thread of the replica's device, run at its step.
  for index, seen in enumerate(run_replicas(replica)):
    assert seen == [('queued', False), ('ran', [float(index + 1)] * 2)]


def test_graphs_without_collectives_may_differ_between_replicas():

  def replica(index):
    x = torch.ones(index + 1, device=xm.xla_device())
    if xm.is_master_ordinal():
      x = x * 5
    xm.mark_step()
    return x.cpu().tolist()

  assert run_replicas(replica) == [[5.0], [1.0, 1.0], [1.0] * 3, [1.0] * 4]


def test_collective_outside_running_replicas_is_a_clean_error():
  """A graph with collectives on a device of no running replication (after its
  replicas ended) raises; the process lives on."""
  kept = {}

  def replica(index):
    kept[index] = xm.all_reduce(xm.REDUCE_SUM, torch.ones(2, device=xm.xla_device()))

  run_replicas(replica)
  with pytest.raises(RuntimeError, match='is not a replica of a running replication'):
    kept[1].cpu()
  assert (torch.ones(2, device='xla:1') * 3).cpu().tolist() == [3.0, 3.0]


def test_replicas_on_a_subset_of_devices_in_any_order():
  """DataParallel-style replicas on xla:3 and xla:1: the executable is compiled with
  that device assignment."""
  from torch_xla.distributed._replica_threads import ReplicaThreads

  def replica(index):
    x = torch.full((2,), float(index + 1), device=xm.xla_device())
    g = xm.all_gather(x, 0)
    xm.mark_step()
    return xm.xla_device().index, g.cpu().tolist()

  results = ReplicaThreads([3, 1], replica).start().join(RUN_TIMEOUT)
  assert results == [(3, [1.0, 1.0, 2.0, 2.0]), (1, [1.0, 1.0, 2.0, 2.0])]


def test_reading_a_collective_result_syncs_it_with_the_other_replicas():
  """.item(), .cpu() and .tolist() of a pending collective result run its graph
  replicated (each replica waits with the GIL released while the others trace)."""

  def replica(index):
    x = torch.ones(3, device=xm.xla_device()) * (index + 1)
    total = xm.all_reduce(xm.REDUCE_SUM, x)
    biggest = xm.all_reduce(xm.REDUCE_MAX, x)
    return total.sum().item(), total.cpu().tolist(), biggest.tolist()

  assert run_replicas(replica) == [(30.0, [10.0] * 3, [4.0] * 3)] * REPLICAS


SKEWED_REPLICAS = '''
import time
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp

def replica(index, waits):
  device = xm.xla_device()
  x = torch.ones(3, device=device)
  xm.mark_step()
  # Compiles the collective's graph on both replicas first: replica 1 then reaches the
  # measured collective at once instead of after a compile, which on a loaded machine
  # took most of the skew below.
  xm.all_reduce(xm.REDUCE_SUM, x)
  xm.mark_step()
  xm.wait_device_ops()
  if index == 0:  # a graph of its own, launched asynchronously, still running below
    # (about 5 s alone; replica 1 must still wait more than 1 s)
    a = torch.randn(2048, 2048, device=device)
    for _ in range(64):
      a = (a @ a).tanh()
    x = x + a[0, :3] * 0
    xm.mark_step()
  start = time.monotonic()
  y = xm.all_reduce(xm.REDUCE_SUM, x)
  xm.mark_step()
  result = y.cpu().tolist()  # the launch is asynchronous: its result shows the wait
  waits[index] = time.monotonic() - start
  assert result == [2.0] * 3

waits = {}
xmp.spawn(replica, args=(waits,), nprocs=2)
print('replica 1 waited', waits[1])
'''


def test_a_replica_busy_with_a_graph_of_its_own_does_not_end_the_process():
  """XLA ends the process when a replica's collective waits for another longer than its
  timeout (here 1 s). Replica 0's device still runs a longer graph of its own when the
  replicas meet; the replicated launch starts every replica together, so nothing ends."""
  import subprocess
  import sys
  env = dict(os.environ, CPU_NUM_DEVICES='2',
             XLA_FLAGS='--xla_cpu_collective_call_terminate_timeout_seconds=1')
  done = subprocess.run([sys.executable, '-c', SKEWED_REPLICAS], env=env, capture_output=True, text=True,
                        timeout=RUN_TIMEOUT)
  assert done.returncode == 0, done.stderr[-2000:]
  waited = float(done.stdout.split('replica 1 waited')[1])
  assert waited > 1.0, waited  # the skew outlasted XLA's timeout
