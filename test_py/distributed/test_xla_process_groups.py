"""Subgroups of torch.distributed's 'xla' backend: the replica groups (`_mesh`) that
dist.new_group gives them, the errors for ranks that do not tile the world, and the
ops the backend refuses."""
import datetime
from unittest import mock

import pytest
import torch
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend as xb

SPMD = {'xla_pg_options': {'spmd': True}}


@pytest.fixture(scope='module', autouse=True)
def world():
  if not dist.is_initialized():
    dist.init_process_group('xla', init_method='xla://')
  yield dist.group.WORLD


def _new_group(rank, size, ranks, pg_options=None):
  with mock.patch.object(dist.group.WORLD, 'rank', return_value=rank), \
       mock.patch.object(dist.group.WORLD, 'size', return_value=size), \
       mock.patch.object(dist.distributed_c10d, '_store_based_barrier'):
    return dist.new_group(ranks=ranks, pg_options=pg_options)


@pytest.mark.parametrize('rank,ranks,mesh', [
    (5, [4, 5, 6, 7], [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]),
    (11, [8, 9, 10, 11], [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]),
    (5, [1, 5, 9], [[0, 4, 8], [1, 5, 9], [2, 6, 10], [3, 7, 11]]),
    (0, [0, 4, 8], [[0, 4, 8], [1, 5, 9], [2, 6, 10], [3, 7, 11]]),
    (5, [5], [[r] for r in range(12)]),
])
def test_spmd_slices_give_the_partition(rank, ranks, mesh):
  pg = _new_group(rank, 12, ranks, SPMD)
  assert isinstance(pg, xb.ProcessGroupXla)
  assert pg.size() == len(ranks) and pg.rank() == ranks.index(rank)
  assert pg._mesh == mesh


def test_whole_world_and_explicit_mesh():
  assert _new_group(5, 12, range(12))._mesh == [list(range(12))]
  mesh = [[0, 2], [1, 3]]
  pg = _new_group(2, 4, [0, 2], {'xla_pg_options': {'mesh': mesh}})
  assert pg._mesh == mesh


@pytest.mark.parametrize('rank,ranks,why', [
    (5, [4, 5, 6], 'multiple of 3'),
    (2, [0, 1, 2, 3, 4], 'does not divide'),
    (9, [7, 8, 9, 10], 'multiple of 4'),
    (5, [1, 5], 'step by 6'),
    (5, [1, 5, 10], 'not evenly spaced'),
    (4, [4, 7, 10], 'step by 4'),
])
def test_ranks_that_do_not_tile_the_world_raise(rank, ranks, why):
  with pytest.raises(ValueError, match=why):
    _new_group(rank, 12, ranks, SPMD)


def test_out_of_range_rank_raises():
  with pytest.raises(ValueError, match='out of range'):
    _new_group(0, 4, [0, 7], SPMD)


@pytest.mark.parametrize('op', ['allreduce_coalesced', 'recv_anysource', 'monitored_barrier',
                                'send', 'recv'])
def test_ops_without_an_xla_form_raise_not_implemented(op):
  t = torch.arange(2, device=xm.xla_device())
  with pytest.raises(NotImplementedError, match=op):
    getattr(dist.group.WORLD, op)(t)


def test_creator_takes_the_prefix_store_by_name():
  creator = dist.Backend._plugins['XLA'].creator_fn
  pg = creator(prefix_store=None, rank=0, size=1, timeout=datetime.timedelta(seconds=10))
  assert isinstance(pg, xb.ProcessGroupXla) and pg._mesh == []


def test_collectives_of_a_one_replica_world_keep_values():
  t = torch.arange(4, dtype=torch.float32, device=xm.xla_device())
  dist.all_reduce(t)
  dist.broadcast(t, 0)
  outputs = [torch.zeros(4, device=xm.xla_device())]
  dist.all_gather(outputs, t)
  assert torch.equal(t.cpu(), torch.arange(4, dtype=torch.float32))
  assert torch.equal(outputs[0].cpu(), torch.arange(4, dtype=torch.float32))


def test_a_mesh_that_is_not_a_partition_of_the_replicas_is_a_clear_error():
  # A group of two where one replica runs: its mesh names a replica that does not exist.
  pg = _new_group(0, 2, [0, 1])
  assert pg._mesh == [[0, 1]]
  with pytest.raises(RuntimeError, match='not a partition'):
    pg.allreduce([torch.ones(2, device=xm.xla_device())], dist.AllreduceOptions())


@pytest.mark.parametrize('rank', [0, 1])
def test_a_group_of_one_keeps_its_values_locally(rank):
  with mock.patch.object(dist.group.WORLD, 'rank', return_value=rank), \
       mock.patch.object(dist.group.WORLD, 'size', return_value=2), \
       mock.patch.object(dist.distributed_c10d, '_store_based_barrier'):
    group = dist.new_group(ranks=[rank])
    flags = torch.tensor([0.1, 0.2, 0.3], device=xm.xla_device())
    dist.broadcast(flags, src=rank, group=group)
    dist.all_reduce(flags, group=group)
    gathered = [torch.zeros(3, device=xm.xla_device())]
    dist.all_gather(gathered, flags, group=group)
    assert dist.get_world_size(group=group) == 1
  torch.testing.assert_close(flags.cpu(), torch.tensor([0.1, 0.2, 0.3]))
  torch.testing.assert_close(gathered[0].cpu(), torch.tensor([0.1, 0.2, 0.3]))
