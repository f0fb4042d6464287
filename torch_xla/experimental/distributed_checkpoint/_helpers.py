"""What the planners and the manager share: the distinct tiles of a sharded XLA tensor
(read from its sharding text, without touching its data), copies of those tiles on the
CPU, and CPU snapshots of whole state_dicts for saves that run in the background."""
import copy
import dataclasses
from typing import Any, Dict, List, Optional, Tuple

import torch

from torch_xla._extension import xlac as _xlac
from torch_xla.distributed.spmd import hlo_sharding
from torch_xla.distributed.spmd.xla_sharded_tensor import XLAShardedTensor


def xla_tensor_of(value: Any) -> Optional[torch.Tensor]:
  """The XLA tensor `value` is (an XLAShardedTensor's global tensor), None when it is
  not an XLA tensor."""
  if isinstance(value, XLAShardedTensor):
    value = value.global_tensor
  if isinstance(value, torch.Tensor) and value.device.type == 'xla':
    return value
  return None


def sharding_text(t: torch.Tensor) -> str:
  """The XLA sharding text of an XLA tensor, '' when it has none."""
  return _xlac()._get_xla_sharding_spec(t)


def sync_tensors(tensors: List[torch.Tensor]):
  """Computes the pending values of `tensors` (one graph) and waits for them: their
  data and final shardings are then on the devices."""
  if tensors:
    _xlac()._xla_sync_tensors(list(tensors), True)


@dataclasses.dataclass(frozen=True)
class Tile:
  """One distinct piece of a sharded tensor: where it starts in the global tensor, its
  size, and the devices holding it (the holder with replica id 0 first)."""
  offsets: Tuple[int, ...]
  sizes: Tuple[int, ...]
  devices: Tuple[int, ...]

  @property
  def numel(self) -> int:
    n = 1
    for s in self.sizes:
      n *= s
    return n


def tiles_of(text: str, shape) -> Optional[List[Tile]]:
  """The distinct tiles of a tensor of `shape` sharded as `text` (TILED or PARTIAL), in
  the order of the devices first holding them; None when each device holding the tensor
  holds it whole (no sharding, replicated, maximal)."""
  parsed = hlo_sharding.parse_sharding(text)
  if parsed is None or parsed.type not in (hlo_sharding.ShardingType.TILED, hlo_sharding.ShardingType.PARTIAL):
    return None
  devices = sorted(set(parsed.devices))
  placements = hlo_sharding.shard_replica_and_indices(text, tuple(shape), devices)
  holders: Dict[Tuple[Tuple[int, ...], Tuple[int, ...]], list] = {}
  for device, (replica, indices) in zip(devices, placements):
    offsets = tuple(s.start for s in indices)
    sizes = tuple(s.stop - s.start for s in indices)
    holders.setdefault((offsets, sizes), []).append((replica, device))
  return [
      Tile(offsets, sizes, tuple(device for _, device in sorted(found)))
      for (offsets, sizes), found in holders.items()
  ]


def tile_data(t: torch.Tensor, tiles: List[Tile]) -> Dict[Tuple[int, ...], torch.Tensor]:
  """CPU copies of the non-empty `tiles` of the sharded XLA tensor `t`, by offsets: each
  read from its replica-0 holder (one transfer from every device)."""
  pieces = {int(ordinal): data for data, ordinal in _xlac()._xla_local_shards(t)}
  out = {}
  for tile in tiles:
    if tile.numel == 0:
      continue
    data = pieces[tile.devices[0]]
    if tuple(data.shape) != tile.sizes:
      raise RuntimeError(f'the shard of device {tile.devices[0]} has shape {tuple(data.shape)}; its tile at '
                         f'{list(tile.offsets)} of the tensor of shape {tuple(t.shape)} has shape {tile.sizes}')
    out[tile.offsets] = data
  return out


@dataclasses.dataclass
class CpuShards:
  """A sharded XLA tensor copied to the CPU as its distinct tiles: what a background
  save writes, one chunk per tile, as it would write the tensor itself."""
  size: torch.Size
  dtype: torch.dtype
  requires_grad: bool
  chunks: Dict[Tuple[int, ...], torch.Tensor]  # offsets -> data


def snapshot(value: Any) -> Any:
  """A copy of a flattened state_dict value that later changes to the original do not
  reach and that needs no device: a sharded XLA tensor as CpuShards, another XLA tensor
  on the CPU, a CPU tensor cloned, anything else deep-copied."""
  t = xla_tensor_of(value)
  if t is not None:
    tiles = tiles_of(sharding_text(t), t.shape) if t.numel() else None
    if tiles is None:
      return t.detach().cpu()
    return CpuShards(t.shape, t.dtype, t.requires_grad, tile_data(t, tiles))
  if isinstance(value, torch.Tensor):
    return value.detach().clone()
  return copy.deepcopy(value)
