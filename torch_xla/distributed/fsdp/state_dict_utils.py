"""Consolidation of the sharded checkpoints of XlaFullyShardedDataParallel: the state_dict
of the unwrapped module from every replica's state_dict() and get_shard_metadata()."""
from collections import OrderedDict
from glob import glob

import torch

__all__ = ['consolidate_sharded_state_dicts', 'consolidate_sharded_model_checkpoints']

_SHARD_PREFIX = '_fsdp_shard'
# Levels of the wrappers' names that the unwrapped module does not have.
_WRAPPER_LEVELS = ('_fsdp_wrapped_module.', '_fpw_module.')


def _join(prefix, name):
  return f'{prefix}.{name}' if prefix else name


def _unwrapped_name(name):
  for level in _WRAPPER_LEVELS:
    name = name.replace(level, '')
  return name


def _whole(shards, size):
  """The original tensor of `size` from its shards, in rank order (padding dropped), on
  the CPU."""
  size = torch.Size(size)
  whole = torch.cat([s.detach().cpu() for s in shards], 0)
  if whole.dim() == 1:  # flattened (or a 1-D parameter sharded along dimension 0)
    return whole[:size.numel()].view(size)
  return whole[:size[0]]  # sharded along dimension 0 (shard_param_on_dim_0)


def consolidate_sharded_state_dicts(state_dict_list, shard_metadata):
  """The full state_dict of the unwrapped module.

  state_dict_list: every replica's model.state_dict(), in rank order; shard_metadata:
  model.get_shard_metadata() of any of them. Parameters come back with the names and
  shapes of the unwrapped module's (flattened vectors split again, tied parameters
  under each of their names), buffers in their original dtype (from rank 0's).
  """
  world_size = shard_metadata['world_size']
  if len(state_dict_list) != world_size:
    raise ValueError(f'consolidate_sharded_state_dicts: {len(state_dict_list)} state dicts for '
                     f'a world size of {world_size}')
  shard_info = shard_metadata['shard_info']
  flatten_info = shard_metadata.get('flatten_info', {})
  buffer_info = shard_metadata.get('buffer_info', {})
  full = OrderedDict()
  for key, value in state_dict_list[0].items():
    prefix, _, last = key.rpartition('.')
    if last.startswith(_SHARD_PREFIX):
      try:
        info = shard_info[prefix][last]
      except KeyError:
        raise KeyError(f'consolidate_sharded_state_dicts: no shard metadata for {key}') from None
      value = _whole([sd[key] for sd in state_dict_list], info['_orig_size'])
      name = _join(prefix, info['_orig_name'])
    else:
      name = key
      if key in buffer_info:
        value = value.to(buffer_info[key]['_orig_dtype'])
    if name in flatten_info:  # a flattened vector: its parameters, in its place
      names, shapes, numels = flatten_info[name]
      owner = name.rpartition('.')[0]
      for n, shape, piece in zip(names, shapes, value.split(list(numels))):
        full[_unwrapped_name(_join(owner, n))] = piece.view(shape)
    else:
      full[_unwrapped_name(name)] = value
  for alias, source in shard_metadata.get('shared_info', {}).items():
    full[alias] = full[source]
  return full


def consolidate_sharded_model_checkpoints(ckpt_prefix, ckpt_suffix='*.pth', save_path='',
                                          save_model=True):
  """Consolidates the files matching ckpt_prefix + ckpt_suffix, one per replica, each a
  dict with the replica's model.state_dict() under 'model' and its
  model.get_shard_metadata() under 'shard_metadata'.

  Returns (full state_dict, path written); with save_model it is saved as {'model':
  state_dict} to save_path (default ckpt_prefix + '_consolidated.pth'), else the path
  is None.
  """
  pattern = ckpt_prefix + ckpt_suffix
  paths = sorted(glob(pattern))
  if not paths:
    raise FileNotFoundError(f'consolidate_sharded_model_checkpoints: no file matches {pattern}')
  checkpoints = []
  for path in paths:
    checkpoint = torch.load(path, map_location='cpu', weights_only=False)
    if not isinstance(checkpoint, dict) or 'model' not in checkpoint or 'shard_metadata' not in checkpoint:
      raise ValueError(f'consolidate_sharded_model_checkpoints: {path} is not a dict with '
                       "'model' and 'shard_metadata'")
    checkpoints.append((checkpoint['shard_metadata']['rank'], path, checkpoint))
  checkpoints.sort(key=lambda c: c[0])
  for index, (rank, path, checkpoint) in enumerate(checkpoints):
    world_size = checkpoint['shard_metadata']['world_size']
    if world_size != len(checkpoints) or rank != index:
      raise ValueError(f'consolidate_sharded_model_checkpoints: {path} holds rank {rank} of '
                       f'{world_size}, but {len(checkpoints)} files match {pattern} (ranks '
                       f'{[c[0] for c in checkpoints]}): files are missing or do not belong')
  full = consolidate_sharded_state_dicts([c[2]['model'] for c in checkpoints],
                                         checkpoints[0][2]['shard_metadata'])
  written = None
  if save_model:
    written = save_path or ckpt_prefix + '_consolidated.pth'
    torch.save({'model': full}, written)
  return full, written
