"""Several processes, as torchrun launches them on this host: 2 processes x 2 CPU
devices (4 replicas) for the collectives, the host rendezvous and data-parallel
training; 2 x 1 for torch.distributed's 'xla' backend and DistributedDataParallel; and
a rank that dies or raises, which every other process must name as it stops."""

import os

import pytest
import torch

from testing import process_testing as pt
from testing.data_parallel_testing import assert_same_weights, global_batches, initial_model, sgd, train_on_one_device

LAUNCHED = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'launched')


def launched(name):
  return os.path.join(LAUNCHED, name)


def test_collectives_rendezvous_and_runtime_across_processes():
  run = pt.torchrun(launched('collectives.py'))
  assert run.returncodes == [0], run
  results = sorted(run.results, key=lambda r: r['ordinal'])
  assert [r['ordinal'] for r in results] == [0, 1, 2, 3], run
  for r in results:
    me = r['ordinal']
    assert r['failures'] == [], r['failures'][:5]
    assert (r['local'], r['world'], r['device']) == (me % 2, 4, me % 2)
    # world, global ordinal, local ordinal, local devices, global devices, process, processes
    assert r['runtime'] == [4, me, me % 2, 2, 4, me // 2, 2]
    assert r['payloads'] == [f'from {i}' for i in range(4)]
    assert r['odd'] == ([1, 3] if me % 2 else None)
    assert r['total'] == 6


def test_replicas_of_two_processes_train_like_one_device(tmp_path):
  out = tmp_path / 'weights.pt'
  run = pt.torchrun(launched('train.py'), OUT=out)
  assert run.returncodes == [0], run
  expected = train_on_one_device(initial_model(), global_batches(), sgd)
  assert_same_weights(torch.load(out), expected)


def test_distributed_data_parallel_with_the_xla_backend(tmp_path):
  out = tmp_path / 'weights.pt'
  run = pt.torchrun(launched('ddp.py'), devices_per_process=1, OUT=out)
  assert run.returncodes == [0], run
  results = sorted(run.results, key=lambda r: r['rank'])
  values = [torch.arange(4.0) * (r + 1) for r in range(2)]
  for r in results:
    assert r['world'] == 2
    assert r['summed'] == (values[0] + values[1]).tolist()
    assert r['biggest'] == torch.maximum(values[0], values[1]).tolist()
    assert r['gathered'] == [v.tolist() for v in values]
    assert r['single'] == torch.cat(values).tolist()
    assert r['broadcast'] == values[1].tolist()
    summed = values[0] + values[1]
    assert r['scattered'] == summed[2 * r['rank']:2 * r['rank'] + 2].tolist()
    assert r['exchanged'] == torch.cat([v[2 * r['rank']:2 * r['rank'] + 2] for v in values]).tolist()
  expected = train_on_one_device(initial_model(), global_batches(), sgd)
  assert_same_weights(torch.load(out), expected)


def test_several_exchanges_in_one_graph_meet_in_order():
  """XLA runs independent operations concurrently; the exchanges of one graph must still
  reach every process in the same order (out of order, gloo's peers read messages of
  the wrong size and abort the process)."""
  run = pt.torchrun(launched('exchanges.py'), devices_per_process=1)
  assert run.returncodes == [0], run
  assert sorted(r['ordinal'] for r in run.results) == [0, 1], run
  for r in run.results:
    # Replica p gives p + k + step for the k-th tensor: the sum over both is 1 + 2 (k + step).
    assert r['firsts'] == [[1.0 + 2 * (k + step) for k in range(6)] for step in range(8)], r


def test_processes_exit_cleanly_while_their_heartbeat_calls_the_store():
  """The heartbeat thread is stopped at exit: a daemon thread that returned from the
  store's C++ call while the interpreter finalized aborted the process."""
  run = pt.torchrun(launched('beating.py'), devices_per_process=1)
  assert run.returncodes == [0], run
  assert sorted((r['ordinal'], r['total']) for r in run.results) == [(0, [2.0] * 4), (1, [2.0] * 4)], run


@pytest.mark.parametrize('fault', ['kill', 'raise'])
def test_a_lost_rank_is_named_by_the_others(fault, tmp_path):
  """Without a launcher watching (as across hosts): rank 0 stops within 60 s with an
  error naming rank 1, and its checkpoint at the target path is whole."""
  out = tmp_path / 'checkpoint.pt'
  run = pt.by_hand(launched('faults.py'), FAULT=fault, OUT=out, timeout=120)
  assert run.returncodes[0] != 0 and run.returncodes[1] != 0, run
  rank0 = [r for r in run.results if r['rank'] == 0]
  assert rank0 and rank0[0]['error'] is not None, run
  assert rank0[0]['seconds'] < 60, rank0
  expected = 'rank 1 is lost: it stopped answering' if fault == 'kill' else \
      'rank 1 is lost: it failed (replica 0 (xla:0) failed: ValueError: rank 1 gives up)'
  assert expected in rank0[0]['error'], rank0[0]['error']
  assert torch.load(out)['step'] >= 0  # a whole checkpoint, never a partial one
  assert not [f for f in os.listdir(tmp_path) if f != 'checkpoint.pt']  # no temporary left


def test_torchrun_stops_the_run_when_a_rank_dies():
  run = pt.torchrun(launched('faults.py'), FAULT='kill', OUT='/dev/null', timeout=120)
  assert run.returncodes != [0]
  assert run.seconds < 60, run
  assert 'rank      : 1' in run.output and 'Signal 9 (SIGKILL)' in run.output, run


def test_processes_running_different_replica_counts_is_an_error():
  run = pt.torchrun(launched('mismatch.py'))
  assert len(run.results) == 2, run
  for r in run.results:
    assert r['error'] == 'every process must run the same number of replicas; by process: [1, 2]', r
