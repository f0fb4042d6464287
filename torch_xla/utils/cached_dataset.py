"""A Dataset wrapper caching every sample as a file (torch.save, maybe gzip'ed).

Layout under `path`:
  METADATA                  JSON: count, compress, max_files_per_folder
  <index // max_files_per_folder>/<index>.pt[.gz]
Once fully cached (see warmup()) the folder can be moved to another machine
and used with data_set=None. `path` is a local folder or any fsspec URL (gs://BUCKET/DIR
through gcsfs, memory://, ...), shared by every machine that reads it.
"""

import gzip
import io
import json
import os
import tempfile

import torch
from fsspec.implementations.local import LocalFileSystem

from torch_xla.utils import gcsfs

_METADATA_FILE = 'METADATA'


class CachedDataset(torch.utils.data.Dataset):
  """Wraps `data_set`, serving each sample from its cache file once written.

  data_set=None reads everything (count, layout, compression) from the cache
  at `path`; max_files_per_folder and compress are then ignored. Samples are
  read back with torch.load's defaults (weights_only), so they should be
  tensors and plain Python containers/scalars.
  """

  def __init__(self, data_set, path, max_files_per_folder=1000, compress=True):
    self._data_set = data_set
    self._path = path
    self._fs, self._root = gcsfs.filesystem(path)
    metadata_path = self._join(_METADATA_FILE)
    if data_set is None:
      if not self._fs.exists(metadata_path):
        raise FileNotFoundError(
            f'{path}/{_METADATA_FILE} missing: a CachedDataset without a data_set '
            'needs a fully cached folder')
      metadata = json.loads(self._fs.cat_file(metadata_path))
    else:
      metadata = {
          'count': len(data_set),
          'compress': bool(compress),
          'max_files_per_folder': int(max_files_per_folder),
      }
      self._write(metadata_path, json.dumps(metadata).encode())
    self._count = metadata['count']
    self._compress = metadata['compress']
    self._max_files_per_folder = metadata['max_files_per_folder']

  def __len__(self):
    return self._count

  def _join(self, *parts):
    return '/'.join((self._root.rstrip('/'),) + parts)

  def _sample_path(self, index):
    folder = str(index // self._max_files_per_folder)
    ext = '.pt.gz' if self._compress else '.pt'
    return self._join(folder, f'{index}{ext}')

  def _write(self, path, data):
    if isinstance(self._fs, LocalFileSystem):
      _atomic_write(path, data)
    else:
      self._fs.pipe_file(path, data)  # an object store's writes are whole objects

  def _store(self, index, sample):
    buffer = io.BytesIO()
    torch.save(sample, buffer)
    data = buffer.getvalue()
    if self._compress:
      data = gzip.compress(data)
    self._write(self._sample_path(index), data)

  def _load(self, sample_path):
    data = self._fs.cat_file(sample_path)
    if self._compress:
      data = gzip.decompress(data)
    return torch.load(io.BytesIO(data))

  def __getitem__(self, index):
    if not -self._count <= index < self._count:
      raise IndexError(f'index {index} out of range for {self._count} samples')
    index %= self._count
    sample_path = self._sample_path(index)
    if self._fs.exists(sample_path):
      return self._load(sample_path)
    if self._data_set is None:
      raise FileNotFoundError(f'sample {index} is not cached ({sample_path}) '
                              'and there is no data_set to compute it')
    sample = self._data_set[index]
    self._store(index, sample)
    return sample

  def warmup(self):
    """Caches every sample not cached yet."""
    for index in range(self._count):
      if not self._fs.exists(self._sample_path(index)):
        if self._data_set is None:
          raise FileNotFoundError(f'sample {index} is not cached and there is '
                                  'no data_set to compute it')
        self._store(index, self._data_set[index])


def _atomic_write(path, data):
  # Write-then-rename: concurrent readers (other replicas, DataLoader
  # workers) never see a half-written file.
  folder = os.path.dirname(path)
  os.makedirs(folder, exist_ok=True)
  fd, tmp_path = tempfile.mkstemp(dir=folder, prefix='.tmp_')
  try:
    with os.fdopen(fd, 'wb') as f:
      f.write(data)
    os.replace(tmp_path, path)
  except BaseException:
    os.unlink(tmp_path)
    raise
