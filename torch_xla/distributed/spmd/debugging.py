"""Text pictures of a sharding: which devices hold which tile.

visualize_tensor_sharding(t) prints a grid of the tiles of the first two dimensions of
the tensor (one row for a 1-D tensor, one cell for a replicated one), each cell naming
the devices that hold it, and returns the picture as a string. torch_xla draws it with
`rich`; this is plain text, so it needs nothing beyond the package.
"""
import numpy as np

import torch_xla.runtime as xr
from torch_xla._extension import xlac as _xlac
from . import hlo_sharding
from .xla_sharded_tensor import XLAShardedTensor


def _cells(text):
  """{(row, column): [devices]} of the first two tile dimensions of a sharding."""
  parsed = hlo_sharding.parse_sharding(text)
  kind = None if parsed is None else parsed.type
  if kind in (hlo_sharding.ShardingType.TILED, hlo_sharding.ShardingType.PARTIAL):
    tiles = parsed.tensor_tile_dims
    cells = {}
    for position, device in enumerate(parsed.devices):
      coords = np.unravel_index(position, parsed.tile_dims)[:len(tiles)]
      key = (int(coords[0]), int(coords[1])) if len(tiles) >= 2 else (0, int(coords[0]) if tiles else 0)
      cells.setdefault(key, []).append(int(device))
    return cells
  if kind == hlo_sharding.ShardingType.MAXIMAL:
    return {(0, 0): [parsed.maximal_device]}
  if kind in (None, hlo_sharding.ShardingType.REPLICATED, hlo_sharding.ShardingType.UNKNOWN):
    return {(0, 0): list(range(xr.global_runtime_device_count()))}
  raise ValueError(f'visualize_sharding: a {kind.name} sharding ({text}) has no tiles to draw')


def visualize_sharding(sharding: str, use_color: bool = True, scale: float = 1., min_width: int = 9,
                       max_width: int = 80) -> str:
  """Prints and returns a text grid of the tiles of the sharding text `sharding`
  (use_color and scale, torch_xla's options for `rich`, are accepted and unused)."""
  cells = _cells(sharding)
  rows = max(r for r, _ in cells) + 1
  columns = max(c for _, c in cells) + 1
  kind = xr.device_type() or 'XLA'
  labels = {key: f"{kind} {','.join(str(d) for d in sorted(devices))}" for key, devices in cells.items()}
  width = min(max([min_width] + [len(label) + 2 for label in labels.values()]), max_width)
  rule = '+' + '+'.join('-' * width for _ in range(columns)) + '+'
  lines = [f'Sharding {sharding or "(none)"} (tiles of the first two dimensions)', rule]
  for r in range(rows):
    lines.append('|' + '|'.join(labels.get((r, c), '').center(width)[:width] for c in range(columns)) + '|')
    lines.append(rule)
  picture = '\n'.join(lines)
  print(picture)
  return picture


def visualize_tensor_sharding(t, **kwargs) -> str:
  """visualize_sharding of the XLA tensor (or XLAShardedTensor) `t`'s sharding."""
  tensor = t.global_tensor if isinstance(t, XLAShardedTensor) else t
  return visualize_sharding(_xlac()._get_xla_sharding_spec(tensor), **kwargs)
