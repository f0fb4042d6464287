"""Reading XLA sharding text: its kind (ShardingType) and each device's tile.

The core reports a tensor's sharding as the text of an XLA HloSharding
(`torch_xla._XLAC._get_xla_sharding_spec`, '' when the tensor has none). The local
shards of a tensor and the checks on shards to load need, per device, the part of the
global tensor it holds; that follows from the text and the global shape alone, so it is
computed here in Python:

- a tiled dimension of size n over k tiles has tiles of ceil(n / k) elements; the slice
  of tile i is [i * s, (i + 1) * s) clamped to n, so the last tiles may be short or empty
  (the shards carry no padding);
- with `last_tile_dim_replicate` (or `last_tile_dims={...}`) the trailing tile
  dimensions group devices holding the same tile; a device's index along them is its
  replica id;
- a replicated tensor is whole on every device: its indices are Ellipsis and each
  device's replica id is its ordinal (as in torch_xla).

Both the explicit device list ('{devices=[2,2]0,1,2,3}') and XLA's iota form
('{devices=[2,2]<=[4]}', '{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}') are read.
"""
import dataclasses
import math
import re
from enum import IntEnum
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np


class ShardingType(IntEnum):
  """The kind of a sharding; the values are torch_xla's (OpSharding.Type, with PARTIAL
  for a tiling whose last tile dimension is replicated)."""
  REPLICATED = 0
  MAXIMAL = 1
  TUPLE = 2
  TILED = 3
  MANUAL = 4
  PARTIAL = 5
  UNKNOWN = 6


@dataclasses.dataclass(frozen=True)
class ParsedSharding:
  """A sharding text taken apart. For TILED and PARTIAL shardings `tile_dims` has one
  entry per tensor dimension followed by `subgroup_dims` trailing replication
  dimensions, and `devices` lists the device of each tile in row-major order."""
  type: ShardingType
  tile_dims: Tuple[int, ...] = ()
  devices: Tuple[int, ...] = ()
  subgroup_dims: int = 0
  maximal_device: Optional[int] = None

  @property
  def tensor_tile_dims(self) -> Tuple[int, ...]:
    """The number of tiles along each tensor dimension."""
    return self.tile_dims[:len(self.tile_dims) - self.subgroup_dims]


_TILED = re.compile(r'^devices=\[(?P<dims>[0-9,\s]+)\]\s*'
                    r'(?:<=\[(?P<iota>[0-9,\s]+)\](?:T\((?P<perm>[0-9,\s]+)\))?|(?P<list>[0-9,\s]+?))'
                    r'(?P<rest>(?:\s+\S.*)?)$')


def _ints(text):
  return tuple(int(x) for x in text.replace(' ', '').split(',') if x)


def _strip_metadata(body):
  """The sharding without a trailing ` metadata={...}` (XLA prints it on request)."""
  at = body.find(' metadata=')
  return body if at < 0 else body[:at].rstrip()


def parse_sharding(text: str) -> Optional[ParsedSharding]:
  """The parsed form of a sharding text; None for '' (no sharding). Raises ValueError
  for text that is not an HloSharding this module knows."""
  text = text.strip()
  if not text:
    return None
  if not (text.startswith('{') and text.endswith('}')):
    raise ValueError(f"sharding text {text!r}: expected '{{...}}'")
  body = _strip_metadata(text[1:-1].strip())
  if body.startswith('{'):
    return ParsedSharding(ShardingType.TUPLE)
  word = body.split(' ')[0]
  if word == 'replicated':
    return ParsedSharding(ShardingType.REPLICATED)
  if word == 'manual':
    return ParsedSharding(ShardingType.MANUAL)
  if word == 'unknown':
    return ParsedSharding(ShardingType.UNKNOWN)
  if word == 'maximal':
    match = re.search(r'device=(\d+)', body)
    return ParsedSharding(ShardingType.MAXIMAL, maximal_device=int(match.group(1)) if match else None)
  match = _TILED.match(body)
  if not match:
    raise ValueError(f'sharding text {text!r} is not a sharding this package reads')
  dims = _ints(match.group('dims'))
  count = math.prod(dims)
  if match.group('iota') is not None:
    reshape = _ints(match.group('iota'))
    perm = _ints(match.group('perm')) if match.group('perm') else tuple(range(len(reshape)))
    if math.prod(reshape) != count or sorted(perm) != list(range(len(reshape))):
      raise ValueError(f'sharding text {text!r}: the iota tile assignment does not fit {list(dims)}')
    devices = tuple(int(d) for d in np.arange(count).reshape(reshape).transpose(perm).flatten())
  else:
    devices = _ints(match.group('list'))
  if len(devices) != count:
    raise ValueError(f'sharding text {text!r}: {len(devices)} devices for {count} tiles')
  rest = match.group('rest').strip()
  subgroups = 0
  if rest == 'last_tile_dim_replicate':
    subgroups = 1
  elif rest.startswith('last_tile_dims={') and rest.endswith('}'):
    subgroups = len([s for s in rest[len('last_tile_dims={'):-1].split(',') if s.strip()])
  elif rest:
    raise ValueError(f'sharding text {text!r}: unknown suffix {rest!r}')
  if subgroups >= len(dims) + 1:
    raise ValueError(f'sharding text {text!r}: more replication dimensions than tile dimensions')
  kind = ShardingType.PARTIAL if subgroups else ShardingType.TILED
  return ParsedSharding(kind, dims, devices, subgroups)


def sharding_type_from_text(text: str) -> Optional[ShardingType]:
  """The ShardingType of a sharding text; None for '' (the tensor has no sharding)."""
  parsed = parse_sharding(text)
  return None if parsed is None else parsed.type


def shard_shape(text: str, global_shape: Sequence[int]) -> Tuple[int, ...]:
  """The shape of the largest shard (before any clamping at the end of a dimension)."""
  parsed = _tiled_or_replicated(text, global_shape)
  if parsed is None:
    return tuple(global_shape)
  return tuple(-(-n // k) for n, k in zip(global_shape, parsed.tensor_tile_dims))


def _tiled_or_replicated(text, global_shape):
  """The parsed tiled sharding, None for a replicated one; ValueError for the other
  kinds and for a tiling whose rank differs from the tensor's."""
  parsed = parse_sharding(text)
  if parsed is None or parsed.type in (ShardingType.REPLICATED, ShardingType.UNKNOWN):
    return None
  if parsed.type not in (ShardingType.TILED, ShardingType.PARTIAL):
    raise ValueError(f'sharding {text}: a {parsed.type.name} sharding has no tiles to index')
  if len(parsed.tensor_tile_dims) != len(global_shape):
    raise ValueError(f'sharding {text} tiles {len(parsed.tensor_tile_dims)} dimensions; the '
                     f'tensor of shape {tuple(global_shape)} has {len(global_shape)}')
  return parsed


Indices = Union[type(Ellipsis), Tuple[slice, ...]]


def shard_replica_and_indices(text: str, global_shape: Sequence[int],
                              device_ids: Sequence[int]) -> List[Tuple[int, Indices]]:
  """For each device of `device_ids` (in that order): its replica id and the part of the
  global tensor it holds, a tuple of slices (one per dimension) or Ellipsis for the whole
  tensor."""
  parsed = _tiled_or_replicated(text, global_shape)
  if parsed is None:
    return [(int(d), Ellipsis) for d in device_ids]
  sizes = shard_shape(text, global_shape)
  rank = len(global_shape)
  tiles = {}
  for position, device in enumerate(parsed.devices):
    coords = np.unravel_index(position, parsed.tile_dims)
    replica = int(np.ravel_multi_index(coords[rank:], parsed.tile_dims[rank:])) if parsed.subgroup_dims else 0
    indices = tuple(
        slice(min(int(c) * s, n), min((int(c) + 1) * s, n)) for c, s, n in zip(coords[:rank], sizes, global_shape))
    tiles[device] = (replica, indices)
  missing = [d for d in device_ids if int(d) not in tiles]
  if missing:
    raise ValueError(f'sharding {text} places no tile on devices {missing}')
  return [tiles[int(d)] for d in device_ids]


def indices_shape(indices: Indices, global_shape: Sequence[int]) -> Tuple[int, ...]:
  """The shape of the part of a tensor of `global_shape` that `indices` select."""
  if indices is Ellipsis:
    return tuple(global_shape)
  return tuple(s.stop - s.start for s in indices)


def tiled_text(devices: np.ndarray, partial: bool = False) -> str:
  """The sharding text of a tile assignment: `devices` holds the device id of each tile
  (one array dimension per tiled dimension, and with `partial` a last one of the devices
  that replicate each tile)."""
  text = '{devices=[' + ','.join(str(d) for d in devices.shape) + ']' + ','.join(str(int(d)) for d in devices.flatten())
  return text + (' last_tile_dim_replicate}' if partial else '}')


def op_sharding_text(tile_assignment, group_assignment, replication_groups, sharding_type: int) -> str:
  """The sharding text of torch_xla's OpSharding arguments: the tile assignment (nested
  lists of device ids, one level per tiled dimension) of a TILED sharding; for PARTIAL,
  the group of each tile (nested lists) and the devices of each group
  (replication_groups); nothing more for REPLICATED, MAXIMAL (taken as replicated, as
  torch_xla does) and MANUAL."""
  kind = ShardingType(sharding_type)
  if kind in (ShardingType.REPLICATED, ShardingType.MAXIMAL):
    return '{replicated}'
  if kind == ShardingType.MANUAL:
    return '{manual}'
  if kind == ShardingType.TILED:
    tiles = np.asarray(tile_assignment, dtype=np.int64)
    if tiles.ndim == 0 or tiles.size == 0:
      raise ValueError(f'OpSharding: a TILED sharding needs a tile assignment, got {tile_assignment!r}')
    return tiled_text(tiles)
  if kind == ShardingType.PARTIAL:
    groups = np.asarray(group_assignment, dtype=np.int64)
    members = [list(g) for g in replication_groups]
    if not members or groups.size != len(members) or len({len(m) for m in members}) != 1:
      raise ValueError(f'OpSharding: a PARTIAL sharding needs one replication group (all of one size) per '
                       f'tile, got {groups.size} tiles and groups {members}')
    devices = np.asarray([members[int(g)] for g in groups.flatten()], dtype=np.int64)
    return tiled_text(devices.reshape(list(groups.shape) + [len(members[0])]), partial=True)
  raise ValueError(f'OpSharding: sharding type {kind.name} is not supported')
