"""The 'xla' backend of torch.distributed: its collectives on XLA tensors are XLA
collectives, inside the step's graph.

  import torch_xla.distributed.xla_backend  # registers the backend and xla://
  dist.init_process_group('xla', init_method='xla://')

`xla://` takes the rank and world size from the runtime: the calling replica's global
ordinal among all replicas of all processes (one replica per process unless the
process runs xmp.spawn). torch.nn.parallel.DistributedDataParallel over an XLA model
trains with it. The group is the world: a subgroup (dist.new_group) of the 'xla'
backend is refused, since every replica runs the same graph and so takes part in each
collective; use xm's collectives with replica groups instead.
"""

import datetime

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

  def getBackendName(self):
    return 'xla'

  def _check_world(self, what):
    info = _replica.get()
    world = 1 if info is None else info.world_size
    if self.size() != world:
      raise RuntimeError(f'{what}: this xla group has {self.size()} ranks, but '
                         f'{world} replicas run: the xla backend works on the '
                         'world group only')

  def allreduce(self, tensors, opts):
    self._check_world('allreduce')
    xm.all_reduce(_reduce_type(opts.reduceOp), tensors)
    return _done(tensors)

  def allreduce_coalesced(self, tensors, opts):
    return self.allreduce(tensors, opts)

  def allgather(self, output_tensors_lists, input_tensors, opts=None):
    self._check_world('allgather')
    for outputs, value in zip(output_tensors_lists, input_tensors):
      gathered = xm.all_gather(value.unsqueeze(0), dim=0)
      with torch.no_grad():
        for rank, output in enumerate(outputs):
          output.copy_(gathered[rank])
    return _done(output_tensors_lists)

  def _allgather_base(self, output, input, opts=None):
    self._check_world('allgather')
    xm.all_gather(input, dim=0, output=output)
    return _done([output])

  def all_gather_single(self, output, input, opts=None):
    return self._allgather_base(output, input, opts)

  def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
    for output, value in zip(outputs, inputs):
      self._allgather_base(output, value)
    return _done(outputs)

  def broadcast(self, tensors, opts):
    self._check_world('broadcast')
    root = opts.rootRank
    mine = 1 if xm.get_ordinal() == root else 0
    with torch.no_grad():
      for t in tensors:
        # The root's value, as the sum of it and everyone else's zeros.
        masked = t * mine if t.dtype != torch.bool else t & bool(mine)
        reduce_type = xm.REDUCE_OR if t.dtype == torch.bool else xm.REDUCE_SUM
        t.copy_(xm.all_reduce(reduce_type, masked))
    return _done(tensors)

  def reduce_scatter(self, output_tensors, input_tensors_lists, opts):
    self._check_world('reduce_scatter')
    reduce_type = _reduce_type(opts.reduceOp)
    for output, inputs in zip(output_tensors, input_tensors_lists):
      stacked = torch.cat([t.unsqueeze(0) for t in inputs])
      part = xm.reduce_scatter(reduce_type, stacked, 1.0, 0, self.size())
      with torch.no_grad():
        output.copy_(part.squeeze(0))
    return _done(output_tensors)

  def _reduce_scatter_base(self, output, input, opts):
    self._check_world('reduce_scatter')
    xm.reduce_scatter(_reduce_type(opts.reduceOp), input, 1.0, 0, self.size(), output=output)
    return _done([output])

  def reduce_scatter_single(self, output, input, opts):
    return self._reduce_scatter_base(output, input, opts)

  def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts):
    for output, value in zip(outputs, inputs):
      self._reduce_scatter_base(output, value, opts)
    return _done(outputs)

  def alltoall(self, output_tensor_list, input_tensor_list, opts=None):
    self._check_world('alltoall')
    stacked = torch.cat([t.unsqueeze(0) for t in input_tensor_list])
    exchanged = xm.all_to_all(stacked, 0, 0, self.size())
    with torch.no_grad():
      for rank, output in enumerate(output_tensor_list):
        output.copy_(exchanged[rank])
    return _done(output_tensor_list)

  def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
    self._check_world('alltoall')
    if output_split_sizes or input_split_sizes:
      raise ValueError('the xla backend exchanges equal splits only: every split size '
                       'of all_to_all_single must be the same (pass none)')
    with torch.no_grad():
      output.copy_(xm.all_to_all(input, 0, 0, self.size()))
    return _done([output])

  def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts=None):
    return self.alltoall_base(output, input, output_split_sizes, input_split_sizes, opts)

  def barrier(self, opts=None):
    # Device work first, then every replica meets on the host.
    xm.mark_step()
    xm.rendezvous('torch_xla.distributed.xla_backend.barrier')
    return _done([])


def _create_xla_process_group(store, rank, size, timeout):
  return ProcessGroupXla(store, rank, size, timeout)


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
