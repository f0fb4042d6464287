"""Partition spec -> XLA sharding text.

A partition spec says, per tensor dimension, which mesh axes split it: an axis index
(int), an axis name (str), None (the dimension is whole on every device), or a tuple of
axes (the dimension split over several axes, the first one outermost). The result is the
text form of an XLA HloSharding, which the core parses:

  '{replicated}'                                    every device holds the whole tensor
  '{devices=[2,2]0,1,2,3}'                          tiles per dimension, then the device of
                                                    each tile in row-major order
  '{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}' one more trailing tile dimension whose
                                                    devices hold the same tile

The tile assignment is the mesh's logical device array transposed so that the axes the
spec uses come first (in spec order) and the unused axes last, then reshaped: each
tensor dimension takes the product of its axes' sizes, and the unused axes together form
the replication dimension. Everything here is pure Python on numpy arrays, so that specs
can be checked and tested without devices.
"""
import numbers
from typing import Optional, Sequence, Tuple, Union

import numpy as np

from torch_xla.distributed.spmd.hlo_sharding import tiled_text

PartitionSpec = Tuple[Union[Tuple[Union[int, str], ...], int, str, None], ...]

REPLICATED = '{replicated}'


def _axis_index(entry, mesh_shape, axis_names, spec):
  """The mesh axis index that one spec entry (an int or a name) refers to."""
  rank = len(mesh_shape)
  if isinstance(entry, str):
    if axis_names is None or entry not in axis_names:
      names = 'the mesh has no axis names' if axis_names is None else f'its axes are {tuple(axis_names)}'
      raise ValueError(f"partition spec {spec}: axis name '{entry}' is not an axis of the mesh "
                       f'of shape {tuple(mesh_shape)} ({names})')
    return list(axis_names).index(entry)
  if isinstance(entry, numbers.Integral) and not isinstance(entry, bool):
    if not 0 <= int(entry) < rank:
      raise ValueError(f'partition spec {spec}: axis index {entry} is out of range for the '
                       f'{rank}-dimensional mesh of shape {tuple(mesh_shape)} (0 to {rank - 1})')
    return int(entry)
  raise ValueError(f'partition spec {spec}: {entry!r} ({type(entry).__name__}) is not a mesh '
                   'axis; an entry is an axis index, an axis name, None, or a tuple of axes')


def resolve_partition_spec(mesh_shape: Sequence[int], axis_names: Optional[Sequence[str]],
                           partition_spec: PartitionSpec,
                           tensor_rank: Optional[int] = None) -> Tuple[Tuple[int, ...], ...]:
  """The spec as one tuple of mesh axis indices per tensor dimension (empty: not split).

  Raises ValueError when the spec does not fit the mesh (an unknown name, an index out
  of range, an axis used twice) or, given `tensor_rank`, the tensor (one entry per
  dimension)."""
  if not isinstance(partition_spec, (tuple, list)):
    raise ValueError(f'partition spec {partition_spec!r}: expected a tuple with one entry per '
                     'tensor dimension')
  spec = tuple(tuple(p) if isinstance(p, list) else p for p in partition_spec)
  if tensor_rank is not None and len(spec) != tensor_rank:
    raise ValueError(f'partition spec {spec} has {len(spec)} entries for a tensor of rank '
                     f'{tensor_rank}: give one entry per tensor dimension (None for a dimension '
                     'that is not split)')
  resolved = []
  seen = {}
  for dim, entry in enumerate(spec):
    if entry is None:
      resolved.append(())
      continue
    entries = entry if isinstance(entry, tuple) else (entry,)
    axes = []
    for e in entries:
      if isinstance(e, (tuple, list)):
        raise ValueError(f'partition spec {spec}: dimension {dim} has a nested tuple {entry}; '
                         'a tuple lists mesh axes')
      axis = _axis_index(e, mesh_shape, axis_names, spec)
      if axis in seen:
        label = _axis_label(axis, axis_names)
        where = (f'twice in the tuple {entry} of dimension {dim}' if seen[axis] == dim else
                 f'by dimensions {seen[axis]} and {dim}')
        raise ValueError(f'partition spec {spec}: mesh axis {label} is used {where}; a mesh '
                         'axis can split one tensor dimension, once')
      seen[axis] = dim
      axes.append(axis)
    resolved.append(tuple(axes))
  return tuple(resolved)


def _axis_label(axis, axis_names):
  return f"{axis} ('{axis_names[axis]}')" if axis_names is not None else str(axis)


def tile_assignment(logical_mesh: np.ndarray, resolved_spec) -> Tuple[np.ndarray, bool]:
  """The device array of the tiles for a resolved spec, and whether its last dimension
  is the replication dimension (the unused mesh axes, when their product exceeds 1)."""
  mesh_shape = logical_mesh.shape
  used = [axis for axes in resolved_spec for axis in axes]
  unused = [axis for axis in range(len(mesh_shape)) if axis not in used]
  tiles = [int(np.prod([mesh_shape[a] for a in axes], dtype=np.int64)) for axes in resolved_spec]
  replicas = int(np.prod([mesh_shape[a] for a in unused], dtype=np.int64))
  devices = logical_mesh.transpose(used + unused)
  if replicas > 1:
    return devices.reshape(tiles + [replicas]), True
  return devices.reshape(tiles), False


def sharding_text(logical_mesh: np.ndarray, axis_names: Optional[Sequence[str]],
                  partition_spec: PartitionSpec, tensor_rank: Optional[int] = None) -> str:
  """The XLA sharding text of `partition_spec` over the mesh whose device ids are laid
  out as `logical_mesh` (axes named `axis_names`). A spec that splits no dimension over
  more than one device (all None, a scalar, size-1 axes only) is '{replicated}'."""
  logical_mesh = np.asarray(logical_mesh)
  resolved = resolve_partition_spec(logical_mesh.shape, axis_names, partition_spec, tensor_rank)
  devices, partial = tile_assignment(logical_mesh, resolved)
  dims = devices.shape[:-1] if partial else devices.shape
  if int(np.prod(dims, dtype=np.int64)) == 1:
    return REPLICATED
  return tiled_text(devices, partial)
