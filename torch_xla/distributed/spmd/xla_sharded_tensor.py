"""XLAShardedTensor: a sharded XLA tensor seen whole, and its per-device shards.

mark_sharding annotates an XLA tensor in place and returns it wrapped in an
XLAShardedTensor. The wrapper behaves as the global (unpartitioned) tensor: every op
on it runs on the wrapped tensor, `global_tensor`, and its XLA results come back
wrapped. The device data stay split over the devices; `local_shards` copies each
device's piece to the CPU and `load_local_shards_` writes pieces back.
"""
import contextlib
import dataclasses
from typing import Iterator, List, Sequence, Tuple, Union

import torch
from torch.utils._pytree import tree_map

import torch_xla.runtime as xr
from torch_xla._extension import xlac as _xlac
from . import hlo_sharding


@dataclasses.dataclass
class XLAShard:
  """One device's piece of a sharded tensor, copied to the CPU.

  data: the piece, padded with zeros to the shard shape (the tiles' common shape, as
    the device holds it): a short or empty last tile is padded at its end.
  indices: the piece's place in the global tensor, a list of slices (one per
    dimension, step 1; without the padding), or Ellipsis when the device holds the whole
    tensor (replicated) or its own piece of a manually sharded one.
  shard_device: the device it came from, by the runtime's name ('CPU:0', 'CUDA:1').
  replica_id: the device's index among the devices holding the same piece (0 for a
    tiled tensor, the device's ordinal for a replicated one).
  """
  data: torch.Tensor
  indices: Union[type(Ellipsis), List[slice]]
  shard_device: str
  replica_id: int

  @property
  def unpadded_data(self) -> torch.Tensor:
    """The piece without its padding."""
    if self.indices is Ellipsis:
      return self.data
    return self.data[tuple(slice(0, s.stop - s.start) for s in self.indices)]

  @unpadded_data.setter
  def unpadded_data(self, t: torch.Tensor):
    if self.indices is Ellipsis:
      self.data[...] = t
    else:
      self.data[tuple(slice(0, s.stop - s.start) for s in self.indices)] = t


@contextlib.contextmanager
def no_dispatch() -> Iterator[None]:
  """Runs ops on the wrapped tensors as ops on XLA tensors, without coming back to
  __torch_dispatch__.

  The dispatcher reaches __torch_dispatch__ with every key above Python excluded,
  functionalization included; XLA tensors are functionalization wrappers, whose
  in-place ops and views need it. So it is turned back on (autograd stays off: the
  wrapper is the tensor autograd sees)."""
  include = torch._C._dispatch_tls_local_include_set()
  exclude = torch._C._dispatch_tls_local_exclude_set().remove(torch._C.DispatchKey.Functionalize)
  with torch._C._ForceDispatchKeyGuard(include, exclude):
    guard = torch._C._DisableTorchDispatch()
    try:
      yield
    finally:
      del guard


def device_ordinal(device) -> int:
  """The device ordinal of a shard's device: an int, 'CPU:3', 'xla:3' or torch.device."""
  if isinstance(device, int):
    return device
  if isinstance(device, torch.device):
    return 0 if device.index is None else device.index
  text = str(device)
  try:
    return int(text.rsplit(':', 1)[1])
  except (IndexError, ValueError):
    raise ValueError(f'shard device {device!r}: expected a device such as "CPU:0" or an ordinal') from None


def check_shards_to_load(text: str, global_shape: Sequence[int], dtype: torch.dtype,
                         datas: Sequence[torch.Tensor], ordinals: Sequence[int]):
  """Raises RuntimeError unless `datas` (on devices `ordinals`) are exactly the pieces
  that the sharding `text` gives a tensor of `global_shape`: one per device of the
  tiling, each of its tile's shape (or the padded shard shape) and the tensor's dtype.
  Returns the pieces without padding."""
  kind = hlo_sharding.sharding_type_from_text(text)
  if kind not in (hlo_sharding.ShardingType.TILED, hlo_sharding.ShardingType.PARTIAL):
    name = 'no sharding' if kind is None else kind.name
    raise RuntimeError(f'load_local_shards_: the tensor has {name} ({text!r}); shards load into a '
                       'tiled tensor only (write a replicated tensor with copy_)')
  tiled = hlo_sharding.parse_sharding(text)
  expected = sorted(set(tiled.devices))
  if sorted(ordinals) != expected:
    raise RuntimeError(f'load_local_shards_: shards for devices {list(ordinals)}; the sharding '
                       f'{text} needs one for each of the devices {expected}')
  placements = hlo_sharding.shard_replica_and_indices(text, global_shape, ordinals)
  padded = hlo_sharding.shard_shape(text, global_shape)
  unpadded = []
  for data, ordinal, (_, indices) in zip(datas, ordinals, placements):
    shape = hlo_sharding.indices_shape(indices, global_shape)
    if tuple(data.shape) not in (shape, padded):
      tile = '[' + ', '.join(f'{i.start}:{i.stop}' for i in indices) + ']'
      raise RuntimeError(f'load_local_shards_: the shard for device {ordinal} has shape '
                         f'{tuple(data.shape)}; its tile {tile} of the tensor of shape '
                         f'{tuple(global_shape)} has shape {shape} ({padded} padded)')
    if data.dtype != dtype:
      raise RuntimeError(f'load_local_shards_: the shard for device {ordinal} is {data.dtype}; '
                         f'the tensor is {dtype}')
    unpadded.append(data[tuple(slice(0, n) for n in shape)])
  return unpadded


class XLAShardedTensor(torch.Tensor):
  """A wrapper of an XLA tensor with a sharding, which behaves as the global tensor.

  `global_tensor` is the wrapped tensor (the annotation is on it, in place);
  `mesh_shape` and `partition_spec` record what mark_sharding was given (None when the
  wrapper was made otherwise).
  """

  @staticmethod
  def __new__(cls, elem: torch.Tensor, mesh_shape=None, partition_spec=None, *args, **kwargs):
    if isinstance(elem, XLAShardedTensor):
      mesh_shape = mesh_shape or elem.mesh_shape
      partition_spec = partition_spec or elem.partition_spec
      elem = elem.global_tensor
    r = torch.Tensor._make_wrapper_subclass(
        cls,
        elem.size(),
        strides=elem.stride(),
        storage_offset=elem.storage_offset(),
        dtype=elem.dtype,
        layout=elem.layout,
        device=elem.device,
        requires_grad=kwargs.get('requires_grad', False))
    r.global_tensor = elem.detach() if r.requires_grad else elem
    r.mesh_shape = mesh_shape
    r.partition_spec = partition_spec
    return r

  @property
  def sharding_spec(self) -> str:
    """The tensor's XLA sharding text ('' when it has none)."""
    return _xlac()._get_xla_sharding_spec(self.global_tensor)

  @property
  def sharding_type(self):
    """The ShardingType of the tensor's sharding, None when it has none."""
    return hlo_sharding.sharding_type_from_text(self.sharding_spec)

  @property
  def local_shards(self) -> List[XLAShard]:
    """Each device's piece of the tensor, copied to the CPU, in device order (a snapshot:
    later writes to the tensor do not change it)."""
    pieces = _xlac()._xla_local_shards(self.global_tensor)
    ordinals = [int(ordinal) for _, ordinal in pieces]
    text = self.sharding_spec
    kind = xr.device_type() or 'XLA'
    if hlo_sharding.sharding_type_from_text(text) == hlo_sharding.ShardingType.MANUAL:
      # Each device's own piece; there is no global tensor to place it in.
      return [XLAShard(data, Ellipsis, f'{kind}:{ordinal}', 0) for data, ordinal in pieces]
    global_shape = tuple(self.global_tensor.shape)
    placements = hlo_sharding.shard_replica_and_indices(text, global_shape, ordinals)
    padded = hlo_sharding.shard_shape(text, global_shape)
    shards = []
    for (data, ordinal), (replica, indices) in zip(pieces, placements):
      if indices is not Ellipsis:
        indices = [slice(i.start, i.stop, 1) for i in indices]
        if tuple(data.shape) != padded:
          whole = data.new_zeros(padded)
          whole[tuple(slice(0, n) for n in data.shape)] = data
          data = whole
      shards.append(XLAShard(data, indices, f'{kind}:{ordinal}', replica))
    return shards

  def load_local_shards_(self, shards: List[XLAShard]):
    """Replaces the tensor's device data by `shards` (as local_shards gives them, with
    new data), keeping its sharding. The tensor must be tiled and the shards must cover
    its devices with pieces of the tiles' shapes."""
    datas = [s.data for s in shards]
    ordinals = [device_ordinal(s.shard_device) for s in shards]
    datas = check_shards_to_load(self.sharding_spec, tuple(self.global_tensor.shape), self.global_tensor.dtype,
                                 datas, ordinals)
    _xlac()._xla_load_local_shards(self.global_tensor, [d.contiguous() for d in datas], ordinals)

  def __repr__(self):
    return f'XLAShardedTensor({self.global_tensor})'

  # The wrapper is seen by ops at the dispatcher level only (__torch_dispatch__).
  __torch_function__ = torch._C._disabled_torch_function_impl

  @classmethod
  def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
    """Runs `func` on the wrapped tensors; the XLA tensors it returns come back as
    XLAShardedTensors (the core carries the shardings they get), other values as they
    are."""

    # An in-place op returns its argument: the caller gets back its own wrapper.
    wrappers = {}

    def unwrap(elem):
      if isinstance(elem, XLAShardedTensor):
        wrappers[id(elem.global_tensor)] = elem
        return elem.global_tensor
      return elem

    def wrap(elem):
      if isinstance(elem, torch.Tensor) and not isinstance(elem, XLAShardedTensor) and elem.device.type == 'xla':
        own = wrappers.get(id(elem))
        return own if own is not None else XLAShardedTensor(elem)
      return elem

    with no_dispatch():
      result = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
    return tree_map(wrap, result)
