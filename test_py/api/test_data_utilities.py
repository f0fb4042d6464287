"""The data utilities: TfRecordReader (records and tf.train.Example features, CRCs,
compressions, transforms), the gcsfs file functions on local paths and fsspec URLs, and
CachedDataset on a local folder and on fsspec's memory filesystem."""

import gzip
import os
import struct
import sys
import uuid
import zlib

import fsspec
import pytest
import torch

from torch_xla.utils import _tf_example, cached_dataset, gcsfs, tf_record_reader

# ------------------------------------------------------------ helpers


def record_bytes(data):
  """One TFRecord framing of `data`, with its CRCs."""
  length = struct.pack('<Q', len(data))
  return (length + struct.pack('<I', tf_record_reader.masked_crc32c(length)) + data +
          struct.pack('<I', tf_record_reader.masked_crc32c(data)))


def compress(payload, compression):
  return {'': payload, 'GZIP': gzip.compress(payload), 'ZLIB': zlib.compress(payload)}[compression]


def example_bytes(features):
  """A serialized tf.train.Example: float lists, int lists, bytes values."""
  example = _tf_example.Example()
  for name, values in features.items():
    feature = example.features.feature[name]
    if isinstance(values, bytes):
      feature.bytes_list.value.append(values)
    elif values and isinstance(values[0], bytes):
      feature.bytes_list.value.extend(values)
    elif values and isinstance(values[0], float):
      feature.float_list.value.extend(values)
    else:
      feature.int64_list.value.extend(values)
  return example.SerializeToString()


@pytest.fixture
def memory_root():
  """A fresh folder on fsspec's in-process memory filesystem."""
  root = f'memory://tests-{uuid.uuid4().hex}'
  yield root
  fs = fsspec.filesystem('memory')
  if fs.exists(root):
    fs.rm(root, recursive=True)


class CountingDataset(torch.utils.data.Dataset):

  def __init__(self, n):
    self.n = n
    self.fetches = 0

  def __len__(self):
    return self.n

  def __getitem__(self, i):
    self.fetches += 1
    return torch.full((2, 2), float(i)), i % 3


# -------------------------------------------------------------- records

RECORDS = [b'first', b'', b'\x00\x01\x02' * 1000, b'last record']


def test_crc32c_known_values():
  # Check values of CRC-32C (RFC 3720 appendix B.4 and the usual check input).
  assert tf_record_reader.crc32c(b'123456789') == 0xE3069283
  assert tf_record_reader.crc32c(bytes(32)) == 0x8A9136AA
  assert tf_record_reader.crc32c(b'\xff' * 32) == 0x62A8AB43


@pytest.mark.parametrize('compression', ['', 'GZIP', 'ZLIB', 'gzip'])
def test_records_in_each_compression(tmp_path, compression):
  path = str(tmp_path / 'data.tfrecord')
  with open(path, 'wb') as f:
    f.write(compress(b''.join(record_bytes(r) for r in RECORDS), compression.upper()))
  with tf_record_reader.TfRecordReader(path, compression=compression, buffer_size=64) as reader:
    assert [reader.read_record() for _ in RECORDS] == RECORDS
    assert reader.read_record() is None


def test_examples_become_tensors_with_transforms(tmp_path):
  rows = [
      {'image': [0.5, 1.5, -2.0], 'label': [3], 'name': b'cat', 'tags': [b'a', b'bc']},
      {'image': [1.0, 2.0, 3.0], 'label': [7], 'name': b'dog', 'tags': [b'x', b'']},
  ]
  path = str(tmp_path / 'examples.tfrecord')
  with open(path, 'wb') as f:
    f.write(compress(b''.join(record_bytes(example_bytes(row)) for row in rows), 'GZIP'))

  reader = tf_record_reader.TfRecordReader(path, compression='GZIP')
  first = reader.read_example()
  assert sorted(first) == ['image', 'label', 'name', 'tags']
  assert first['image'].dtype == torch.float32 and first['image'].tolist() == [0.5, 1.5, -2.0]
  assert first['label'].dtype == torch.int64 and first['label'].tolist() == [3]
  assert first['name'].dtype == torch.uint8 and bytes(first['name'].tolist()) == b'cat'
  assert [bytes(t.tolist()) for t in first['tags']] == [b'a', b'bc']
  reader.close()

  transforms = {'image': lambda t: t * 2, 'name': 'STR', 'tags': 'STR', 'missing': 'STR'}
  with tf_record_reader.TfRecordReader(path, compression='GZIP', transforms=transforms) as reader:
    examples = list(reader)
  assert [e['image'].tolist() for e in examples] == [[1.0, 3.0, -4.0], [2.0, 4.0, 6.0]]
  assert [e['name'] for e in examples] == ['cat', 'dog']
  assert [e['tags'] for e in examples] == [['a', 'bc'], ['x', '']]
  assert [e['label'].item() for e in examples] == [3, 7]


def test_records_from_an_fsspec_url(memory_root):
  url = f'{memory_root}/train.tfrecord'
  gcsfs.write(url, b''.join(record_bytes(example_bytes({'x': [float(i)]})) for i in range(3)))
  with tf_record_reader.TfRecordReader(url) as reader:
    assert [e['x'].item() for e in reader] == [0.0, 1.0, 2.0]


def test_bad_arguments_and_corrupt_files_raise_naming_the_record(tmp_path):
  path = str(tmp_path / 'bad.tfrecord')
  with pytest.raises(ValueError, match="unknown compression 'LZ4'"):
    tf_record_reader.TfRecordReader(path, compression='LZ4')
  with pytest.raises(ValueError, match="transform of feature 'x' must be a callable or 'STR'"):
    tf_record_reader.TfRecordReader(path, transforms={'x': 'INT'})

  good = record_bytes(b'payload')
  cases = [
      (record_bytes(b'ok') + good[:12] + b'PAYLOAD' + good[19:], ValueError, 'record 1 has corrupt data'),
      (b'\x08' + good[1:], ValueError, 'record 0 has a corrupt length'),
      (good[:-2], EOFError, r'record 0 is truncated \(data CRC: 2 of 4 bytes\)'),
      (good[:5], EOFError, r'record 0 is truncated \(length: 5 of 8 bytes\)'),
  ]
  for content, error, message in cases:
    with open(path, 'wb') as f:
      f.write(content)
    with tf_record_reader.TfRecordReader(path) as reader:
      with pytest.raises(error, match=message):
        while reader.read_record() is not None:
          pass
  with open(path, 'wb') as f:
    f.write(record_bytes(b'\xff\xff not a proto'))
  with tf_record_reader.TfRecordReader(path) as reader:
    with pytest.raises(ValueError, match='record 0 is not a tf.train.Example'):
      reader.read_example()


# ---------------------------------------------------------------- gcsfs


def test_generic_functions_on_local_paths(tmp_path):
  path = str(tmp_path / 'a' / 'b' / 'f.txt')
  assert not gcsfs.is_gcs_path(path) and gcsfs.is_gcs_path('gs://bucket/x')
  gcsfs.generic_write('hello', path, makedirs=True)
  assert gcsfs.generic_read(path) == b'hello'
  with gcsfs.generic_open(path) as f:
    assert f.read() == 'hello'
  gcsfs.generic_write(b'\x00\x01', path)
  assert gcsfs.generic_read(path) == b'\x00\x01'
  with gcsfs.generic_open(path, 'rb') as src:
    copy = str(tmp_path / 'copy.bin')
    gcsfs.generic_write(src, copy)
  assert gcsfs.generic_read(copy) == b'\x00\x01'


def test_file_functions_on_an_fsspec_url(memory_root):
  gcsfs.write(f'{memory_root}/d/one.txt', 'first')
  gcsfs.generic_write(b'\x00' * 5, f'{memory_root}/d/two.bin')
  with gcsfs.open(f'{memory_root}/d/three.txt', 'w') as f:
    f.write('third')
  with gcsfs.generic_open(f'{memory_root}/d/three.txt') as f:
    assert f.read() == 'third'
  assert gcsfs.read(f'{memory_root}/d/one.txt') == b'first'
  assert gcsfs.generic_read(f'{memory_root}/d/two.bin') == bytes(5)

  blobs = sorted(gcsfs.list(f'{memory_root}/d'))
  assert [(os.path.basename(b.path), b.size, b.isdir) for b in blobs] == [
      ('one.txt', 5, False), ('three.txt', 5, False), ('two.bin', 5, False)]
  assert all(b.path.startswith('memory://') for b in blobs)
  assert sorted(os.path.basename(b.path) for b in gcsfs.list(f'{memory_root}/d/*.txt')) == ['one.txt', 'three.txt']
  blob = gcsfs.stat(f'{memory_root}/d/one.txt')
  assert blob.size == 5 and not blob.isdir and blob.mtime > 0

  gcsfs.remove(f'{memory_root}/d/one.txt')
  assert sorted(os.path.basename(b.path) for b in gcsfs.list(f'{memory_root}/d')) == ['three.txt', 'two.bin']
  gcsfs.rmtree(f'{memory_root}/d')
  assert not fsspec.filesystem('memory').exists(f'{memory_root}/d/two.bin')
  with pytest.raises(FileNotFoundError):
    gcsfs.read(f'{memory_root}/d/two.bin')


def test_gcs_without_gcsfs_says_what_to_install(monkeypatch):
  monkeypatch.setitem(sys.modules, 'gcsfs', None)  # as if the package were not installed
  for call in (lambda: gcsfs.generic_read('gs://bucket/x'), lambda: gcsfs.read('gs://bucket/x'),
               lambda: gcsfs.generic_open('gs://bucket/x', 'rb'), lambda: gcsfs.list('gs://bucket/')):
    with pytest.raises(gcsfs.GcsNotSupportedError, match=r'gs://bucket/.*needs the gcsfs package'):
      call()


# -------------------------------------------------------- cached dataset


@pytest.mark.parametrize('compress', [True, False])
def test_cached_dataset_in_a_local_folder(tmp_path, compress):
  source = CountingDataset(7)
  path = str(tmp_path / 'cache')
  ds = cached_dataset.CachedDataset(source, path, max_files_per_folder=3, compress=compress)
  assert len(ds) == 7
  sample, label = ds[4]
  assert torch.equal(sample, torch.full((2, 2), 4.0)) and label == 1
  assert source.fetches == 1
  ds[4]
  assert source.fetches == 1  # served from the cache file
  ext = '.pt.gz' if compress else '.pt'
  assert os.path.exists(os.path.join(path, '1', '4' + ext))
  if compress:
    raw = open(os.path.join(path, '1', '4' + ext), 'rb').read()
    assert raw[:2] == b'\x1f\x8b'  # gzip magic

  ds.warmup()
  assert source.fetches == 7
  assert sorted(os.listdir(path)) == ['0', '1', '2', 'METADATA']

  # A fully cached folder works without the original dataset.
  offline = cached_dataset.CachedDataset(None, path)
  assert len(offline) == 7
  for i in range(7):
    sample, label = offline[i]
    assert sample[0, 0].item() == float(i) and label == i % 3
  assert offline[-1][1] == 6 % 3
  with pytest.raises(IndexError):
    offline[7]


def test_cached_dataset_on_an_fsspec_url(memory_root):
  source = CountingDataset(5)
  url = f'{memory_root}/cache'
  ds = cached_dataset.CachedDataset(source, url, max_files_per_folder=2)
  assert ds[3][1] == 0 and source.fetches == 1
  assert ds[3][1] == 0 and source.fetches == 1
  ds.warmup()
  assert source.fetches == 5
  fs = fsspec.filesystem('memory')
  assert fs.exists(f'{url}/1/3.pt.gz') and fs.exists(f'{url}/METADATA')
  offline = cached_dataset.CachedDataset(None, url)
  assert [offline[i][0][0, 0].item() for i in range(5)] == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_cached_dataset_without_cache_fails(tmp_path, memory_root):
  for path in (str(tmp_path / 'missing'), f'{memory_root}/missing'):
    with pytest.raises(FileNotFoundError, match='METADATA missing'):
      cached_dataset.CachedDataset(None, path)
