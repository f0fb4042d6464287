"""The 'xla' backend of torch.distributed: its collectives on XLA tensors are XLA
collectives, inside the step's graph.

  import torch_xla.distributed.xla_backend  # registers the backend and xla://
  dist.init_process_group('xla', init_method='xla://')

`xla://` takes the rank and world size from the runtime: the calling replica's global
ordinal among all replicas of all processes (one replica per process unless the
process runs xmp.spawn). torch.nn.parallel.DistributedDataParallel over an XLA model
trains with it.

Every replica runs the same graph, so every replica takes part in each collective. A
subgroup (dist.new_group(ranks)) is therefore one group of a partition of the world,
its `_mesh`, which the collectives use as their replica groups: the whole world; with
one rank, every rank alone; with pg_options={'xla_pg_options': {'spmd': True}}, the
partition that the given ranks are a slice of (contiguous blocks, or ranks a stride
apart); with {'xla_pg_options': {'mesh': [[...], ...]}}, that partition.
"""

import datetime
import logging

import torch
import torch.distributed as dist

from torch_xla.core import _processes
from torch_xla.core import _replica
from torch_xla.core import xla_model as xm

__all__ = ['ProcessGroupXla']

_REDUCE_TYPES = {
    dist.ReduceOp.SUM: xm.REDUCE_SUM,
    dist.ReduceOp.PRODUCT: xm.REDUCE_MUL,
    dist.ReduceOp.MIN: xm.REDUCE_MIN,
    dist.ReduceOp.MAX: xm.REDUCE_MAX,
    dist.ReduceOp.BAND: xm.REDUCE_AND,
    dist.ReduceOp.BOR: xm.REDUCE_OR,
}


def _done(result):
  """A Work that is complete: the XLA collective is already part of the graph."""
  future = torch.futures.Future()
  future.set_result(result)
  return torch._C._distributed_c10d._create_work_from_future(future)


def _reduce_type(op):
  for key, name in _REDUCE_TYPES.items():
    if op == key:
      return name
  raise ValueError(f'the xla backend does not reduce with {op}')


class ProcessGroupXla(dist.ProcessGroup):
  """torch.distributed's collectives as XLA collectives over every replica."""

  def __init__(self, store, rank, size, timeout):
    super().__init__(rank, size)
    self._store = store
    self._timeout = timeout
    # The replica groups of this group's collectives; [] is the whole world.
    self._mesh = []

  def getBackendName(self):
    return 'xla'

  def _check_world(self, what):
    info = _replica.get()
    world = 1 if info is None else info.world_size
    if self._mesh:
      sizes = {len(g) for g in self._mesh}
      if len(sizes) != 1 or sorted(r for g in self._mesh for r in g) != list(range(world)):
        raise RuntimeError(
            f'{what}: the replica groups of this xla group, {self._mesh}, are not a '
            f'partition of the {world} running replicas into groups of one size: every '
            'replica runs the collective, so each must be in exactly one group '
            "(pass pg_options={'xla_pg_options': {'spmd': True}} to dist.new_group)")
    elif self.size() != world:
      raise RuntimeError(f'{what}: this xla group has {self.size()} ranks, but '
                         f'{world} replicas run')

  def _groups(self):
    return self._mesh or None

  def _alone(self):
    """A group of one rank: each collective is the identity on its data, run locally,
    whatever the other replicas do."""
    return self.size() == 1

  def allreduce(self, tensors, opts):
    if self._alone():
      return _done(tensors)
    self._check_world('allreduce')
    xm.all_reduce(_reduce_type(opts.reduceOp), tensors, groups=self._groups())
    return _done(tensors)

  def allgather(self, output_tensors_lists, input_tensors, opts=None):
    if self._alone():
      with torch.no_grad():
        for outputs, value in zip(output_tensors_lists, input_tensors):
          outputs[0].copy_(value)
      return _done(output_tensors_lists)
    self._check_world('allgather')
    for outputs, value in zip(output_tensors_lists, input_tensors):
      gathered = xm.all_gather(value.unsqueeze(0), dim=0, groups=self._groups())
      with torch.no_grad():
        for rank, output in enumerate(outputs):
          output.copy_(gathered[rank])
    return _done(output_tensors_lists)

  def _allgather_base(self, output, input, opts=None):
    if self._alone():
      with torch.no_grad():
        output.copy_(input)
      return _done([output])
    self._check_world('allgather')
    xm.all_gather(input, dim=0, output=output, groups=self._groups())
    return _done([output])

  def all_gather_single(self, output, input, opts=None):
    return self._allgather_base(output, input, opts)

  def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
    for output, value in zip(outputs, inputs):
      self._allgather_base(output, value)
    return _done(outputs)

  def allgather_coalesced(self, output_tensors_lists, input_tensors, opts=None):
    return self.allgather(output_tensors_lists, input_tensors, opts)

  def broadcast(self, tensors, opts):
    if self._alone():
      return _done(tensors)
    self._check_world('broadcast')
    root = opts.rootRank
    mine = 1 if self.rank() == root else 0
    with torch.no_grad():
      for t in tensors:
        # The root's value, as the sum of it and everyone else's zeros.
        masked = t * mine if t.dtype != torch.bool else t & bool(mine)
        reduce_type = xm.REDUCE_OR if t.dtype == torch.bool else xm.REDUCE_SUM
        t.copy_(xm.all_reduce(reduce_type, masked, groups=self._groups()))
    return _done(tensors)

  def reduce_scatter(self, output_tensors, input_tensors_lists, opts):
    if self._alone():
      with torch.no_grad():
        for output, inputs in zip(output_tensors, input_tensors_lists):
          output.copy_(inputs[0])
      return _done(output_tensors)
    self._check_world('reduce_scatter')
    reduce_type = _reduce_type(opts.reduceOp)
    for output, inputs in zip(output_tensors, input_tensors_lists):
      stacked = torch.cat([t.unsqueeze(0) for t in inputs])
      part = xm.reduce_scatter(reduce_type, stacked, 1.0, 0, self.size(),
                               groups=self._groups())
      with torch.no_grad():
        output.copy_(part.squeeze(0))
    return _done(output_tensors)

  def _reduce_scatter_base(self, output, input, opts):
    if self._alone():
      with torch.no_grad():
        output.copy_(input.reshape(output.shape))
      return _done([output])
    self._check_world('reduce_scatter')
    xm.reduce_scatter(_reduce_type(opts.reduceOp), input, 1.0, 0, self.size(), output=output,
                      groups=self._groups())
    return _done([output])

  def reduce_scatter_single(self, output, input, opts):
    return self._reduce_scatter_base(output, input, opts)

  def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts):
    for output, value in zip(outputs, inputs):
      self._reduce_scatter_base(output, value, opts)
    return _done(outputs)

  def alltoall(self, output_tensor_list, input_tensor_list, opts=None):
    if self._alone():
      with torch.no_grad():
        output_tensor_list[0].copy_(input_tensor_list[0])
      return _done(output_tensor_list)
    self._check_world('alltoall')
    stacked = torch.cat([t.unsqueeze(0) for t in input_tensor_list])
    exchanged = xm.all_to_all(stacked, 0, 0, self.size(), groups=self._groups())
    with torch.no_grad():
      for rank, output in enumerate(output_tensor_list):
        output.copy_(exchanged[rank])
    return _done(output_tensor_list)

  def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
    if self._alone():
      with torch.no_grad():
        output.copy_(input)
      return _done([output])
    self._check_world('alltoall')
    if output_split_sizes or input_split_sizes:
      raise ValueError('the xla backend exchanges equal splits only: every split size '
                       'of all_to_all_single must be the same (pass none)')
    with torch.no_grad():
      output.copy_(xm.all_to_all(input, 0, 0, self.size(), groups=self._groups()))
    return _done([output])

  def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts=None):
    return self.alltoall_base(output, input, output_split_sizes, input_split_sizes, opts)

  def barrier(self, opts=None):
    # Device work first, then every replica meets on the host.
    xm.mark_step()
    xm.rendezvous('torch_xla.distributed.xla_backend.barrier')
    return _done([])

  # Collectives without an XLA form here: point-to-point traffic, which a graph that
  # every replica runs alike cannot express, and the deprecated coalesced all-reduce
  # (call all_reduce per tensor: the graph fuses them).
  def _not_implemented(name):

    def method(self, *args, **kwargs):
      raise NotImplementedError(f'the xla process group does not implement {name}')

    method.__name__ = name
    return method

  allreduce_coalesced = _not_implemented('allreduce_coalesced')
  send = _not_implemented('send')
  recv = _not_implemented('recv')
  recv_anysource = _not_implemented('recv_anysource')
  monitored_barrier = _not_implemented('monitored_barrier')
  gather = _not_implemented('gather')
  scatter = _not_implemented('scatter')
  reduce = _not_implemented('reduce')
  del _not_implemented


def _create_xla_process_group(prefix_store, rank, size, timeout):
  return ProcessGroupXla(prefix_store, rank, size, timeout)


def _infer_mesh(ranks, world_size):
  """The partition of range(world_size) of which `ranks` is one group: contiguous
  blocks of len(ranks), or len(ranks) ranks a stride apart."""
  n = len(ranks)
  if world_size % n:
    raise ValueError(f'new_group(ranks={ranks}): a group of {n} ranks does not divide '
                     f'the world of {world_size} into equal groups')
  stride = ranks[1] - ranks[0]
  if any(b - a != stride for a, b in zip(ranks, ranks[1:])):
    raise ValueError(f'new_group(ranks={ranks}): the ranks are not evenly spaced, so they '
                     'are neither a contiguous block nor a strided slice of the world')
  if stride == 1:
    if ranks[0] % n:
      raise ValueError(f'new_group(ranks={ranks}): a contiguous block of {n} ranks must '
                       f'start at a multiple of {n}')
    return [list(range(start, start + n)) for start in range(0, world_size, n)]
  groups = world_size // n
  if stride != groups:
    raise ValueError(f'new_group(ranks={ranks}): a strided slice of {n} ranks must step '
                     f'by {groups}, the number of groups, not by {stride}')
  if ranks[0] >= groups:
    raise ValueError(f'new_group(ranks={ranks}): a strided slice must start within the '
                     f'first {groups} ranks')
  return [list(range(start, world_size, groups)) for start in range(groups)]


_original_new_group = dist.new_group


def new_xla_process_group(ranks=None, timeout=None, backend=None, pg_options=None, **kwargs):
  """dist.new_group, which gives an xla group its `_mesh` (see the module's doc)."""
  xla_options = {}
  if isinstance(pg_options, dict):
    xla_options = pg_options.get('xla_pg_options', {}) or {}
  if timeout is not None:
    kwargs['timeout'] = timeout
  pg = _original_new_group(ranks=ranks, backend=backend,
                           pg_options=None if isinstance(pg_options, dict) else pg_options,
                           **kwargs)
  if not isinstance(pg, ProcessGroupXla) or ranks is None:
    return pg
  world = dist.group.WORLD
  if not isinstance(world, ProcessGroupXla):
    raise RuntimeError('an xla subgroup needs the default group to be an xla group: '
                       "dist.init_process_group('xla', init_method='xla://')")
  ranks = list(ranks)
  world_size = world.size()
  if any(not 0 <= r < world_size for r in ranks):
    raise ValueError(f'new_group(ranks={ranks}): ranks out of range for a world of '
                     f'{world_size}')
  if sorted(ranks) == list(range(world_size)):
    pg._mesh = [ranks]
  elif len(ranks) == 1:
    pg._mesh = [[r] for r in range(world_size)]
  elif xla_options.get('mesh') is not None:
    pg._mesh = [list(g) for g in xla_options['mesh']]
  elif xla_options.get('spmd'):
    pg._mesh = _infer_mesh(ranks, world_size)
  else:
    pg._mesh = [ranks]
  return pg


def _xla_rendezvous_handler(url, timeout=datetime.timedelta(seconds=300), **kwargs):
  """xla://: rank and world size of the calling replica, the launcher's store."""
  info = _replica.get()
  rank = 0 if info is None else info.ordinal
  world = 1 if info is None else info.world_size
  processes = _processes.get()
  if processes is None:
    store = dist.HashStore()  # one process: nobody to meet
  else:
    store = dist.PrefixStore(f'xla_backend/{url}', processes.store)
  yield (store, rank, world)


dist.Backend.register_backend('xla', _create_xla_process_group, devices='xla')
dist.register_rendezvous_handler('xla', _xla_rendezvous_handler)
dist.new_group = new_xla_process_group
