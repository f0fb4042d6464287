"""Pure-Python reader of TFRecord files (uncompressed, GZIP or ZLIB).

Each record is: uint64 length, uint32 masked CRC32C of the length, the data,
uint32 masked CRC32C of the data (little endian). Records are returned as
raw bytes: parsing tf.Example protos would need TensorFlow/protobuf, so it
is left to the caller (transforms, which apply to parsed examples, is
therefore not supported).
"""

import gzip
import io
import struct
import zlib


def _make_crc32c_table():
  table = []
  for byte in range(256):
    crc = byte
    for _ in range(8):
      crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)  # Castagnoli, reflected
    table.append(crc)
  return table


_CRC32C_TABLE = _make_crc32c_table()


def crc32c(data, crc=0):
  """CRC-32C (Castagnoli) of `data`."""
  crc ^= 0xFFFFFFFF
  table = _CRC32C_TABLE
  for byte in data:
    crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
  return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
  """The masked CRC32C stored in TFRecord files."""
  crc = crc32c(data)
  return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


class _ZlibReader(io.RawIOBase):
  """Streaming reader of a zlib-compressed file."""

  def __init__(self, raw, chunk_size):
    self._raw = raw
    self._chunk_size = chunk_size
    self._decompressor = zlib.decompressobj()
    self._buffer = b''

  def readable(self):
    return True

  def readinto(self, b):
    while not self._buffer:
      if self._decompressor.eof:
        return 0
      chunk = self._raw.read(self._chunk_size)
      if not chunk:
        self._buffer = self._decompressor.flush()
        if not self._buffer:
          return 0
        break
      self._buffer = self._decompressor.decompress(chunk)
    n = min(len(b), len(self._buffer))
    b[:n] = self._buffer[:n]
    self._buffer = self._buffer[n:]
    return n

  def close(self):
    self._raw.close()
    super().close()


class TfRecordReader:
  """Reads the records of a TFRecord file, one bytes object per read().

  compression: '' (none), 'GZIP' or 'ZLIB'. The length CRC of every record is
  checked; check_data_crc=True also checks the data CRC (pure Python, slow
  on large records). Iterating yields the records; read() returns None at
  the end.
  """

  def __init__(self, path, compression='', buffer_size=16 * 1024 * 1024,
               transforms=None, check_data_crc=False):
    if transforms is not None:
      raise NotImplementedError(
          'TfRecordReader: transforms apply to parsed tf.Example features, '
          'and this reader returns raw record bytes without parsing them')
    compression = (compression or '').upper()
    raw = open(path, 'rb')
    if compression == '':
      self._file = io.BufferedReader(raw, buffer_size)
    elif compression == 'GZIP':
      self._file = gzip.GzipFile(fileobj=raw)  # buffers itself
      self._file_to_close = raw
    elif compression == 'ZLIB':
      self._file = io.BufferedReader(_ZlibReader(raw, buffer_size), buffer_size)
    else:
      raw.close()
      raise ValueError(f'unknown TFRecord compression {compression!r}; expected '
                       "'', 'GZIP' or 'ZLIB'")
    self._path = path
    self._check_data_crc = check_data_crc

  def _read_exact(self, size, what):
    data = self._file.read(size)
    if len(data) != size:
      raise EOFError(f'{self._path}: truncated record ({what})')
    return data

  def read(self):
    """The next record as bytes, or None at the end of the file."""
    header = self._file.read(8)
    if not header:
      return None
    if len(header) != 8:
      raise EOFError(f'{self._path}: truncated record (length)')
    (length_crc,) = struct.unpack('<I', self._read_exact(4, 'length CRC'))
    if masked_crc32c(header) != length_crc:
      raise ValueError(f'{self._path}: corrupted record length (CRC mismatch)')
    (length,) = struct.unpack('<Q', header)
    data = self._read_exact(length, 'data')
    (data_crc,) = struct.unpack('<I', self._read_exact(4, 'data CRC'))
    if self._check_data_crc and masked_crc32c(data) != data_crc:
      raise ValueError(f'{self._path}: corrupted record data (CRC mismatch)')
    return data

  def __iter__(self):
    return self

  def __next__(self):
    record = self.read()
    if record is None:
      raise StopIteration
    return record

  def close(self):
    self._file.close()
    extra = getattr(self, '_file_to_close', None)
    if extra is not None:
      extra.close()

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self.close()
    return False
