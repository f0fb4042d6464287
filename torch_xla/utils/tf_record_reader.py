"""Reads TFRecord files: raw records, or tf.train.Example records as tensors.

A record is: uint64 length, uint32 masked CRC32C of the length, the data, uint32 masked
CRC32C of the data (little endian). Both CRCs are checked (google-crc32c, in C). Files
may be local or at any fsspec URL (gs:// through gcsfs), uncompressed, GZIP or ZLIB.
"""

import gzip
import io
import struct
import zlib

import google_crc32c

from torch_xla.utils import _tf_example, gcsfs

_COMPRESSIONS = ('', 'GZIP', 'ZLIB')


def crc32c(data):
  """CRC-32C (Castagnoli) of `data`."""
  return google_crc32c.value(bytes(data))


def masked_crc32c(data):
  """The masked CRC32C stored in TFRecord files."""
  crc = crc32c(data)
  return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


class _ZlibReader(io.RawIOBase):
  """Streaming reader of a zlib stream (gzip.GzipFile reads only the gzip framing)."""

  def __init__(self, raw, chunk_size):
    self._raw = raw
    self._chunk_size = chunk_size
    self._decompressor = zlib.decompressobj()
    self._pending = b''

  def readable(self):
    return True

  def readinto(self, b):
    while not self._pending:
      if self._decompressor.eof:
        return 0
      chunk = self._raw.read(self._chunk_size)
      self._pending = self._decompressor.decompress(chunk) if chunk else self._decompressor.flush()
      if not chunk and not self._pending:
        return 0
    n = min(len(b), len(self._pending))
    b[:n] = self._pending[:n]
    self._pending = self._pending[n:]
    return n

  def close(self):
    self._raw.close()
    super().close()


def _check_transforms(transforms):
  if transforms is None:
    return {}
  if not isinstance(transforms, dict):
    raise TypeError(f'TfRecordReader: transforms must be a dict of feature name to a callable or '
                    f"'STR', got {type(transforms).__name__}")
  for name, transform in transforms.items():
    if not callable(transform) and transform != 'STR':
      raise ValueError(f"TfRecordReader: the transform of feature {name!r} must be a callable or 'STR', "
                       f'got {transform!r}')
  return transforms


def _to_string(value):
  if isinstance(value, list):
    return [_to_string(v) for v in value]
  return value.numpy().tobytes().decode('utf-8')


class TfRecordReader:
  """Reads TfRecords or TfExamples.

  Args:
    path: the file of records (a local path or an fsspec URL such as gs://BUCKET/PATH).
    compression: '' (none), 'ZLIB' or 'GZIP'.
    buffer_size: the read buffer, in bytes.
    transforms: a dict from feature name to a callable applied to its tensor, or 'STR'
      to turn its bytes into a str.

  read_record() returns the next record's bytes, read_example() the next record parsed
  as a tf.train.Example: a dict from feature name to a float32 or int64 tensor, a uint8
  tensor for one bytes value, a list of them for several. Both return None at the end;
  iterating yields the examples. A truncated file or a CRC mismatch raises an error
  naming the file and the record.
  """

  def __init__(self, path, compression='', buffer_size=16 * 1024 * 1024, transforms=None):
    kind = (compression or '').upper()
    if kind not in _COMPRESSIONS:
      raise ValueError(f"TfRecordReader: unknown compression {compression!r}; expected '', 'ZLIB' or 'GZIP'")
    self._transforms = _check_transforms(transforms)
    self._path = path
    self._index = 0
    raw = gcsfs.generic_open(path, 'rb')
    if kind == 'GZIP':
      self._file = gzip.GzipFile(fileobj=raw, mode='rb')  # buffers itself
      self._underlying = raw
    elif kind == 'ZLIB':
      self._file = io.BufferedReader(_ZlibReader(raw, buffer_size), buffer_size)
      self._underlying = None
    else:
      self._file = raw if hasattr(raw, 'peek') else io.BufferedReader(raw, buffer_size)
      self._underlying = None

  def _read_exact(self, size, what):
    data = self._file.read(size)
    if len(data) != size:
      raise EOFError(f'{self._path}: record {self._index} is truncated ({what}: {len(data)} of {size} bytes)')
    return data

  def read_record(self):
    """The next record's bytes, or None at the end of the file."""
    header = self._file.read(8)
    if not header:
      return None
    if len(header) != 8:
      raise EOFError(f'{self._path}: record {self._index} is truncated (length: {len(header)} of 8 bytes)')
    (length_crc,) = struct.unpack('<I', self._read_exact(4, 'length CRC'))
    if masked_crc32c(header) != length_crc:
      raise ValueError(f'{self._path}: record {self._index} has a corrupt length (CRC mismatch)')
    (length,) = struct.unpack('<Q', header)
    data = self._read_exact(length, 'data')
    (data_crc,) = struct.unpack('<I', self._read_exact(4, 'data CRC'))
    if masked_crc32c(data) != data_crc:
      raise ValueError(f'{self._path}: record {self._index} has corrupt data (CRC mismatch)')
    self._index += 1
    return data

  def read_example(self):
    """The next record as a dict of tensors (see the class), or None at the end."""
    record = self.read_record()
    if record is None:
      return None
    try:
      example = _tf_example.parse_example(record)
    except Exception as e:  # protobuf's DecodeError
      raise ValueError(f'{self._path}: record {self._index - 1} is not a tf.train.Example ({e})') from e
    for name, transform in self._transforms.items():
      if name in example:
        example[name] = _to_string(example[name]) if transform == 'STR' else transform(example[name])
    return example

  def __iter__(self):
    return self

  def __next__(self):
    example = self.read_example()
    if example is None:
      raise StopIteration
    return example

  def close(self):
    self._file.close()
    if self._underlying is not None:
      self._underlying.close()

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self.close()
    return False
