"""Planners of torch.distributed.checkpoint (DCP) for state_dicts holding sharded XLA
tensors.

SPMDSavePlanner writes a sharded XLA tensor as its distinct tiles, one DCP chunk each
(the tile's offsets and sizes in the global tensor, read from the replica-0 device), so
the checkpoint has the layout of a DCP checkpoint of a sharded tensor and loads under
any other sharding. An XLA tensor without tiles is one chunk, read to the CPU; CPU
tensors and other values are DefaultSavePlanner's.

SPMDLoadPlanner loads into a state_dict whose XLA tensors are sharded as they are now,
which need not be as they were saved: each distinct tile of a target takes the overlap
of every stored chunk with it into a CPU buffer (DCP's resharding reads), and when a
tensor is complete its tiles go to their devices and into the tensor in place.

Both are used as DCP's own planners, without a process group in a single process:

  >>> dcp.save(state_dict, storage_writer=dcp.FileSystemWriter(path), planner=SPMDSavePlanner())
  >>> dcp.load(state_dict, storage_reader=dcp.FileSystemReader(path), planner=SPMDLoadPlanner())
"""
import dataclasses
import math
import threading
from collections.abc import Mapping
from typing import Dict, List, Optional, Tuple

import torch
from torch.distributed.checkpoint.default_planner import (DefaultLoadPlanner, DefaultSavePlanner,
                                                          create_default_local_load_plan)
from torch.distributed.checkpoint.metadata import (ChunkStorageMetadata, MetadataIndex, TensorProperties,
                                                   TensorStorageMetadata)
from torch.distributed.checkpoint.planner import (LoadPlan, ReadItem, SavePlan, TensorWriteData, WriteItem,
                                                  WriteItemType)
from torch.distributed.checkpoint.planner_helpers import create_read_items_for_chunk_list

from torch_xla._extension import xlac as _xlac
from ._helpers import CpuShards, Tile, sharding_text, sync_tensors, tile_data, tiles_of, xla_tensor_of

__all__ = ['SPMDSavePlanner', 'SPMDLoadPlanner']

# The loaded XLA tensors are computed in batches of about this many bytes (until then
# the device holds both the new values and the buffers they are copied from).
_LOAD_SYNC_BYTES = 256 << 20


def _properties(dtype: torch.dtype, requires_grad: bool) -> TensorProperties:
  return TensorProperties(dtype=dtype, requires_grad=requires_grad)


def _write_item(fqn, offsets, sizes, size, properties, kind) -> WriteItem:
  offsets = torch.Size(offsets)
  return WriteItem(index=MetadataIndex(fqn, offsets), type=kind,
                   tensor_data=TensorWriteData(chunk=ChunkStorageMetadata(offsets=offsets, sizes=torch.Size(sizes)),
                                               properties=properties, size=torch.Size(size)))


class _SaveEntry:
  """An XLA tensor (or its CPU snapshot) to write, and its chunks."""

  def __init__(self, tensor: Optional[torch.Tensor] = None, cpu: Optional[CpuShards] = None):
    self.tensor = tensor
    self.cpu = cpu
    if cpu is not None:
      self.size, self.dtype, self.requires_grad = cpu.size, cpu.dtype, cpu.requires_grad
      self.tiles = [Tile(o, tuple(d.shape), ()) for o, d in cpu.chunks.items()]
    else:
      self.size, self.dtype, self.requires_grad = tensor.shape, tensor.dtype, tensor.requires_grad
      # A tensor without elements has only empty tiles: it is written whole.
      self.tiles = tiles_of(sharding_text(tensor), tensor.shape) if tensor.numel() else None
    self.pending: Optional[Dict[Tuple[int, ...], torch.Tensor]] = None

  def write_items(self, fqn: str) -> List[WriteItem]:
    properties = _properties(self.dtype, self.requires_grad)
    if self.tiles is None:
      return [_write_item(fqn, [0] * len(self.size), self.size, self.size, properties, WriteItemType.TENSOR)]
    return [
        _write_item(fqn, tile.offsets, tile.sizes, self.size, properties, WriteItemType.SHARD)
        for tile in self.tiles
        if tile.numel
    ]

  def data(self, offsets: Tuple[int, ...]) -> torch.Tensor:
    """The CPU data of the chunk at `offsets` (each tile's data is read once, when the
    first chunk of the tensor is written, and dropped as it is written)."""
    if self.cpu is not None:
      return self.cpu.chunks[offsets]
    if self.tiles is None:
      return self.tensor.detach().cpu()
    if not self.pending or offsets not in self.pending:
      self.pending = tile_data(self.tensor, self.tiles)
    return self.pending.pop(offsets)


class SPMDSavePlanner(DefaultSavePlanner):
  """DCP's save planner for state_dicts with XLA tensors, sharded or not.

  The state_dict is flattened as DefaultSavePlanner does (nested dicts and lists become
  dotted keys). Its XLA tensors are computed first (their pending values, one graph)
  and written by device pieces: a TILED or PARTIAL tensor as one chunk per distinct tile
  (a tile held by several devices is written once, from its replica-0 device; empty
  tiles of an uneven split are left out), any other XLA tensor as one chunk of the whole
  tensor copied to the CPU. Everything else is written as DefaultSavePlanner writes it.
  """

  def __init__(self):
    super().__init__(flatten_state_dict=True, flatten_sharded_tensors=True)
    self._xla_entries: Dict[str, _SaveEntry] = {}
    self._lock = threading.Lock()
    # Set by CheckpointManager.save_async, which hands over a state_dict it flattened
    # itself: the mappings of the original nesting, kept in the checkpoint's metadata.
    self._given_mappings = None

  def set_up_planner(self, state_dict, storage_meta=None, is_coordinator: bool = False) -> None:
    super().set_up_planner(state_dict, storage_meta, is_coordinator)
    if self._given_mappings is not None:
      self.mappings = dict(self._given_mappings)
    flat = self.state_dict
    sync_tensors([t for t in map(xla_tensor_of, flat.values()) if t is not None])
    self._xla_entries = {}
    for fqn, value in list(flat.items()):
      if isinstance(value, CpuShards):
        self._xla_entries[fqn] = _SaveEntry(cpu=value)
      else:
        tensor = xla_tensor_of(value)
        if tensor is None:
          continue
        self._xla_entries[fqn] = _SaveEntry(tensor=tensor)
      # The default planner plans the rest.
      del flat[fqn]

  def create_local_plan(self) -> SavePlan:
    plan = super().create_local_plan()
    items = list(plan.items)
    for fqn, entry in self._xla_entries.items():
      items.extend(entry.write_items(fqn))
    self.plan = dataclasses.replace(plan, items=items)
    return self.plan

  def resolve_data(self, write_item: WriteItem):
    entry = self._xla_entries.get(write_item.index.fqn)
    if entry is None:
      return super().resolve_data(write_item)
    with self._lock:
      return entry.data(tuple(write_item.index.offset))


class _LoadTarget:
  """An XLA tensor to load: its distinct non-empty tiles (or the whole tensor), a CPU
  buffer for each, and how many elements are still to be read into them."""

  def __init__(self, fqn: str, tensor: torch.Tensor):
    self.fqn = fqn
    self.tensor = tensor
    self.text = sharding_text(tensor)
    tiles = tiles_of(self.text, tensor.shape) if tensor.numel() else None
    self.tiles = tiles if tiles is not None else [
        Tile((0,) * tensor.dim(), tuple(tensor.shape), ())
    ]
    self.sharded = tiles is not None
    self.chunks = [t for t in self.tiles if t.numel]
    self.buffers: Dict[int, torch.Tensor] = {}
    self.remaining = sum(t.numel for t in self.chunks)

  def buffer(self, index: int) -> torch.Tensor:
    if index not in self.buffers:
      self.buffers[index] = torch.empty(self.chunks[index].sizes, dtype=self.tensor.dtype)
    return self.buffers[index]

  def put_on_device(self):
    """Writes the buffers into the tensor, in place: a sharded tensor gets them through
    a new tensor of its sharding that takes each device's tile (_xla_load_local_shards)
    and is then copied in; a whole tensor is copied from the CPU. The copy reaches the
    tensors that alias it (a module's parameter behind its state_dict entry)."""
    t = self.tensor
    with torch.no_grad():
      if not self.sharded:
        t.copy_(self.buffers[0] if self.chunks else torch.empty(t.shape, dtype=t.dtype))
      else:
        by_offsets = {c.offsets: self.buffers[i] for i, c in enumerate(self.chunks)}
        datas, ordinals = [], []
        for tile in self.tiles:
          data = by_offsets.get(tile.offsets)
          if data is None:
            data = torch.empty(tile.sizes, dtype=t.dtype)
          for device in tile.devices:
            datas.append(data)
            ordinals.append(device)
        staged = torch.empty(t.shape, dtype=t.dtype, device=t.device)
        _xlac()._xla_mark_sharding(staged, self.text)
        _xlac()._xla_load_local_shards(staged, datas, ordinals)
        t.copy_(staged)
    self.buffers.clear()


def _empty_mappings(value, path=()):
  """The paths of the empty dicts nested in a state_dict (they vanish when it is
  flattened)."""
  if isinstance(value, Mapping):
    if not value and path:
      yield path
    for k, v in value.items():
      yield from _empty_mappings(v, path + (str(k),))
  elif isinstance(value, (list, tuple)):
    for i, v in enumerate(value):
      yield from _empty_mappings(v, path + (i,))


def _some(keys, n=5):
  keys = sorted(keys)
  shown = ', '.join(repr(k) for k in keys[:n])
  return shown + (f' and {len(keys) - n} more' if len(keys) > n else '')


class SPMDLoadPlanner(DefaultLoadPlanner):
  """DCP's load planner for state_dicts with XLA tensors, sharded as they are to be
  loaded (another mesh, another partition spec, or none: the checkpoint's chunks are
  read where they overlap each device's tile).

  The state_dict is loaded in place: its XLA tensors keep their identity and sharding
  (a module's parameters are updated through its state_dict's entries), CPU tensors are
  copied into, and other values are set in the state_dict as DefaultLoadPlanner sets
  them (load them into their owners with load_state_dict).

  Every key of the state_dict must be in the checkpoint (allow_partial_load=True leaves
  the others as they are); keys only the checkpoint has are not read. An empty dict in
  the state_dict where the checkpoint holds values (an optimizer's state before its
  first step) is an error as well: see prime_optimizer.
  """

  def __init__(self, allow_partial_load: bool = False):
    super().__init__(flatten_state_dict=True, flatten_sharded_tensors=True, allow_partial_load=allow_partial_load)
    self._targets: Dict[str, _LoadTarget] = {}
    self._lock = threading.Lock()
    self._to_sync: List[torch.Tensor] = []
    self._to_sync_bytes = 0
    self._unfinished = 0

  def set_up_planner(self, state_dict, metadata=None, is_coordinator: bool = False) -> None:
    super().set_up_planner(state_dict, metadata, is_coordinator)
    tensors = {fqn: xla_tensor_of(v) for fqn, v in self.state_dict.items()}
    tensors = {fqn: t for fqn, t in tensors.items() if t is not None}
    # Their shardings are final once their pending values are computed.
    sync_tensors(list(tensors.values()))
    self._targets = {fqn: _LoadTarget(fqn, t) for fqn, t in tensors.items()}

  def _check_keys(self):
    stored = self.metadata.state_dict_metadata
    missing = [k for k in self.state_dict if k not in stored]
    if missing and not self.allow_partial_load:
      raise RuntimeError(f'SPMDLoadPlanner: the state_dict holds {_some(missing)}, which the checkpoint does not '
                         f'have (it holds {len(stored)} entries, such as {_some(stored, 3)}); remove them from the '
                         'state_dict, or load with allow_partial_load=True to leave them as they are')
    if self.allow_partial_load:
      return
    for path in _empty_mappings(self.original_state_dict):
      prefix = '.'.join(map(str, path)) + '.'
      under = [k for k in stored if k.startswith(prefix)]
      if under:
        raise RuntimeError(
            f"SPMDLoadPlanner: the state_dict has an empty dict at {prefix[:-1]!r}, where the checkpoint holds "
            f"{_some(under, 3)}. An optimizer's state is created by its first step: call "
            'torch_xla.experimental.distributed_checkpoint.prime_optimizer(optimizer) before taking the '
            'state_dict to restore into (or load with allow_partial_load=True to leave these out)')

  def create_local_plan(self) -> LoadPlan:
    if self.metadata is None:
      raise RuntimeError('SPMDLoadPlanner: set_up_planner was not given the checkpoint metadata')
    self._check_keys()
    others = {k: v for k, v in self.state_dict.items() if k not in self._targets}
    plan = create_default_local_load_plan(others, self.metadata, not self.allow_partial_load)
    items = list(plan.items)
    stored = self.metadata.state_dict_metadata
    self._unfinished = 0
    for fqn, target in list(self._targets.items()):
      md = stored.get(fqn)
      if md is None:  # allow_partial_load
        del self._targets[fqn]
        continue
      if not isinstance(md, TensorStorageMetadata):
        raise ValueError(f'SPMDLoadPlanner: {fqn!r} is a tensor in the state_dict, but the checkpoint holds '
                         'a non-tensor value there')
      if tuple(md.size) != tuple(target.tensor.shape):
        raise ValueError(f'SPMDLoadPlanner: {fqn!r} has shape {tuple(target.tensor.shape)} in the state_dict '
                         f'and {tuple(md.size)} in the checkpoint')
      chunks = [ChunkStorageMetadata(torch.Size(c.offsets), torch.Size(c.sizes)) for c in target.chunks]
      reads = create_read_items_for_chunk_list(fqn, md, chunks)
      covered = sum(math.prod(r.lengths) for r in reads)
      if covered != target.remaining:
        raise RuntimeError(f'SPMDLoadPlanner: the chunks of {fqn!r} in the checkpoint cover {covered} of the '
                           f'{target.remaining} elements it needs (an incomplete checkpoint)')
      if target.remaining == 0:
        del self._targets[fqn]  # no elements: nothing to load
        continue
      items.extend(reads)
      self._unfinished += 1
    return dataclasses.replace(plan, items=items)

  def lookup_tensor(self, index: MetadataIndex) -> torch.Tensor:
    target = self._targets.get(index.fqn)
    if target is None:
      return super().lookup_tensor(index)
    with self._lock:
      position = index.index
      if position is None or not 0 <= position < len(target.chunks) or \
          tuple(target.chunks[position].offsets) != tuple(index.offset):
        position = [tuple(c.offsets) for c in target.chunks].index(tuple(index.offset))
      return target.buffer(position)

  def commit_tensor(self, read_item: ReadItem, tensor: torch.Tensor) -> None:
    target = self._targets.get(read_item.dest_index.fqn)
    if target is None:
      return super().commit_tensor(read_item, tensor)
    with self._lock:
      target.remaining -= math.prod(read_item.lengths)
      if target.remaining < 0:
        raise RuntimeError(f'SPMDLoadPlanner: more elements read for {target.fqn!r} than it has')
      if target.remaining:
        return
      target.put_on_device()
      self._unfinished -= 1
      self._to_sync.append(target.tensor)
      self._to_sync_bytes += target.tensor.numel() * target.tensor.element_size()
      if self._unfinished == 0 or self._to_sync_bytes >= _LOAD_SYNC_BYTES:
        sync_tensors(self._to_sync)
        self._to_sync, self._to_sync_bytes = [], 0
