"""Sharding tensors over a mesh: mark_sharding and the functions around it.

mark_sharding turns a partition spec into XLA sharding text over the mesh and hands it
to the core (`_xla_mark_sharding`), which annotates the tensor in place: a tensor with
device data is redistributed over the devices, a pending value carries the sharding
into its graph, where XLA's SPMD partitioner splits the computation. Everything the
core would refuse without saying why (SPMD mode off, a tensor elsewhere than the XLA
device, a mesh of another size, a spec that does not fit) is checked here first and
raised with the values involved.
"""
import ast
import dataclasses
from typing import Any, Optional, Union

import torch

import torch_xla.runtime as xr
from torch_xla._extension import xlac as _xlac
from . import hlo_sharding
from .mesh import Mesh, get_global_mesh
from .sharding import PartitionSpec
from .xla_sharded_tensor import XLAShardedTensor


def unwrap_sharded_tensor(t: Union[torch.Tensor, XLAShardedTensor]) -> torch.Tensor:
  """The XLA tensor itself: `t.global_tensor` for a wrapper, else `t`."""
  return t.global_tensor if isinstance(t, XLAShardedTensor) else t


def wrap_as_sharded_tensor(t: Union[torch.Tensor, XLAShardedTensor], mesh_shape=None,
                           partition_spec=None) -> XLAShardedTensor:
  """`t` as an XLAShardedTensor (a wrapper is kept, its mesh shape and spec updated)."""
  if not isinstance(t, XLAShardedTensor):
    return XLAShardedTensor(t, mesh_shape=mesh_shape, partition_spec=partition_spec)
  if mesh_shape is not None:
    t.mesh_shape = mesh_shape
  if partition_spec is not None:
    t.partition_spec = partition_spec
  return t


def wrap_if_sharded(x: Any) -> Any:
  """An XLAShardedTensor wrapping `x` when `x` is an XLA tensor with a sharding;
  anything else as it is."""
  if (isinstance(x, torch.Tensor) and not isinstance(x, XLAShardedTensor) and x.device.type == 'xla' and
      _xlac()._get_xla_sharding_spec(x)):
    return XLAShardedTensor(x)
  return x


def get_sharding_type(t: Union[torch.Tensor, XLAShardedTensor]) -> Optional[hlo_sharding.ShardingType]:
  """The ShardingType of an XLA tensor's sharding, None when it has none."""
  return hlo_sharding.sharding_type_from_text(_xlac()._get_xla_sharding_spec(unwrap_sharded_tensor(t)))


def _require_spmd(name):
  if not xr.is_spmd():
    raise RuntimeError(f'{name}: SPMD mode is off; call torch_xla.runtime.use_spmd() first, at the '
                       'start of the program (before XLA tensors are created)')


def _xla_tensor(t, name):
  tensor = unwrap_sharded_tensor(t)
  if not isinstance(tensor, torch.Tensor):
    raise TypeError(f'{name}: expected a torch.Tensor on the XLA device, got {type(t).__name__}')
  if tensor.device.type != 'xla':
    raise ValueError(f"{name}: the tensor is on {tensor.device}; shard a tensor on the XLA device "
                     "(t.to('xla'))")
  return tensor


def _resolve_mesh(mesh, name):
  mesh = get_global_mesh() if mesh is None else mesh
  if mesh is None:
    raise ValueError(f'{name}: no mesh given and no global mesh set (torch_xla.distributed.spmd.set_global_mesh)')
  if not isinstance(mesh, Mesh):
    raise TypeError(f'{name}: expected a torch_xla.distributed.spmd.Mesh, got {type(mesh).__name__}')
  devices = xr.global_runtime_device_count()
  if mesh.size() != devices:
    raise ValueError(f'{name}: the mesh of shape {mesh.mesh_shape} holds {mesh.size()} devices; '
                     f'SPMD runs over all {devices} devices of the run, so the mesh must hold them all')
  return mesh


def mark_sharding(t: Union[torch.Tensor, XLAShardedTensor], mesh: Optional[Mesh],
                  partition_spec: PartitionSpec) -> XLAShardedTensor:
  """Shards the XLA tensor `t` over `mesh` (the global mesh when None) as
  `partition_spec` says, in place, and returns it as an XLAShardedTensor.

  partition_spec has one entry per dimension of `t`: a mesh axis index, a mesh axis
  name, None (the dimension is not split), or a tuple of axes (the dimension is split
  over all of them, the first outermost). Mesh axes the spec leaves out replicate: the
  devices along them hold the same pieces.

  >>> torch_xla.runtime.use_spmd()
  >>> mesh = Mesh(np.arange(4), (2, 2), ('data', 'model'))
  >>> x = mark_sharding(torch.randn(8, 16, device='xla'), mesh, ('data', 'model'))
  """
  return _lay_out(t, mesh, partition_spec, 'mark_sharding', lambda x, text: _xlac()._xla_mark_sharding(x, text))


def _lay_out(t, mesh, partition_spec, name, apply):
  """The layout `partition_spec` over `mesh` (the global mesh when None) as sharding text,
  given with t's XLA tensor to `apply`; t wrapped as an XLAShardedTensor."""
  _require_spmd(name)
  tensor = _xla_tensor(t, name)
  mesh = _resolve_mesh(mesh, name)
  apply(tensor, mesh.get_op_sharding(partition_spec, tensor_rank=tensor.dim()))
  return wrap_as_sharded_tensor(t, mesh_shape=mesh.mesh_shape, partition_spec=tuple(partition_spec))


def annotate_custom_sharding(t: Union[torch.Tensor, XLAShardedTensor], mesh: Optional[Mesh],
                             partition_spec: PartitionSpec) -> XLAShardedTensor:
  """Lays `t`'s value out by `partition_spec` over `mesh` (the global mesh when None) from
  here on, as a constraint in its graph: unlike mark_sharding, data already sharded is
  not moved now (nor refused), the graph that computes `t` next lays it out anew, and
  `t` reports the new sharding at once."""
  return _lay_out(t, mesh, partition_spec, 'annotate_custom_sharding',
                  lambda x, text: _xlac()._xla_annotate_custom_sharding(x, text))


def clear_sharding(t: Union[torch.Tensor, XLAShardedTensor]) -> torch.Tensor:
  """Removes the sharding annotation of `t` (in place; the tensor is then replicated)
  and returns the XLA tensor itself (unwrapped)."""
  tensor = _xla_tensor(t, 'clear_sharding')
  _xlac()._xla_clear_sharding(tensor)
  return tensor


@torch.library.custom_op('xla::aot_mark_sharding', mutates_args=())
def _aot_mark_sharding(t: torch.Tensor, mesh: str, partition_spec: str) -> torch.Tensor:
  """A copy of `t` sharded as `partition_spec` over `mesh` (both as their str()): an op
  of its own, so that traced graphs (AOTAutograd) keep the annotation."""
  the_mesh = Mesh.from_str(mesh)
  if the_mesh is None:
    raise ValueError(f'mark_sharding_with_gradients: {mesh!r} does not describe a mesh')
  return mark_sharding(t.clone(), the_mesh, ast.literal_eval(partition_spec)).global_tensor


@_aot_mark_sharding.register_fake
def _aot_mark_sharding_fake(t, mesh, partition_spec):
  return torch.empty_like(t)


def _traced(t) -> bool:
  """Whether `t` stands for a tensor while a graph is traced (torch.compile, or
  AOTAutograd's functional tracing, as aot_function does), rather than being one."""
  from torch._subclasses.fake_tensor import FakeTensor
  from torch._subclasses.functional_tensor import FunctionalTensor
  return torch.compiler.is_compiling() or isinstance(t, (FunctionalTensor, FakeTensor))


def _sharded_copy(t, mesh, partition_spec):
  """A copy of `t` sharded as `partition_spec`: through the op xla::aot_mark_sharding
  while a graph is traced (the traced graph keeps the op), directly otherwise."""
  if _traced(t):
    return _aot_mark_sharding(t, str(mesh), str(partition_spec))
  return mark_sharding(t.clone(), mesh, partition_spec).global_tensor


class MarkShardingFunction(torch.autograd.Function):
  """Shards a copy of its input in the forward and the gradient in the backward, with
  the same spec: mark_sharding_with_gradients."""

  @staticmethod
  def forward(ctx, t: torch.Tensor, mesh: Mesh, partition_spec: PartitionSpec) -> torch.Tensor:
    ctx.mesh = mesh
    ctx.partition_spec = partition_spec
    return _sharded_copy(t, mesh, partition_spec)

  @staticmethod
  def backward(ctx, grad_output: torch.Tensor):
    return _sharded_copy(grad_output, ctx.mesh, ctx.partition_spec), None, None


def mark_sharding_with_gradients(t: Union[torch.Tensor, XLAShardedTensor], mesh: Optional[Mesh],
                                 partition_spec: PartitionSpec) -> torch.Tensor:
  """A sharded copy of `t` (not in place), whose gradient in the backward pass is
  sharded the same way: guides XLA's sharding of intermediate values and of their
  gradients. Raises the errors of mark_sharding."""
  name = 'mark_sharding_with_gradients'
  _require_spmd(name)
  tensor = _xla_tensor(t, name)
  mesh = _resolve_mesh(mesh, name)
  partition_spec = tuple(partition_spec)
  mesh.get_op_sharding(partition_spec, tensor_rank=tensor.dim())  # checks the spec before tracing
  return MarkShardingFunction.apply(tensor, mesh, partition_spec)


def _mark_manual_sharding(t: Union[torch.Tensor, XLAShardedTensor]) -> XLAShardedTensor:
  """Marks the pending value `t` manually sharded ({manual}): from here on its shape is
  each device's own piece, which XLA's partitioner leaves as written. Device data cannot
  be marked (RuntimeError): a manual value lives between _spmd_full_to_shard_shape and
  _spmd_shard_to_full_shape inside one graph."""
  name = '_mark_manual_sharding'
  _require_spmd(name)
  _xlac()._mark_manual_sharding(_xla_tensor(t, name))
  return wrap_as_sharded_tensor(t)


def _whole(pieces: torch.Tensor, text: str, full_shape) -> torch.Tensor:
  """The manual pieces put together as the global tensor of `full_shape` laid out by
  `text`. A value computed from the pieces is marked manual first; one already manual
  (the pieces themselves, or synced pieces held as data) goes as it is."""
  if _xlac()._get_xla_sharding_spec(pieces) != '{manual}':
    _xlac()._mark_manual_sharding(pieces)
  return _xlac()._spmd_shard_to_full_shape(pieces, text, full_shape, pieces.dtype)


def _pieces(whole: torch.Tensor, text: str) -> torch.Tensor:
  """Each device's piece of `whole` laid out by `text`, through a constraint on a copy
  (the caller's tensor keeps its layout)."""
  whole = whole.clone()
  _xlac()._xla_annotate_custom_sharding(whole, text)
  return _xlac()._spmd_full_to_shard_shape(whole)


class _EnterManual(torch.autograd.Function):
  """Into manual sharding; the gradient of the pieces leaves it the same way."""

  @staticmethod
  def forward(ctx, t: torch.Tensor, text: str) -> torch.Tensor:
    ctx.text, ctx.shape = text, tuple(t.shape)
    return _xlac()._spmd_full_to_shard_shape(t)

  @staticmethod
  def backward(ctx, grad: torch.Tensor):
    return _whole(grad, ctx.text, ctx.shape), None


class _LeaveManual(torch.autograd.Function):
  """Out of manual sharding; the gradient of the whole enters it the same way."""

  @staticmethod
  def forward(ctx, pieces: torch.Tensor, text: str, full_shape) -> torch.Tensor:
    ctx.text = text
    return _whole(pieces, text, full_shape)

  @staticmethod
  def backward(ctx, grad: torch.Tensor):
    return _pieces(grad, ctx.text), None, None


def enable_manual_sharding(t: Union[torch.Tensor, XLAShardedTensor], partition_spec: PartitionSpec, *,
                           mesh: Optional[Mesh] = None) -> XLAShardedTensor:
  """Shards `t` by `partition_spec` over `mesh` (the global mesh when None) and returns
  each device's shard as a manually sharded tensor: its shape is the shard's, and the
  ops on it run per device as written (no partitioning, no collectives inserted), until
  disable_manual_sharding turns the pieces back into a global tensor, in the same graph.
  Gradients flow through both (torch_xla's do not): the pieces' gradient leaves manual
  sharding as the pieces entered it.

  >>> xx = enable_manual_sharding(x, (0, 1), mesh=mesh)   # x: 8x8, mesh (1, 4): xx 8x2
  >>> y = disable_manual_sharding(xx * 2, (0, 1), x.shape, mesh=mesh)
  """
  name = 'enable_manual_sharding'
  _require_spmd(name)
  mesh = _resolve_mesh(mesh, name)
  partition_spec = tuple(partition_spec)
  t = mark_sharding(unwrap_sharded_tensor(t), mesh, partition_spec)
  tensor = unwrap_sharded_tensor(t)
  shard = _EnterManual.apply(tensor, _xlac()._get_xla_sharding_spec(tensor))
  return wrap_as_sharded_tensor(shard, mesh_shape=mesh.mesh_shape, partition_spec=partition_spec)


def disable_manual_sharding(t: Union[torch.Tensor, XLAShardedTensor], partition_spec: PartitionSpec,
                            full_shape: torch.Size, *, mesh: Optional[Mesh] = None) -> XLAShardedTensor:
  """The per-device pieces of the manually sharded value `t` put together as the global
  tensor of `full_shape`, sharded by `partition_spec` over `mesh` (the global mesh when
  None). Each piece must have the shard shape of that sharding (RuntimeError naming the
  shapes otherwise). The gradient of the result enters manual sharding the same way."""
  name = 'disable_manual_sharding'
  _require_spmd(name)
  mesh = _resolve_mesh(mesh, name)
  partition_spec = tuple(partition_spec)
  tensor = _xla_tensor(t, name)
  full_shape = tuple(int(d) for d in full_shape)
  text = mesh.get_op_sharding(partition_spec, tensor_rank=len(full_shape))
  full = _LeaveManual.apply(tensor, text, full_shape)
  return wrap_as_sharded_tensor(full, mesh_shape=mesh.mesh_shape, partition_spec=partition_spec)


@dataclasses.dataclass
class ShardingSpec:
  """A mesh and a partition spec to apply to tensors later (torch_xla's input sharding
  of data loaders). `minibatch` (each process loads its part of the batch) matters with
  several processes only, which SPMD here does not run."""
  mesh: Mesh
  partition_spec: PartitionSpec
  minibatch: Optional[bool] = False

  def can_apply(self, t: torch.Tensor) -> bool:
    """Whether the spec fits `t` (one entry per dimension)."""
    return len(t.shape) == len(self.partition_spec)

  def apply(self, t: torch.Tensor):
    """Shards `t` in place (mark_sharding). With `minibatch`, `t` is this host's part of
    the batch, which its devices split evenly (RuntimeError otherwise)."""
    if self.minibatch:
      devices = xr.addressable_runtime_device_count()
      if t.dim() == 0 or t.shape[0] % devices != 0:
        raise RuntimeError('When minibatch is configured, the per-host batch size must be divisible by local '
                           f'runtime device count. Per host input data shape = {tuple(t.shape)}, local device '
                           f'count = {devices}')
    mark_sharding(t, self.mesh, self.partition_spec)


def apply_backward_optimization_barrier(module: torch.nn.Module):
  """Keeps the module's backward apart from the rest in XLA's schedule: when it is done,
  its parameters' gradients and its input gradients pass an optimization barrier, so
  XLA cannot merge the weight gathers of every layer into one large buffer."""
  import torch_xla.core.xla_model as xm

  def barrier(m, grad_input, grad_output):
    tensors = [p.grad for p in m.parameters() if p.grad is not None]
    tensors += [g for g in grad_input if isinstance(g, torch.Tensor)]
    if tensors:
      xm.optimization_barrier_(tensors)

  module.register_full_backward_hook(barrier)
