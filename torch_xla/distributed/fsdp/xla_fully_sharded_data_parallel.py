"""Classic FSDP: `XlaFullyShardedDataParallel` shards a module's parameters over the
replicas of a replicated run (xmp.spawn, torchrun), each replica keeping 1/N of them.

How it works:

- At construction every parameter of the module (or, with flatten_parameters, all of
  them concatenated into one vector) is flattened, padded to a multiple of
  N * _shard_size_multiple elements and cut into N equal pieces (with
  shard_param_on_dim_0, each parameter is cut along its first dimension instead);
  replica r keeps piece r on its device as a parameter of the wrapper (the one the
  optimizer steps on), and the module's own parameters are removed (the attributes hold
  an empty tensor between uses).
- The forward all-gathers the shards into the full parameters, sets them on the module as
  plain tensors (views of the gathered vector), runs the module and, with
  reshard_after_forward, frees them again. The gather is an autograd function whose
  backward reduce-scatters the full gradient (the sum over the replicas times 1/N, the
  mean): each replica's shard receives its piece of the averaged gradient as `.grad`.
- With reshard_after_forward the backward all-gathers the parameters again rather than
  keeping them from the forward: the tensors that the module's backward reads from the
  full parameters are saved as references and gathered anew when the backward reaches
  the module (an optimization barrier with the incoming gradient keeps XLA from merging
  that gather with the forward's).

The gradients are complete after backward(): call optimizer.step() directly, not
xm.optimizer_step(), which would average them across the replicas a second time.
"""

import contextlib
import math
from typing import Any, Callable, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from torch_xla import runtime as xr
from torch_xla._extension import xlac as _xlac

from .utils import apply_xla_patch_to_nn_linear
from .wrap import recursive_wrap

__all__ = ['XlaFullyShardedDataParallel']

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
# The attribute holding the wrapped module and the separator of the shards' names, as in
# torch_xla: the keys of the wrapper's state_dict are those of torch_xla's.
_WRAPPED = '_fsdp_wrapped_module'
_SEPARATOR = '_FSDP_SHARD_SEPARATOR_'
# torch_xla keeps the wrapped module one level further down, under this name; a
# parameter that is sharded alone has it in its original name (and so in the key of its
# shard), which keeps the keys of sharded checkpoints interchangeable.
_FLATTEN_WRAPPER = '_fpw_module'


def _join(prefix, name):
  return f'{prefix}.{name}' if prefix else name


# The walks over a forward's inputs and outputs are plain recursive functions: a tensor
# kept alive a little longer (by a reference cycle waiting for the garbage collector)
# would be live at one replica's next step and not at another's, and the replicas'
# graphs would differ.
def _tensors(data, found=None):
  """The tensors nested in lists, tuples and dicts of `data`, each once."""
  found = [] if found is None else found
  if isinstance(data, torch.Tensor):
    if not any(t is data for t in found):
      found.append(data)
  elif isinstance(data, dict):
    for value in data.values():
      _tensors(value, found)
  elif isinstance(data, (list, tuple, set, frozenset)):
    for value in data:
      _tensors(value, found)
  return found


def _cast_floats(data, dtype):
  """`data` with its floating point tensors (in lists, tuples and dicts) cast to dtype."""
  if isinstance(data, torch.Tensor):
    return data.to(dtype) if data.is_floating_point() else data
  if isinstance(data, dict):
    return type(data)((k, _cast_floats(v, dtype)) for k, v in data.items())
  if isinstance(data, tuple) and hasattr(data, '_fields'):
    return type(data)(*[_cast_floats(v, dtype) for v in data])
  if isinstance(data, (list, tuple)):
    return type(data)(_cast_floats(v, dtype) for v in data)
  return data


class _SavedFullParam:
  """What the backward keeps of a full parameter saved by the module's forward: which
  one it is; the backward gathers it again."""

  __slots__ = ('group', 'index')

  def __init__(self, group, index):
    self.group = group
    self.index = index


def _pack_saved(tensor):
  saved = getattr(tensor, '_xla_fsdp_saved', None)
  return tensor if saved is None else saved


def _unpack_saved(saved):
  if isinstance(saved, _SavedFullParam):
    return saved.group.owner._backward_full_param(saved.group, saved.index)
  return saved


class _ShardGroup:
  """Parameters gathered and sharded together: all of a module's (flattened into one
  vector) or one parameter."""

  def __init__(self, owner, params, refs, orig_name, flattened, dim0):
    self.owner = owner
    self.shapes = [p.shape for p in params]
    self.numels = [p.numel() for p in params]
    # Per parameter: the (name in the wrapped module, submodule, attribute) it is set
    # as, the first one its own name, the others tied to it.
    self.refs = refs
    self.orig_name = orig_name
    self.flattened = flattened
    self.dim0 = dim0  # sharded along dimension 0 without flattening
    self.shard = None
    self.full_views = None  # the full parameters set on the module, while they are
    self.accumulated_grad = None  # the full gradient kept by no_sync()

  @property
  def orig_size(self):
    return torch.Size([sum(self.numels)]) if self.flattened else self.shapes[0]


class _GatherShard(torch.autograd.Function):
  """The full (padded) parameter from every replica's shard: all_gather forward,
  reduce_scatter of the gradient backward."""

  @staticmethod
  def forward(ctx, shard, source, group):
    ctx.group = group
    return group.owner._all_gather(source)

  @staticmethod
  def backward(ctx, grad):
    return ctx.group.owner._reduce_scatter(ctx.group, grad), None, None


class XlaFullyShardedDataParallel(nn.Module):
  """Shards `module`'s parameters over the replicas; see the module docstring.

  Usage, in each replica::

      model = XlaFullyShardedDataParallel(MyModule())
      optimizer = torch.optim.SGD(model.parameters(), lr=0.1)   # after wrapping
      loss = loss_fn(model(data), target)
      loss.backward()
      optimizer.step()          # not xm.optimizer_step(): the gradients are reduced
      xm.mark_step()

  Checkpoints: each replica saves its own shards and the metadata to consolidate them,
  ``{'model': model.state_dict(), 'shard_metadata': model.get_shard_metadata()}`` (to a
  path of its own, xm.save(..., master_only=False)); consolidate_sharded_model_checkpoints
  builds the state_dict of the unwrapped module from the files of every replica.

  Arguments (torch_xla's, in its order):
    reshard_after_forward: free the full parameters after the forward and gather them
      again in the backward (never for the outermost wrapper while
      disable_reshard_on_root, since its backward follows at once).
    flatten_parameters: shard the module's parameters as one vector (trainable and frozen
      ones apart) instead of one by one; the optimizer then sees one parameter.
    execute_sharding_on_init: mark a step after sharding (the shards are computed at
      construction either way).
    optimization_barrier_in_forward / optimization_barrier_in_backward: optimization
      barriers around the gathers, so that XLA neither merges the forward's and
      backward's gathers nor moves the module's work across them.
    sync_on_finalization (also as mark_step_on_finalization): mark a step when the
      outermost wrapper's backward is done.
    compute_dtype: dtype of the gathered parameters and of the module's floating inputs
      (the shards keep theirs); buffer_dtype: of the floating buffers (default
      compute_dtype); fp32_reduce_scatter: reduce the gradients in float32.
    sharding_groups, sharding_rank, sharding_world_size: shard within replica groups
      (each group holds one copy of the model); all three together.
    shard_param_on_dim_0: shard each parameter along its first dimension instead of
      flattening it (no effect with flatten_parameters).
    pin_layout_in_collective_ops: passed to the collectives.
    auto_wrap_policy, auto_wrapper_callable: wrap the submodules the policy chooses
      (torch_xla.distributed.fsdp.wrap) with auto_wrapper_callable(module, **options)
      (default this class), innermost first; this wrapper takes the rest.
    param_init_fn: initializes a module built on the meta device (default: the
      submodules' reset_parameters()); every replica must initialize it alike.
    _shard_size_multiple: each shard's size is a multiple of it (128, as torch_xla).
    _use_xla_patched_linear: nn.Linear layers save their weight itself for the backward
      (torch_xla.distributed.fsdp.utils.XLAPatchedLinear), which lets resharding free it.
    reduce_scatter_bucket_size_mb, coalesce_all_gather_ops, _debug_msg, _debug_print:
      accepted; the collectives of a step join one graph here anyway.
    The _debug_dummy_* options (which replace the forward or the collectives by dummies)
    are not supported.
  """

  def __init__(self,
               module: nn.Module,
               reshard_after_forward: bool = True,
               flatten_parameters: bool = False,
               execute_sharding_on_init: bool = True,
               optimization_barrier_in_forward: bool = True,
               optimization_barrier_in_backward: bool = True,
               sync_on_finalization: bool = False,
               disable_reshard_on_root: bool = True,
               compute_dtype: Optional[torch.dtype] = None,
               buffer_dtype: Optional[torch.dtype] = None,
               fp32_reduce_scatter: bool = False,
               sharding_groups: Optional[List[List[int]]] = None,
               sharding_rank: Optional[int] = None,
               sharding_world_size: Optional[int] = None,
               shard_param_on_dim_0: bool = False,
               pin_layout_in_collective_ops: bool = True,
               reduce_scatter_bucket_size_mb: Optional[int] = 0,
               coalesce_all_gather_ops: bool = False,
               auto_wrap_policy: Optional[Callable] = None,
               auto_wrapper_callable: Optional[Callable] = None,
               param_init_fn: Optional[Callable[[nn.Module], None]] = None,
               _shard_size_multiple: int = 128,
               _use_xla_patched_linear: bool = True,
               _debug_dummy_forward_pass: bool = False,
               _debug_msg: str = 'xla_fsdp',
               _debug_print: bool = False,
               _debug_dummy_all_gather_op: bool = False,
               _debug_dummy_all_reduce_op: bool = False,
               _debug_dummy_reduce_scatter_op: bool = False,
               _debug_dummy_optimization_barrier_op: bool = False,
               mark_step_on_finalization: bool = False):
    name = type(self).__name__
    if not isinstance(module, nn.Module):
      raise TypeError(f'{name}: expected a torch.nn.Module, got {type(module).__name__}')
    if isinstance(module, XlaFullyShardedDataParallel):
      raise RuntimeError(f'{name}: the module is already wrapped; to nest wrappers, wrap the '
                         'inner modules first, then the outer one')
    if getattr(type(module), 'forward', None) is nn.Module.forward:
      raise RuntimeError(f'{name}: {type(module).__name__} has no forward() (an nn.ModuleList or '
                         'nn.ModuleDict cannot be wrapped): wrap a module that is called')
    for option in ('_debug_dummy_forward_pass', '_debug_dummy_all_gather_op',
                   '_debug_dummy_all_reduce_op', '_debug_dummy_reduce_scatter_op',
                   '_debug_dummy_optimization_barrier_op'):
      if locals()[option]:
        raise NotImplementedError(f'{name}: {option}=True (replacing the computation by '
                                  'dummies for debugging) is not supported')
    for option, dtype in (('compute_dtype', compute_dtype), ('buffer_dtype', buffer_dtype)):
      if dtype is not None and dtype not in FLOAT_DTYPES:
        raise ValueError(f'{name}: {option} must be one of {list(FLOAT_DTYPES)}, got {dtype}')
    if int(_shard_size_multiple) < 1:
      raise ValueError(f'{name}: _shard_size_multiple must be positive, got {_shard_size_multiple}')
    super().__init__()
    self._set_sharding(sharding_groups, sharding_rank, sharding_world_size)

    if auto_wrap_policy is not None:
      for inner_name, inner in module.named_modules():
        if isinstance(inner, XlaFullyShardedDataParallel):
          raise ValueError(f'{name}: {inner_name} is already wrapped; with an auto_wrap_policy '
                           'no submodule may be')
      options = dict(
          reshard_after_forward=reshard_after_forward,
          flatten_parameters=flatten_parameters,
          execute_sharding_on_init=execute_sharding_on_init,
          optimization_barrier_in_forward=optimization_barrier_in_forward,
          optimization_barrier_in_backward=optimization_barrier_in_backward,
          sync_on_finalization=sync_on_finalization or mark_step_on_finalization,
          disable_reshard_on_root=disable_reshard_on_root,
          compute_dtype=compute_dtype,
          buffer_dtype=buffer_dtype,
          fp32_reduce_scatter=fp32_reduce_scatter,
          sharding_groups=sharding_groups,
          sharding_rank=sharding_rank,
          sharding_world_size=sharding_world_size,
          shard_param_on_dim_0=shard_param_on_dim_0,
          pin_layout_in_collective_ops=pin_layout_in_collective_ops,
          reduce_scatter_bucket_size_mb=reduce_scatter_bucket_size_mb,
          coalesce_all_gather_ops=coalesce_all_gather_ops,
          param_init_fn=param_init_fn,
          _shard_size_multiple=_shard_size_multiple,
          _use_xla_patched_linear=_use_xla_patched_linear,
          _debug_msg=_debug_msg,
          _debug_print=_debug_print,
      )
      recursive_wrap(module, auto_wrap_policy, auto_wrapper_callable or XlaFullyShardedDataParallel,
                     ignored_modules=set(), ignored_params=set(), only_wrap_children=True, **options)

    self.reshard_after_forward = reshard_after_forward
    self.disable_reshard_on_root = disable_reshard_on_root
    self.flatten_parameters = flatten_parameters
    self.optimization_barrier_in_forward = optimization_barrier_in_forward
    self.optimization_barrier_in_backward = optimization_barrier_in_backward
    self.sync_on_finalization = bool(sync_on_finalization or mark_step_on_finalization)
    self._cast_dtype = compute_dtype
    self.compute_dtype = compute_dtype or torch.float32
    self.buffer_dtype = buffer_dtype or compute_dtype
    self.fp32_reduce_scatter = fp32_reduce_scatter
    self.pin_layout_in_collective_ops = pin_layout_in_collective_ops
    self._shard_param_on_dim_0 = bool(shard_param_on_dim_0 and not flatten_parameters)
    # torch_xla shards in pieces of any size once shard_param_on_dim_0 is asked for.
    self._shard_size_multiple = 1 if shard_param_on_dim_0 else int(_shard_size_multiple)
    self.gradient_predivide_factor = 1.0
    self.gradient_postdivide_factor = 1.0
    self.xla_device = xm.xla_device()

    if _use_xla_patched_linear:
      module = apply_xla_patch_to_nn_linear(module)
    _materialize(module, param_init_fn)
    self._fsdp_wrapped_module = module
    self._is_root = None  # known at the first forward: no wrapper around this one
    self._require_backward_grad_sync = True
    self._resharded = True  # whether the full parameters were freed after the forward
    self._in_backward = False
    self._placeholder = torch.zeros(0, dtype=self.compute_dtype).to(self.xla_device)
    self._groups = []
    self._shard_parameters(module)
    self._cast_buffers(module)
    if execute_sharding_on_init:
      xm.mark_step()

  # ------------------------------------------------------------------ setup

  def _set_sharding(self, groups, rank, world_size):
    name = type(self).__name__
    if groups is None:
      defaults = (xr.global_ordinal(), xr.world_size())
      for option, value, default in zip(('sharding_rank', 'sharding_world_size'),
                                        (rank, world_size), defaults):
        if value is not None and value != default:
          raise ValueError(f'{name}: {option}={value} without sharding_groups; it is '
                           f'{default} for the replicas as one group')
      self.sharding_groups = None
      self.rank, self.world_size = defaults
      return
    if rank is None or world_size is None:
      raise ValueError(f'{name}: sharding_groups needs sharding_rank and sharding_world_size')
    groups = [list(g) for g in groups]
    if any(len(g) != world_size for g in groups):
      raise ValueError(f'{name}: every sharding group must have sharding_world_size={world_size} '
                       f'replicas, got {groups}')
    if not 0 <= rank < world_size:
      raise ValueError(f'{name}: sharding_rank={rank} is not in [0, {world_size})')
    self.sharding_groups = groups
    self.rank, self.world_size = int(rank), int(world_size)

  @torch.no_grad()
  def _shard_parameters(self, module):
    """Replaces the module's parameters (those not sharded by an inner wrapper) by this
    replica's shards, registered on the wrapper."""
    found = {}  # parameter -> [(name in the module, submodule, attribute)]
    for module_name, m in module.named_modules(remove_duplicate=False):
      for n, p in m._parameters.items():
        if p is not None and not getattr(p, '_is_sharded', False):
          refs = found.setdefault(p, [])
          if (m, n) not in [(r[1], r[2]) for r in refs]:
            refs.append((_join(module_name, n), m, n))
    for p in found:
      if not p.is_floating_point():
        raise TypeError(f'{type(self).__name__}: parameter {found[p][0][0]} is of dtype {p.dtype}; '
                        'only floating point parameters can be sharded')
    params = list(found)
    if self.flatten_parameters:
      sets = [s for s in ([p for p in params if p.requires_grad],
                          [p for p in params if not p.requires_grad]) if s]
      for members in sets:
        dtypes = {p.dtype for p in members}
        if len(dtypes) > 1:
          raise TypeError(f'{type(self).__name__}: flatten_parameters needs one dtype for the '
                          f'parameters flattened together, got {sorted(map(str, dtypes))}')
      specs = [(members, f'{_WRAPPED}.flat_param_{i}', True) for i, members in enumerate(sets)]
    else:
      specs = [([p], f'{_WRAPPED}.{_FLATTEN_WRAPPER}.{found[p][0][0]}', False) for p in params]

    shards_on_device = []
    for members, orig_name, flattened in specs:
      group = _ShardGroup(self, members, [found[p] for p in members], orig_name, flattened,
                          dim0=self._shard_param_on_dim_0 and not flattened and members[0].dim() > 0)
      whole = torch.cat([p.detach().reshape(-1) for p in members]) if flattened else members[0].detach()
      shard = self._local_shard(group, whole)
      if xm.is_xla_tensor(shard):
        shards_on_device.append(shard)
      shard = nn.Parameter(shard.to(self.xla_device), requires_grad=members[0].requires_grad)
      shard._is_sharded = True
      shard._orig_size = group.orig_size
      shard._orig_name = orig_name
      shard._name = f'_fsdp_shard.{orig_name}'.replace('.', _SEPARATOR)
      self.register_parameter(shard._name, shard)
      group.shard = shard
      self._groups.append(group)
      for refs in group.refs:
        for _, m, n in refs:
          m._parameters.pop(n, None)
          object.__setattr__(m, n, self._placeholder)
    if shards_on_device:
      # The shard of a parameter already on the device is a slice at this replica's
      # offset: computed now, in a graph of its own, so that no constant that differs
      # between the replicas joins the graphs of their collectives.
      _xlac()._xla_sync_tensors([g.shard for g in self._groups if xm.is_xla_tensor(g.shard)])

  def _local_shard(self, group, whole):
    if group.dim0:
      rows = whole.size(0)
      padded_rows = math.ceil(rows / self.world_size) * self.world_size
      if padded_rows != rows:
        whole = F.pad(whole, [0, 0] * (whole.dim() - 1) + [0, padded_rows - rows])
      return whole.chunk(self.world_size, 0)[self.rank].clone()
    whole = whole.reshape(-1)
    multiple = self.world_size * self._shard_size_multiple
    padded = max(math.ceil(whole.numel() / multiple), 1) * multiple
    if padded != whole.numel():
      whole = F.pad(whole, [0, padded - whole.numel()])
    size = padded // self.world_size
    return whole[self.rank * size:(self.rank + 1) * size].clone()

  @torch.no_grad()
  def _cast_buffers(self, module):
    """Moves the buffers of the modules not inside an inner wrapper to the device, the
    floating ones in buffer_dtype (their own dtype is kept for the checkpoints'
    metadata)."""
    for m in _own_modules(module):
      for n, buf in list(m._buffers.items()):
        if buf is None:
          continue
        original = buf.dtype
        if self.buffer_dtype is not None and buf.is_floating_point():
          buf = buf.to(self.buffer_dtype)
        buf = buf.to(self.xla_device)
        if buf.dtype != original:
          buf._orig_dtype = original
        m._buffers[n] = buf

  # --------------------------------------------------------------- access

  @property
  def module(self) -> nn.Module:
    """The wrapped module."""
    return self._fsdp_wrapped_module

  def __getattr__(self, name: str) -> Any:
    """Attributes not found on the wrapper are looked up on the wrapped module."""
    try:
      return super().__getattr__(name)
    except AttributeError:
      if name == _WRAPPED:
        raise
      return getattr(self.module, name)

  def __getitem__(self, key):
    """Indexes the wrapped module (an nn.Sequential, say)."""
    return self.module.__getitem__(key)

  @property
  def sharded_params(self) -> List[nn.Parameter]:
    """This wrapper's shards (those of inner wrappers are theirs)."""
    return [g.shard for g in self._groups]

  @property
  def params_with_grad(self) -> List[nn.Parameter]:
    return [p for p in self.parameters() if p.grad is not None]

  def extra_repr(self) -> str:
    return (f'world_size={self.world_size}, rank={self.rank}, compute_dtype={self.compute_dtype}, '
            f'buffer_dtype={self.buffer_dtype}, flatten_parameters={self.flatten_parameters}, '
            f'reshard_after_forward={self.reshard_after_forward}, '
            f'sharding_groups={self.sharding_groups}')

  # --------------------------------------------------------------- forward

  def _lazy_init(self):
    if self._is_root is None:
      self._is_root = True
      for m in self.modules():
        if m is not self and isinstance(m, XlaFullyShardedDataParallel) and m._is_root is None:
          m._is_root = False

  def _reshards(self):
    return self.reshard_after_forward and not (self._is_root and self.disable_reshard_on_root)

  def forward(self, *args: Any, **kwargs: Any) -> Any:
    self._lazy_init()
    if self._cast_dtype is not None and self._cast_dtype != torch.float32:
      args, kwargs = _cast_floats((args, kwargs), self._cast_dtype)
    inputs = [t for t in _tensors((args, kwargs)) if xm.is_xla_tensor(t)]
    self._rebuild_full_params(inputs if self.optimization_barrier_in_forward else [])
    grad_enabled = torch.is_grad_enabled()
    reshard = self._reshards()
    hooks = (torch.autograd.graph.saved_tensors_hooks(_pack_saved, _unpack_saved)
             if reshard and grad_enabled else contextlib.nullcontext())
    with hooks:
      outputs = self.module(*args, **kwargs)
    output_tensors = [t for t in _tensors(outputs) if xm.is_xla_tensor(t)]
    self._resharded = reshard or not grad_enabled
    if self._resharded:
      if reshard and self.optimization_barrier_in_forward and output_tensors:
        xm.optimization_barrier_(output_tensors)
      self._free_full_params()
    if grad_enabled:
      for t in output_tensors:
        if t.requires_grad:
          t.register_hook(self._pre_backward_hook)
    return outputs

  def _rebuild_full_params(self, dependencies=(), for_backward=False):
    """Gathers every group's full parameter and sets it on the module."""
    if not self._groups:
      return
    # Copies (in the compute dtype) are gathered, so that the barrier leaves the
    # parameters themselves alone.
    dtype = self._cast_dtype
    sources = [g.shard.detach().to(dtype or g.shard.dtype, copy=True) for g in self._groups]
    barrier = self.optimization_barrier_in_backward if for_backward else self.optimization_barrier_in_forward
    if barrier:
      xm.optimization_barrier_(sources + list(dependencies))
    for group, source in zip(self._groups, sources):
      full = _GatherShard.apply(group.shard, source, group)
      views = self._views(group, full)
      for index, view in enumerate(views):
        if not for_backward and self._reshards():
          # What the module's backward saves of it is gathered again (_pack_saved).
          view._xla_fsdp_saved = _SavedFullParam(group, index)
        for _, m, n in group.refs[index]:
          object.__setattr__(m, n, view)
      group.full_views = views

  def _views(self, group, full):
    if group.dim0:
      rows = group.shapes[0][0]
      return [full if full.size(0) == rows else full[:rows]]
    views, offset = [], 0
    for shape, numel in zip(group.shapes, group.numels):
      views.append(full[offset:offset + numel].view(shape))
      offset += numel
    return views

  def _free_full_params(self):
    for group in self._groups:
      for refs in group.refs:
        for _, m, n in refs:
          object.__setattr__(m, n, self._placeholder)
      group.full_views = None

  # -------------------------------------------------------------- backward

  def _pre_backward_hook(self, grad):
    """Runs when the gradient of an output arrives, before the module's backward."""
    self._start_backward(grad)

  def _start_backward(self, grad=None):
    if self._in_backward:
      return
    self._in_backward = True
    torch.autograd.Variable._execution_engine.queue_callback(self._finish_backward)
    dependencies = []
    if grad is not None and self.optimization_barrier_in_backward and xm.is_xla_tensor(grad):
      xm.optimization_barrier_([grad])
      dependencies = [grad]
    if self._resharded:
      # Gathered again for the backward, connected to the shards (a recomputation by
      # activation checkpointing reads them from the module).
      with torch.enable_grad():
        self._rebuild_full_params(dependencies, for_backward=True)

  def _backward_full_param(self, group, index):
    """The full parameter a backward node saved in the forward, gathered again."""
    self._start_backward()
    if group.full_views is None:
      with torch.enable_grad():
        self._rebuild_full_params(for_backward=True)
    return group.full_views[index]

  def _finish_backward(self):
    """At the end of the backward: frees the full parameters."""
    self._in_backward = False
    self._free_full_params()
    self._resharded = True
    if self.sync_on_finalization and self._is_root:
      xm.mark_step()

  def _all_gather(self, source):
    return xm.all_gather(source, dim=0, groups=self.sharding_groups,
                         pin_layout=self.pin_layout_in_collective_ops)

  def _reduce_scatter(self, group, grad):
    """This replica's shard of the mean over the replicas of the full gradient `grad`."""
    if not self._require_backward_grad_sync:
      group.accumulated_grad = grad if group.accumulated_grad is None else group.accumulated_grad + grad
      return None
    if group.accumulated_grad is not None:
      grad = grad + group.accumulated_grad
      group.accumulated_grad = None
    if self.fp32_reduce_scatter and grad.dtype != torch.float32:
      grad = grad.to(torch.float32)
    pre, post = self.gradient_predivide_factor, self.gradient_postdivide_factor
    if pre != 1:
      grad = grad / pre
    scale = 1.0 / self.world_size if (pre, post) == (1, 1) else 1.0
    reduced = xm.reduce_scatter(xm.REDUCE_SUM, grad, scale, 0, self.world_size,
                                groups=self.sharding_groups,
                                pin_layout=self.pin_layout_in_collective_ops)
    if post != 1:
      reduced = reduced / post
    return reduced.to(group.shard.dtype)

  def set_gradient_divide_factors(self, pre: float, post: float, recursive: bool) -> None:
    """Divides the full gradients by `pre` before the reduce-scatter sums them and the
    shards by `post` after (default: 1 and 1, which scale the sum by 1/world_size)."""
    if recursive:
      for m in self.modules():
        if m is not self and isinstance(m, XlaFullyShardedDataParallel):
          m.set_gradient_divide_factors(pre, post, False)
    self.gradient_predivide_factor = float(pre)
    self.gradient_postdivide_factor = float(post)

  @contextlib.contextmanager
  def no_sync(self):
    """Within the context the backward keeps the full gradients on each replica instead
    of reduce-scattering them; the first backward after it adds them to its own before
    the reduce-scatter (gradient accumulation without communication, in more memory)."""
    self._lazy_init()
    if not self._is_root:
      raise RuntimeError('no_sync() is for the outermost XlaFullyShardedDataParallel')
    wrappers = [m for m in self.modules() if isinstance(m, XlaFullyShardedDataParallel)]
    previous = [m._require_backward_grad_sync for m in wrappers]
    for m in wrappers:
      m._require_backward_grad_sync = False
    try:
      yield
    finally:
      for m, flag in zip(wrappers, previous):
        m._require_backward_grad_sync = flag

  # --------------------------------------------------------------- clipping

  @torch.no_grad()
  def clip_grad_norm_(self, max_norm, norm_type=2.0, groups=None) -> torch.Tensor:
    """Scales the gradients so that their norm over every replica's shards (as one
    vector) is at most max_norm, as torch.nn.utils.clip_grad_norm_ on the unsharded
    module; returns that total norm. Every replica must call it. `groups`: the replica
    groups of the norm's all_reduce (default sharding_groups)."""
    self._lazy_init()
    if not self._is_root:
      raise RuntimeError('clip_grad_norm_() is for the outermost XlaFullyShardedDataParallel')
    max_norm, norm_type = float(max_norm), float(norm_type)
    groups = self.sharding_groups if groups is None else groups
    grads = [p.grad for p in self.parameters() if p.grad is not None]
    if not grads:
      return torch.zeros((), device=self.xla_device)
    if math.isinf(norm_type):
      local = torch.stack([g.detach().abs().max().float() for g in grads]).max()
      total = xm.all_reduce(xm.REDUCE_MAX, local, groups=groups,
                            pin_layout=self.pin_layout_in_collective_ops)
    else:
      local = torch.stack([torch.linalg.vector_norm(g.detach().float(), norm_type) for g in grads])
      powered = xm.all_reduce(xm.REDUCE_SUM, (local**norm_type).sum(), groups=groups,
                              pin_layout=self.pin_layout_in_collective_ops)
      total = powered**(1.0 / norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
      g.detach().mul_(coef.to(g.dtype))
    return total

  # ------------------------------------------------------------ checkpoints

  def _wrappers(self):
    """(name in this wrapper, wrapper) of this wrapper and the inner ones."""
    return [(n, m) for n, m in self.named_modules() if isinstance(m, XlaFullyShardedDataParallel)]

  def get_shard_metadata(self):
    """What consolidate_sharded_state_dicts needs, besides every replica's
    state_dict(): each wrapper's shards (original name and size), each flattened
    vector's parameters (names, shapes, numbers of elements), the tied parameters, the
    buffers' original dtypes, and the sharding's world size and this replica's rank."""
    shard_info, flatten_info, shared_info, buffer_info = {}, {}, {}, {}
    for name, m in self._wrappers():
      shard_info[name] = {
          g.shard._name: {'_orig_size': g.orig_size, '_orig_name': g.orig_name} for g in m._groups
      }
      plain = name.replace(f'{_WRAPPED}.', '')  # the wrapper's name in the unwrapped module
      for g in m._groups:
        if g.flattened:
          flatten_info[_join(name, g.orig_name)] = ([refs[0][0] for refs in g.refs], list(g.shapes),
                                                    list(g.numels))
        for refs in g.refs:
          for alias, _, _ in refs[1:]:
            shared_info[_join(plain, alias)] = _join(plain, refs[0][0])
    for name, buf in self.named_buffers():
      if hasattr(buf, '_orig_dtype'):
        buffer_info[name] = {'_orig_dtype': buf._orig_dtype}
    return {
        'shard_info': shard_info,
        'flatten_info': flatten_info,
        'shared_info': shared_info,
        'buffer_info': buffer_info,
        'world_size': self.world_size,
        'rank': self.rank,
    }

  def get_original_names_and_sharded_parameters(self):
    """(name of the original parameter, or of the flattened vector, in the unwrapped
    module; shard) of every shard, inner wrappers' included."""
    named = []
    for name, m in self._wrappers():
      for g in m._groups:
        full = _join(name, g.orig_name)
        named.append((full.replace(f'{_WRAPPED}.', '').replace(f'{_FLATTEN_WRAPPER}.', ''), g.shard))
    return named


def _own_modules(module):
  """`module` and its submodules, except inner wrappers and what they hold."""
  found, pending = [], [module]
  while pending:
    m = pending.pop()
    if isinstance(m, XlaFullyShardedDataParallel) or any(m is f for f in found):
      continue
    found.append(m)
    pending.extend(reversed(list(m.children())))
  return found


def _on_meta(m):
  return any(t is not None and t.is_meta for t in
             list(m._parameters.values()) + list(m._buffers.values()))


def _materialize(module, param_init_fn):
  """Initializes the parameters and buffers of `module` (outside inner wrappers) that are
  on the meta device: param_init_fn(module), else each submodule's reset_parameters() on
  the CPU."""
  if not any(_on_meta(m) for m in _own_modules(module)):
    return
  if param_init_fn is not None:
    param_init_fn(module)
  else:
    for m in _own_modules(module):
      if _on_meta(m):
        m.to_empty(device='cpu', recurse=False)
        if hasattr(m, 'reset_parameters'):
          m.reset_parameters()
  left = [type(m).__name__ for m in _own_modules(module) if _on_meta(m)]
  if left:
    raise RuntimeError(f'XlaFullyShardedDataParallel: modules still on the meta device after '
                       f'initialization: {left}')
