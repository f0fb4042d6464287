"""FSDPv2: fully sharded data parallelism by SPMD sharding.

`SpmdFullyShardedDataParallel(module, mesh=...)` splits each parameter of the module
along one dimension over the mesh's 'fsdp' axis (mark_sharding), and the forward's
output along its batch dimension, so that XLA's partitioner runs the step as sharded
data parallelism: each device holds 1/N of every parameter, of its gradient and of the
optimizer state made from them, and gathers a weight only while it is used. The script
stays a one-device script (SPMD mode: torch_xla.runtime.use_spmd()).
"""
import warnings
from typing import Any, Callable, Optional

import torch
import torch.nn as nn

import torch_xla
import torch_xla.distributed.spmd as spmd
from torch_xla.distributed.fsdp.wrap import recursive_wrap

__all__ = ['SpmdFullyShardedDataParallel']


def _partition_spec(tensor, extra_data_axis=None, shard_maximal=False):
  """One dimension of `tensor` on the 'fsdp' axis (the largest with shard_maximal, else
  the first), the others whole; ('extra', 'fsdp') on it with an extra data axis."""
  spec = [None] * tensor.dim()
  if not spec:
    return ()
  index = tensor.shape.index(max(tensor.shape)) if shard_maximal else 0
  spec[index] = (extra_data_axis, 'fsdp') if extra_data_axis else 'fsdp'
  return tuple(spec)


class SpmdFullyShardedDataParallel(nn.Module):
  """Wraps `module` for sharded data parallel training over `mesh` (default: the global
  mesh), which must have an axis named 'fsdp'.

  shard_output(output, mesh): lays out the forward's output (default: the output, or the
  first element of a tuple output, split on its first dimension over 'fsdp').
  auto_wrap_policy / auto_wrapper_callable: wrap submodules first (see
  torch_xla.distributed.fsdp.wrap). extra_data_axis: another mesh axis the batch is split
  over besides 'fsdp'.
  """

  def __init__(self,
               module: nn.Module,
               *,
               mesh: Optional[spmd.Mesh] = None,
               shard_output: Optional[Callable] = None,
               auto_wrap_policy: Optional[Callable] = None,
               auto_wrapper_callable: Optional[Callable] = None,
               extra_data_axis: Optional[str] = None):
    if isinstance(module, SpmdFullyShardedDataParallel):
      raise RuntimeError('SpmdFullyShardedDataParallel: the module is wrapped already; wrap inner modules '
                         'before the outer one')
    forward = getattr(type(module), 'forward', None)
    if forward is None or forward is nn.Module.forward:
      raise RuntimeError(f'SpmdFullyShardedDataParallel: {type(module).__name__} defines no forward method '
                         '(do not wrap nn.ModuleList or nn.ModuleDict)')
    mesh = mesh if mesh is not None else spmd.get_global_mesh()
    if mesh is None:
      raise ValueError('SpmdFullyShardedDataParallel: no mesh given and no global mesh set '
                       '(torch_xla.distributed.spmd.set_global_mesh)')
    if mesh.axis_names is None or 'fsdp' not in mesh.axis_names:
      raise ValueError(f"SpmdFullyShardedDataParallel: the mesh must have an axis named 'fsdp'; its axes are "
                       f'{mesh.axis_names}')
    if extra_data_axis and extra_data_axis not in mesh.axis_names:
      raise ValueError(f'SpmdFullyShardedDataParallel: extra_data_axis {extra_data_axis!r} is not an axis of the '
                       f'mesh {mesh.axis_names}')
    super().__init__()
    if auto_wrap_policy is not None:
      recursive_wrap(module,
                     auto_wrap_policy=auto_wrap_policy,
                     wrapper_cls=auto_wrapper_callable or SpmdFullyShardedDataParallel,
                     ignored_modules=set(),
                     ignored_params=set(),
                     only_wrap_children=True,
                     mesh=mesh,
                     shard_output=shard_output)
    self._orig_module = module.to(torch_xla.device())
    self._mesh = mesh
    for param in module.parameters():
      # Parameters of wrapped submodules are laid out already.
      if torch_xla._XLAC._get_xla_sharding_spec(param) == '':
        spmd.mark_sharding(param, mesh, _partition_spec(param, shard_maximal=True))
    spmd.apply_backward_optimization_barrier(module)
    if shard_output is None:

      def shard_output(output, mesh):
        first = output
        if isinstance(output, tuple):
          first = output[0]
          warnings.warn('SpmdFullyShardedDataParallel: the output is a tuple; only its first element is '
                        'sharded (give shard_output to lay out the others)')
        if not isinstance(first, torch.Tensor):
          raise RuntimeError(f'SpmdFullyShardedDataParallel: cannot shard an output of type {type(output).__name__}; '
                             'give a shard_output callable')
        spmd.mark_sharding(first, mesh, _partition_spec(first, extra_data_axis))

    self._shard_output = shard_output

  @property
  def module(self) -> nn.Module:
    """The wrapped module, as DDP has it."""
    return self._orig_module

  def forward(self, *args: Any, **kwargs: Any):
    output = self.module(*args, **kwargs)
    self._shard_output(output, self._mesh)
    return output

  def __getattr__(self, name: str):
    # Attributes of the wrapped module (config, generate, ...) through the wrapper.
    try:
      return super().__getattr__(name)
    except AttributeError:
      return getattr(self._orig_module, name)

  def __getitem__(self, key):
    return self._orig_module.__getitem__(key)
