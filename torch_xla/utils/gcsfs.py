"""File access that takes local paths or GCS ('gs://BUCKET/PATH') ones.

This build has no Google Cloud Storage client: the generic_* functions
work on local paths, and every GCS access raises GcsNotSupportedError.
"""

import builtins
import os

_GCS_PREFIX = 'gs://'


class GcsNotSupportedError(RuntimeError):
  pass


def is_gcs_path(path):
  """Whether `path` is a GCS path ('gs://...')."""
  return isinstance(path, str) and path.startswith(_GCS_PREFIX)


def _no_gcs(path):
  raise GcsNotSupportedError(
      f'cannot access {path}: Google Cloud Storage is not supported by this '
      'torch_xla build; copy the data to a local path')


# The GCS-only API of the reference; each raises GcsNotSupportedError.
def open(path, mode='r', encoding=None):
  _no_gcs(path)


def list(path):
  _no_gcs(path)


def stat(path):
  _no_gcs(path)


def remove(path):
  _no_gcs(path)


def rmtree(path):
  _no_gcs(path)


def read(path):
  _no_gcs(path)


def write(path, content):
  _no_gcs(path)


def generic_open(path, mode='r', encoding=None):
  """Opens a file for reading or writing, like the open() builtin."""
  if is_gcs_path(path):
    _no_gcs(path)
  return builtins.open(path, mode, encoding=encoding)


def generic_read(path):
  """The whole content of the file at `path`, as bytes."""
  with generic_open(path, 'rb') as f:
    return f.read()


def generic_write(output_string, path, makedirs=False):
  """Writes str, bytes, or a readable file object's content to `path`.

  makedirs=True creates the missing parent folders.
  """
  if is_gcs_path(path):
    _no_gcs(path)
  if makedirs:
    parent = os.path.dirname(path)
    if parent:
      os.makedirs(parent, exist_ok=True)
  content = output_string
  if not isinstance(content, (str, bytes, bytearray, memoryview)):
    content = content.read()  # a file object, text or binary
  with builtins.open(path, 'w' if isinstance(content, str) else 'wb') as f:
    f.write(content)
