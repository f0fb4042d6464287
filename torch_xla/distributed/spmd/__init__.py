"""torch_xla.distributed.spmd: the device mesh of SPMD sharding.

The mesh (`Mesh`, `get_1d_mesh`, the global mesh) is here, so that libraries that
import this module (Hugging Face transformers' Trainer does, for its FSDPv2 path) load
and can describe the devices. Sharding tensors over the mesh (`mark_sharding` and the
rest of torch_xla's SPMD API) is not supported by this runtime yet: those functions
raise NotImplementedError naming themselves, rather than failing at import.

`xla_patched_nn_linear_forward(m, input)` is the forward that
torch_xla.distributed.fsdp.utils.apply_xla_patch_to_nn_linear gives an nn.Linear: the
linear product by XLAPatchedLinear, whose backward reads the weight parameter itself.
"""
from collections import OrderedDict

import numpy as np

import torch_xla.runtime as xr
from torch_xla.distributed.fsdp.utils import XLAPatchedLinear

__all__ = ['Mesh', 'get_1d_mesh', 'set_global_mesh', 'get_global_mesh', 'mark_sharding', 'clear_sharding',
           'mark_sharding_with_gradients', 'enable_manual_sharding', 'disable_manual_sharding',
           'xla_patched_nn_linear_forward']


class Mesh:
  """The logical device mesh: `device_ids` (every device of the run, by global id),
  laid out row-major in an array of `mesh_shape`, its axes named by `axis_names`."""

  def __init__(self, device_ids, mesh_shape, axis_names=None):
    device_ids = np.asarray(device_ids)
    mesh_shape = tuple(int(n) for n in mesh_shape)
    devices = xr.global_runtime_device_count()
    if len(device_ids) != devices:
      raise ValueError(f'Mesh: {len(device_ids)} device ids for the {devices} devices of the run')
    if int(np.prod(mesh_shape)) != len(device_ids):
      raise ValueError(f'Mesh: {len(device_ids)} device ids do not fill a mesh of shape {mesh_shape}')
    if len(np.unique(device_ids)) != len(device_ids) or not all(0 <= d < devices for d in device_ids):
      raise ValueError(f'Mesh: device ids must be distinct, from 0 to {devices - 1}, got {device_ids.tolist()}')
    if axis_names is not None:
      axis_names = tuple(axis_names)
      if len(axis_names) != len(mesh_shape) or len(set(axis_names)) != len(axis_names):
        raise ValueError(f'Mesh: axis names {axis_names} must be distinct, one per dimension of {mesh_shape}')
    self.device_ids = device_ids
    self.mesh_shape = mesh_shape
    self.axis_names = axis_names

  def size(self):
    return int(np.prod(self.mesh_shape))

  def shape(self):
    names = self.axis_names if self.axis_names is not None else range(len(self.mesh_shape))
    return OrderedDict(zip(names, self.mesh_shape))

  def get_logical_mesh(self):
    return self.device_ids.reshape(self.mesh_shape)

  def get_axis_name_idx(self, name):
    if self.axis_names is None or name not in self.axis_names:
      return None
    return self.axis_names.index(name)

  def __repr__(self):
    return f'Mesh(device_ids={self.device_ids.tolist()}, mesh_shape={self.mesh_shape}, axis_names={self.axis_names})'


def get_1d_mesh(axis_name=None):
  """A mesh of every device of the run along one axis."""
  devices = xr.global_runtime_device_count()
  return Mesh(np.arange(devices), (devices,), None if axis_name is None else (axis_name,))


_global_mesh = None


def set_global_mesh(mesh):
  global _global_mesh
  _global_mesh = mesh


def get_global_mesh():
  return _global_mesh


def _unsupported(name):

  def function(*args, **kwargs):
    raise NotImplementedError(f'torch_xla.distributed.spmd.{name}: SPMD sharding is not supported by this '
                              'runtime yet; replicate with xmp.spawn or torchrun instead')

  function.__name__ = name
  function.__doc__ = f'Not supported yet: raises NotImplementedError.'
  return function


mark_sharding = _unsupported('mark_sharding')
mark_sharding_with_gradients = _unsupported('mark_sharding_with_gradients')
clear_sharding = _unsupported('clear_sharding')
enable_manual_sharding = _unsupported('enable_manual_sharding')
disable_manual_sharding = _unsupported('disable_manual_sharding')


def xla_patched_nn_linear_forward(m, input):
  """The forward of the nn.Linear `m` on `input` through XLAPatchedLinear (for
  apply_xla_patch_to_nn_linear): the same values and gradients as m(input)."""
  return XLAPatchedLinear.apply(input, m.weight, m.bias)
