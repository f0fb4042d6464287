"""Saving nested data with tensors one file per tensor (xser).

save() moves tensors to CPU and writes them one at a time, so host memory
holds a single tensor copy at any moment. Layout, for a save to PATH:
  PATH           torch.save of `data` with each tensor replaced by a reference
  PATH.tensors/  tensor_<id>.pt, one torch.save file per distinct tensor
Both are written beside the target first and put in place at the end, the main
file last.
"""

import os
import shutil

import torch

from torch_xla.utils import utils as xu


class _TensorReference:
  """Stands in, inside the main file, for the tensor stored as tensor_<tid>.pt."""

  def __init__(self, tid):
    self.tid = tid


# Let torch.load (weights_only, its default) rebuild the references.
torch.serialization.add_safe_globals([_TensorReference])


def _tensors_folder(path):
  return str(path) + '.tensors'


def _tensor_file(folder, tid):
  return os.path.join(folder, f'tensor_{tid}.pt')


def save(data, path, master_only=True, global_master=False):
  """Saves `data` (any nesting of lists, tuples, dicts, sets) to `path`.

  Tensors are moved to CPU one at a time. With master_only only the master
  replica writes (each host's, or only the global one when global_master);
  otherwise each replica needs its own `path`.
  """
  from torch_xla.core import xla_model as xm  # on use: the core needs _XLAC

  should_write = (not master_only) or xm.is_master_ordinal(
      local=not global_master)
  if should_write:
    # Everything is written beside the target first; the tensors' folder takes its
    # place, then the main file (written last, atomically): a failure midway leaves
    # no main file that points at missing tensors.
    folder = _tensors_folder(path)
    staging = f'{folder}.tmp-{os.getpid()}'
    if os.path.isdir(staging):
      shutil.rmtree(staging)
    os.makedirs(staging)
    count = 0

    def write_tensor(t):
      nonlocal count
      tid = count
      count += 1
      torch.save(t.detach().cpu(), _tensor_file(staging, tid))
      return _TensorReference(tid)

    try:
      refs = xu.map_tensors(data, write_tensor)
      if os.path.isdir(folder):
        shutil.rmtree(folder)  # no stale tensors from an earlier save
      os.replace(staging, folder)
    except BaseException:
      shutil.rmtree(staging, ignore_errors=True)
      raise
    xu.atomic_save(refs, path)
  xm.rendezvous('torch_xla.utils.serialization.save')


def load(path):
  """Loads data written by save(); its tensors are CPU tensors."""
  folder = _tensors_folder(path)
  refs = torch.load(path)
  loaded = {}

  def resolve(x):
    if isinstance(x, _TensorReference):
      if x.tid not in loaded:
        loaded[x.tid] = torch.load(_tensor_file(folder, x.tid))
      return loaded[x.tid]
    if isinstance(x, dict):
      out = xu._new_like_dict(x)
      for k, v in x.items():
        out[k] = resolve(v)
      if getattr(x, '_metadata', None) is not None:
        out._metadata = x._metadata
      return out
    if isinstance(x, tuple) and hasattr(x, '_fields'):
      return type(x)(*[resolve(v) for v in x])
    if isinstance(x, (list, tuple, set, frozenset)):
      return type(x)(resolve(v) for v in x)
    return x

  return resolve(refs)
