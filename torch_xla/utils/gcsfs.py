"""Files on Google Cloud Storage ('gs://BUCKET/PATH') and, through the same calls, any
fsspec URL (memory://, s3://, https://, ...) or local path.

fsspec does the work: gs:// paths go to the gcsfs package (pip install gcsfs, or the
package's [gcs] extra); without it, a GCS access raises GcsNotSupportedError saying so.
Local paths go to the builtins, with their exact semantics.
"""

import builtins
import collections
import datetime
import os

import fsspec

GcsBlob = collections.namedtuple('GcsBlob', 'path size mtime isdir')

CLOUD_STORAGE_PREFIX = 'gs://'


class GcsNotSupportedError(RuntimeError):
  """A gs:// path without the gcsfs package installed."""


def is_gcs_path(path):
  """Whether `path` is a GCS path ('gs://...')."""
  return isinstance(path, str) and path.startswith(CLOUD_STORAGE_PREFIX)


def is_url(path):
  """Whether `path` names a filesystem by protocol ('gs://', 'memory://', ...)."""
  return isinstance(path, str) and '://' in path and not path.startswith('file://')


def filesystem(path):
  """The fsspec filesystem of `path` and the path within it."""
  try:
    return fsspec.core.url_to_fs(path)
  except ImportError as e:
    if is_gcs_path(path):
      raise GcsNotSupportedError(f'cannot access {path}: Google Cloud Storage needs the gcsfs package '
                                 '(pip install gcsfs)') from e
    raise


def _protocol_path(fs, path):
  protocol = fs.protocol[0] if isinstance(fs.protocol, (tuple, builtins.list)) else fs.protocol
  return path if protocol in ('file', 'local') else fs.unstrip_protocol(path)


def _blob(fs, info):
  mtime = info.get('mtime', info.get('updated', info.get('created', 0.0)))
  if hasattr(mtime, 'timestamp'):
    mtime = mtime.timestamp()
  elif isinstance(mtime, str):
    mtime = _parse_time(mtime)
  return GcsBlob(path=_protocol_path(fs, info['name']), size=info.get('size') or 0, mtime=float(mtime or 0.0),
                 isdir=info.get('type') == 'directory')


def _parse_time(text):
  return datetime.datetime.fromisoformat(text.replace('Z', '+00:00')).timestamp()


def _has_wildcards(path):
  return any(c in path for c in '*?[')


def open(path, mode='r', encoding=None):
  """Opens a file at `path` (gs://BUCKET/PATH or any fsspec URL) for reading or writing."""
  filesystem(path)  # a clear error for gs:// without gcsfs
  return fsspec.open(path, mode, encoding=encoding).open()


def list(path):
  """The GcsBlob (path size mtime isdir) of each entry under `path`, or matching it when
  it has wildcards."""
  fs, inner = filesystem(path)
  if _has_wildcards(inner):
    return [_blob(fs, fs.info(p)) for p in fs.glob(inner)]
  return [_blob(fs, info) for info in fs.ls(inner, detail=True)]


def stat(path):
  """The GcsBlob of `path`."""
  fs, inner = filesystem(path)
  return _blob(fs, fs.info(inner))


def remove(path):
  """Removes the file at `path`."""
  fs, inner = filesystem(path)
  fs.rm_file(inner)


def rmtree(path):
  """Removes everything under `path` (a folder, or a pattern's matches)."""
  fs, inner = filesystem(path)
  if _has_wildcards(inner):
    for match in fs.glob(inner):
      fs.rm(match, recursive=True)
  else:
    fs.rm(inner, recursive=True)


def read(path):
  """The whole content of the file at `path`, as bytes."""
  fs, inner = filesystem(path)
  return fs.cat_file(inner)


def _content_bytes(content):
  if not isinstance(content, (str, bytes, bytearray, memoryview)):
    content = content.read()  # a file object, text or binary
  return content.encode('utf-8') if isinstance(content, str) else bytes(content)


def write(path, content):
  """Writes str, bytes or a readable file object's content to the file at `path`."""
  fs, inner = filesystem(path)
  fs.pipe_file(inner, _content_bytes(content))


def generic_open(path, mode='r', encoding=None):
  """Opens a local file or one at an fsspec URL, like the open() builtin."""
  if is_url(path):
    return open(path, mode, encoding=encoding)
  return builtins.open(path, mode, encoding=encoding)


def generic_read(path):
  """The whole content of a local file or one at an fsspec URL, as bytes."""
  if is_url(path):
    return read(path)
  with builtins.open(path, 'rb') as f:
    return f.read()


def generic_write(output_string, path, makedirs=False):
  """Writes str, bytes or a readable file object's content to a local path or fsspec URL.

  makedirs=True creates the missing parent folders of a local path (object stores have
  none to create).
  """
  if is_url(path):
    write(path, output_string)
    return
  if makedirs:
    parent = os.path.dirname(path)
    if parent:
      os.makedirs(parent, exist_ok=True)
  content = output_string
  if not isinstance(content, (str, bytes, bytearray, memoryview)):
    content = content.read()
  with builtins.open(path, 'w' if isinstance(content, str) else 'wb') as f:
    f.write(content)
