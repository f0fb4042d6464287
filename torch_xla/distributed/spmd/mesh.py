"""The logical device mesh of SPMD sharding, and the process's global mesh.

A mesh lays the devices of the run out as an n-dimensional array whose axes a partition
spec refers to (by index or by name). Device ids are the runtime's global ordinals; the
mesh must hold every device of the run, once, as XLA's SPMD partitioner runs one program
over all of them.
"""
import ast
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
  dcn_mesh_shape, axis by axis. This runtime sees the devices of one host as one slice,
  so dcn_mesh_shape must be all ones (the default) and the devices are laid out in
  ordinal order."""

  def __init__(self, ici_mesh_shape: Sequence[int], dcn_mesh_shape: Optional[Sequence[int]] = None,
               axis_names: Optional[Sequence[str]] = None):
    ici_mesh_shape = tuple(int(n) for n in ici_mesh_shape)
    dcn_mesh_shape = (1,) * len(ici_mesh_shape) if dcn_mesh_shape is None else tuple(int(n) for n in dcn_mesh_shape)
    if len(dcn_mesh_shape) != len(ici_mesh_shape):
      raise ValueError(f'HybridMesh: dcn_mesh_shape {dcn_mesh_shape} and ici_mesh_shape {ici_mesh_shape} '
                       'must have the same number of axes')
    if int(np.prod(dcn_mesh_shape)) != 1:
      raise ValueError(f'HybridMesh: dcn_mesh_shape {dcn_mesh_shape} spans several slices; this runtime '
                       'runs one slice (the devices of this host): leave dcn_mesh_shape out or all ones')
    devices = xr.global_runtime_device_count()
    if int(np.prod(ici_mesh_shape)) != devices:
      raise ValueError(f'HybridMesh: ici_mesh_shape {ici_mesh_shape} holds {int(np.prod(ici_mesh_shape))} '
                       f'devices; the run has {devices}')
    self.ici_mesh_shape = ici_mesh_shape
    self.dcn_mesh_shape = dcn_mesh_shape
    mesh_shape = tuple(i * d for i, d in zip(ici_mesh_shape, dcn_mesh_shape))
    super().__init__(np.arange(devices), mesh_shape, axis_names)


_global_mesh = None


def set_global_mesh(mesh: Mesh):
  """Makes `mesh` the process's mesh: the one mark_sharding uses when given none."""
  global _global_mesh
  _global_mesh = mesh


def get_global_mesh() -> Optional[Mesh]:
  """The mesh set by set_global_mesh, or None."""
  return _global_mesh
