"""The logical device mesh of SPMD sharding, and the process's global mesh.

A mesh lays the devices of the run out as an n-dimensional array whose axes a partition
spec refers to (by index or by name). Device ids are the runtime's global ordinals; the
mesh must hold every device of the run, once, as XLA's SPMD partitioner runs one program
over all of them.
"""
import ast
import itertools
from collections import OrderedDict
from typing import Optional, Sequence, Union

import numpy as np

import torch_xla.runtime as xr
from . import sharding as _sharding


class MeshError(ValueError, AssertionError):
  """A mesh that does not fit its devices or the run. A ValueError; also an
  AssertionError, the kind torch_xla raises for these checks."""


class Mesh:
  """The logical device mesh: `device_ids` (every device of the run, by global id),
  laid out row-major in an array of `mesh_shape`, its axes named by `axis_names`.

  >>> mesh = Mesh(np.arange(4), (2, 2), ('data', 'model'))
  >>> mesh.get_logical_mesh()
  array([[0, 1],
         [2, 3]])
  """

  def __init__(self, device_ids: Union[np.ndarray, Sequence[int]], mesh_shape: Sequence[int],
               axis_names: Optional[Sequence[str]] = None):
    device_ids = np.asarray(device_ids)
    mesh_shape = tuple(int(n) for n in mesh_shape)
    size = int(np.prod(mesh_shape))
    if axis_names is not None:
      axis_names = tuple(axis_names)
      if len(axis_names) != len(mesh_shape):
        raise MeshError(f'Mesh: Number of axis names ({len(axis_names)}: {axis_names}) must match mesh '
                        f'dimensions ({len(mesh_shape)}: {mesh_shape})')
      if len(set(axis_names)) != len(axis_names):
        raise MeshError(f'Mesh: Axis names must be unique, got {axis_names}')
    if len(device_ids) != size:
      raise MeshError(f'Mesh: Number of device IDs ({len(device_ids)}) must match mesh size ({size}, the '
                      f'product of the mesh shape {mesh_shape})')
    if len(np.unique(device_ids)) != len(device_ids):
      raise MeshError(f'Mesh: Device IDs must be unique, got {device_ids.tolist()}')
    if not all(0 <= d < size for d in device_ids.flatten()):
      raise MeshError(f'Mesh: Device IDs must be less than mesh size ({size}) and not negative, got '
                      f'{device_ids.tolist()}')
    devices = xr.global_runtime_device_count()
    if len(device_ids) != devices:
      raise MeshError(f'Mesh: Number of device IDs ({len(device_ids)}) must match the global number of '
                      f'devices ({devices}): SPMD runs one program over all of them')
    self.device_ids = device_ids
    self.mesh_shape = mesh_shape
    self.axis_names = axis_names
    self._shardings = {}

  def size(self) -> int:
    return int(np.prod(self.mesh_shape))

  def shape(self) -> OrderedDict:
    """Axis name (or index, without names) -> number of devices along it."""
    names = self.axis_names if self.axis_names is not None else range(len(self.mesh_shape))
    return OrderedDict(zip(names, self.mesh_shape))

  def get_logical_mesh(self) -> np.ndarray:
    return self.device_ids.reshape(self.mesh_shape)

  def get_axis_name_idx(self, name: str) -> Optional[int]:
    if self.axis_names is None or name not in self.axis_names:
      return None
    return self.axis_names.index(name)

  def get_op_sharding(self, partition_spec, tensor_rank: Optional[int] = None) -> str:
    """The XLA sharding text of `partition_spec` over this mesh (torch_xla returns an
    OpSharding object here; the core of this package takes the text). Given
    `tensor_rank`, the spec must have one entry per tensor dimension. Kept per spec, as
    large meshes make the tile assignment costly."""
    spec = tuple(tuple(p) if isinstance(p, list) else p for p in partition_spec) \
        if isinstance(partition_spec, (tuple, list)) else partition_spec
    try:
      key = (spec, tensor_rank)
      hash(key)
    except TypeError:
      key = None
    if key is not None and key in self._shardings:
      return self._shardings[key]
    text = _sharding.sharding_text(self.get_logical_mesh(), self.axis_names, spec, tensor_rank)
    if key is not None:
      self._shardings[key] = text
    # torch_xla's counter of shardings made (a spec seen before comes from the cache).
    from torch_xla._extension import xlac
    xlac()._xla_increment_counter('CreateOpSharding', 1)
    return text

  def __str__(self):
    return (f"{{'device_ids': {self.device_ids.tolist()}, 'mesh_shape': {self.mesh_shape}, "
            f"'axis_names': {self.axis_names}}}")

  @classmethod
  def from_str(cls, mesh_str: str) -> Optional['Mesh']:
    """The mesh that str(mesh) describes; None when the text is not one."""
    try:
      fields = ast.literal_eval(mesh_str.replace('Mesh', ''))
      return cls(np.array(fields['device_ids']), fields['mesh_shape'], fields['axis_names'])
    except (ValueError, SyntaxError, KeyError, TypeError):
      return None

  def __repr__(self):
    return f'Mesh(device_ids={self.device_ids.tolist()}, mesh_shape={self.mesh_shape}, axis_names={self.axis_names})'


def get_1d_mesh(axis_name: Optional[str] = None) -> Mesh:
  """A mesh of every device of the run along one axis."""
  devices = xr.global_runtime_device_count()
  return Mesh(np.arange(devices), (devices,), None if axis_name is None else (axis_name,))


class HybridMesh(Mesh):
  """torch_xla's mesh of devices joined by a fast network (ICI, within a slice) and a
  slower one (DCN, between slices): the mesh shape is ici_mesh_shape times
  dcn_mesh_shape, axis by axis. The devices' attributes say which slice each is in
  (`slice_index`) and, on TPU, where it sits in its slice's torus (`coords`): each slice's
  devices are laid out as an ici_mesh_shape mesh along the torus (the last mesh axis,
  the one with the most traffic, on the most physical axes), and the slices as a
  dcn_mesh_shape grid of such blocks. Without TPU coordinates a slice's devices are laid
  out in ordinal order; without slices (one host here) dcn_mesh_shape must be all ones."""

  def __init__(self, ici_mesh_shape: Sequence[int], dcn_mesh_shape: Optional[Sequence[int]] = None,
               axis_names: Optional[Sequence[str]] = None):
    ici_mesh_shape = tuple(int(n) for n in ici_mesh_shape)
    dcn_mesh_shape = (1,) * len(ici_mesh_shape) if dcn_mesh_shape is None else tuple(int(n) for n in dcn_mesh_shape)
    if len(dcn_mesh_shape) != len(ici_mesh_shape):
      raise ValueError(f'HybridMesh: dcn_mesh_shape {dcn_mesh_shape} and ici_mesh_shape {ici_mesh_shape} '
                       'must have the same number of axes')
    attributes = _by_ordinal(list(xr.global_runtime_device_attributes() or []))
    slices = int(np.prod(dcn_mesh_shape))
    multislice = bool(attributes) and 'slice_index' in attributes[0]
    if multislice and slices == 1:
      raise ValueError('HybridMesh: the devices span several slices; give dcn_mesh_shape, the grid of slices')
    if not multislice and slices > 1:
      raise ValueError(f'HybridMesh: dcn_mesh_shape {dcn_mesh_shape} spans several slices; this runtime runs one '
                       'slice (the devices of this host): leave dcn_mesh_shape out or all ones')
    devices = xr.global_runtime_device_count()
    held = int(np.prod(ici_mesh_shape)) * slices
    if held != devices:
      raise ValueError(f'HybridMesh: ici_mesh_shape {ici_mesh_shape} times dcn_mesh_shape {dcn_mesh_shape} holds '
                       f'{held} devices; the run has {devices}')
    self.ici_mesh_shape = ici_mesh_shape
    self.dcn_mesh_shape = dcn_mesh_shape
    self.device_attributes = attributes
    if multislice:
      mesh = _hybrid_device_mesh(ici_mesh_shape, dcn_mesh_shape, attributes)
    else:
      mesh = _slice_device_mesh(ici_mesh_shape, list(range(devices)), attributes)
    mesh_shape = tuple(i * d for i, d in zip(ici_mesh_shape, dcn_mesh_shape))
    super().__init__(mesh.flatten(), mesh_shape, axis_names)


def _ordinal_of(attributes) -> Optional[int]:
  """The ordinal in a device's name ('TPU:3' -> 3), None without one."""
  try:
    return int(str(attributes.get('name', '')).rsplit(':', 1)[1])
  except (IndexError, ValueError):
    return None


def _by_ordinal(attributes):
  """The devices' attributes in ordinal order (as named), when every one is named."""
  ordinals = [_ordinal_of(a) for a in attributes]
  if any(o is None for o in ordinals):
    return attributes
  return [a for _, a in sorted(zip(ordinals, attributes), key=lambda pair: pair[0])]


def _on_tpu(attributes) -> bool:
  if not attributes or 'coords' not in attributes[0]:
    return False
  import torch_xla
  import torch_xla.core.xla_model as xm
  return xm.xla_device_hw(torch_xla.device()) == 'TPU'


def _slice_device_mesh(shape, devices, attributes) -> np.ndarray:
  """The devices of one slice laid out as a mesh of `shape`: along the TPU torus where
  the devices have coordinates, else in the given order."""
  if int(np.prod(shape)) != len(devices):
    raise ValueError(f'HybridMesh: {len(devices)} devices in a slice do not fill a mesh of shape {tuple(shape)}')
  if not _on_tpu(attributes):
    return np.asarray(devices).reshape(shape)
  coords = [tuple(int(c) for c in attributes[d]['coords']) for d in devices]
  dims = tuple(max(c[axis] for c in coords) + 1 for axis in range(len(coords[0])))
  if int(np.prod(dims)) != len(devices) or len(set(coords)) != len(devices):
    raise ValueError(f'HybridMesh: the coordinates of the slice\'s devices {coords} do not fill a torus')
  physical = np.empty(dims, dtype=np.int64)
  for c, d in zip(coords, devices):
    physical[c] = d
  order = _torus_axes(physical.shape, tuple(shape))
  return physical.transpose(order).reshape(shape)


def _torus_axes(physical_shape, logical_shape):
  """The physical axes of each logical mesh axis, flattened in logical order (a transpose
  of the physical mesh). The last logical axis (the most traffic) is placed first, on as
  many physical axes as give its size, then the others on what is left."""
  free = list(physical_shape)
  assignment = [None] * len(logical_shape)
  for axis in reversed(range(len(logical_shape))):
    size = logical_shape[axis]
    if size == 1:
      assignment[axis] = ()  # takes no physical axis
      continue
    for count in range(len(free), 0, -1):
      for chosen in itertools.combinations(range(len(free)), count):
        if all(free[i] for i in chosen) and int(np.prod([free[i] for i in chosen])) == size:
          assignment[axis] = chosen
          for i in chosen:
            free[i] = 0
          break
      if assignment[axis] is not None:
        break
    if assignment[axis] is None:
      raise ValueError(f'HybridMesh: logical axis {axis} of size {size} of the mesh {tuple(logical_shape)} fits no '
                       f'set of the physical axes {tuple(physical_shape)} left')
  # Physical axes of size 1 that no logical axis took go at the end (the reshape drops them).
  used = [i for chosen in assignment for i in chosen]
  return used + [i for i in range(len(physical_shape)) if i not in used]


def _hybrid_device_mesh(ici_mesh_shape, dcn_mesh_shape, attributes) -> np.ndarray:
  """Each slice's devices as an ici_mesh_shape block, the blocks in a dcn_mesh_shape grid
  by slice index."""
  slices = {}
  for ordinal, a in enumerate(attributes):
    slices.setdefault(int(a['slice_index']), []).append(ordinal)
  groups = [slices[k] for k in sorted(slices)]
  if int(np.prod(dcn_mesh_shape)) != len(groups):
    raise ValueError(f'HybridMesh: the devices are in {len(groups)} slices; dcn_mesh_shape {tuple(dcn_mesh_shape)} '
                     f'asks for {int(np.prod(dcn_mesh_shape))}')
  blocks = np.empty(dcn_mesh_shape, dtype=object)
  for index, group in zip(np.ndindex(*dcn_mesh_shape), groups):
    blocks[index] = _slice_device_mesh(ici_mesh_shape, group, attributes)
  return np.block(blocks.tolist())


_global_mesh = None


def set_global_mesh(mesh: Mesh):
  """Makes `mesh` the process's mesh: the one mark_sharding uses when given none."""
  global _global_mesh
  _global_mesh = mesh


def get_global_mesh() -> Optional[Mesh]:
  """The mesh set by set_global_mesh, or None."""
  return _global_mesh
