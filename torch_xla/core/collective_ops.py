"""The collectives as PyTorch operators: torch.ops.xla.all_reduce, all_gather,
reduce_scatter, all_to_all and collective_permute.

xm.all_reduce and the other collectives of xla_model call these operators, not the
compiled extension directly, so that torch.compile can capture them: dynamo cannot
look into a compiled-extension function (it stops with "does not know how to trace
method `__call__` of class `cython_function_or_method`"), while an operator is put in
the graph as it is. Each operator has

- a kernel for XLA tensors, which readies the replicas for the collective (the process
  layout of a torchrun run, the threads of an xm.set_replication replication) and adds
  the collective to the device's pending graph through the extension; it is what runs
  in lazy mode and when a graph compiled by torch.compile(backend='openxla') runs;
- a fake (meta) implementation that gives the output's shape without computing it,
  for dynamo and AOTAutograd's tracing.

Replica groups travel as one flat list of replica ordinals and the size of a group
(0 for one group of every replica): an operator's schema has no list of lists, and
XLA's groups all have one size.

The operators are not differentiable: their outputs never require gradients, as
xm's collectives' never did. torch_xla.core.functions has the differentiable ones.
"""

from typing import List

import torch

from torch_xla.core import _processes
from torch_xla.core import _replica
from torch_xla._extension import xlac as _xlac


def prepare_replicas(tensor, what):
  """Readies the processes of the run (torchrun) for a collective on `tensor`: the
  runtime knows the process layout, and the rails of the tensor's replicas exist.
  Fails at once where the tensor's replicas are threads that are not all running."""
  info = _replica.for_device(tensor.device.index)
  if info is not None and info.replication is not None:
    info.replication.check_threads_joined(f'xm.{what}')
  processes = _processes.get()
  if processes is not None:
    processes.ensure_rails(info.local_world_size if info is not None else 1)


def flatten_groups(groups, what):
  """(flat list of ordinals, group size) of replica groups given as lists of ordinals;
  ([], 0) for None or [] (one group of every replica)."""
  if not groups:
    return [], 0
  groups = [[int(r) for r in group] for group in groups]
  size = len(groups[0])
  if size == 0 or any(len(group) != size for group in groups):
    raise ValueError(f'xm.{what}: replica groups {groups} must all have the same, '
                     'non-zero size')
  return [r for group in groups for r in group], size


def _unflatten_groups(members, group_size):
  if group_size == 0:
    return []
  return [list(members[i:i + group_size]) for i in range(0, len(members), group_size)]


def _group_size(tensor, group_size):
  """The number of replicas in a group of the replicas of `tensor`'s device."""
  if group_size:
    return group_size
  info = _replica.for_device(tensor.device.index)
  return 1 if info is None else info.world_size


def _wrap_dim(dim, rank, what):
  if not -max(rank, 1) <= dim < max(rank, 1):
    raise IndexError(f'xm.{what}: dimension {dim} is out of range for a tensor of '
                     f'{rank} dimensions')
  return dim % max(rank, 1)


def _divided(shape, dim, count, what):
  if count <= 0 or shape[dim] % count:
    raise ValueError(f'xm.{what}: dimension {dim} of size {shape[dim]} does not split '
                     f'into {count} equal blocks')
  shape[dim] //= count
  return shape


# ------------------------------------------------------------------ all_reduce


@torch.library.custom_op('xla::all_reduce', mutates_args=(), device_types='xla')
def all_reduce(inputs: List[torch.Tensor], reduce_type: str, scale: float,
               group_members: List[int], group_size: int) -> List[torch.Tensor]:
  prepare_replicas(inputs[0], 'all_reduce')
  return list(_xlac()._xla_all_reduce(reduce_type, inputs, scale,
                                      _unflatten_groups(group_members, group_size)))


@all_reduce.register_fake
def _(inputs, reduce_type, scale, group_members, group_size):
  return [torch.empty_like(t) for t in inputs]


# ------------------------------------------------------------------ all_gather


@torch.library.custom_op('xla::all_gather', mutates_args=(), device_types='xla')
def all_gather(value: torch.Tensor, dim: int, group_members: List[int],
               group_size: int) -> torch.Tensor:
  prepare_replicas(value, 'all_gather')
  return _xlac()._xla_all_gather(value, dim, _unflatten_groups(group_members, group_size))


@all_gather.register_fake
def _(value, dim, group_members, group_size):
  shape = list(value.shape)
  shape[_wrap_dim(dim, value.dim(), 'all_gather')] *= _group_size(value, group_size)
  return value.new_empty(shape)


# -------------------------------------------------------------- reduce_scatter


@torch.library.custom_op('xla::reduce_scatter', mutates_args=(), device_types='xla')
def reduce_scatter(value: torch.Tensor, reduce_type: str, scale: float, scatter_dim: int,
                   shard_count: int, group_members: List[int],
                   group_size: int) -> torch.Tensor:
  prepare_replicas(value, 'reduce_scatter')
  return _xlac()._xla_reduce_scatter(reduce_type, value, scale, scatter_dim, shard_count,
                                     _unflatten_groups(group_members, group_size))


@reduce_scatter.register_fake
def _(value, reduce_type, scale, scatter_dim, shard_count, group_members, group_size):
  dim = _wrap_dim(scatter_dim, value.dim(), 'reduce_scatter')
  return value.new_empty(_divided(list(value.shape), dim, shard_count, 'reduce_scatter'))


# ------------------------------------------------------------------ all_to_all


@torch.library.custom_op('xla::all_to_all', mutates_args=(), device_types='xla')
def all_to_all(value: torch.Tensor, split_dimension: int, concat_dimension: int,
               split_count: int, group_members: List[int], group_size: int) -> torch.Tensor:
  prepare_replicas(value, 'all_to_all')
  return _xlac()._xla_all_to_all(value, split_dimension, concat_dimension, split_count,
                                 _unflatten_groups(group_members, group_size))


@all_to_all.register_fake
def _(value, split_dimension, concat_dimension, split_count, group_members, group_size):
  split = _wrap_dim(split_dimension, value.dim(), 'all_to_all')
  concat = _wrap_dim(concat_dimension, value.dim(), 'all_to_all')
  shape = _divided(list(value.shape), split, split_count, 'all_to_all')
  shape[concat] *= split_count
  return value.new_empty(shape)


# ---------------------------------------------------------- collective_permute


@torch.library.custom_op('xla::collective_permute', mutates_args=(), device_types='xla')
def collective_permute(value: torch.Tensor, sources: List[int],
                       targets: List[int]) -> torch.Tensor:
  prepare_replicas(value, 'collective_permute')
  return _xlac()._xla_collective_permute(value, list(zip(sources, targets)))


@collective_permute.register_fake
def _(value, sources, targets):
  return torch.empty_like(value)
