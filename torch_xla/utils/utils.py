"""Small helpers: synthetic data generation, nested-data traversal, env parsing."""

import os
import shutil
import tempfile

import torch


class SampleGenerator:
  """Iterator returning the same `data` `sample_count` times.

  Usable in place of a DataLoader to feed synthetic data; iterating it again
  starts a fresh pass, so it works across epochs.
  """

  def __init__(self, data, sample_count):
    self._data = data
    self._sample_count = sample_count
    self._count = 0

  def __iter__(self):
    return SampleGenerator(self._data, self._sample_count)

  def __len__(self):
    return self._sample_count

  def __next__(self):
    if self._count >= self._sample_count:
      raise StopIteration
    self._count += 1
    return self._data


class DataWrapper:
  """Base for user objects that carry tensors to be sent to a device.

  Subclasses say which tensors they hold (get_tensors) and how to rebuild
  themselves around moved copies of them (from_tensors); the data loaders and
  the save helpers then treat them like any other nested container.
  """

  def get_tensors(self):
    """Returns the list of tensors held by this object."""
    raise NotImplementedError(
        f'{type(self).__name__} must implement DataWrapper.get_tensors()')

  def from_tensors(self, tensors):
    """Returns a new object like this one, holding `tensors` instead."""
    raise NotImplementedError(
        f'{type(self).__name__} must implement DataWrapper.from_tensors()')


def map_tensors(data, fn):
  """Returns `data` with every tensor nested in it replaced by fn(tensor).

  Walks lists, tuples (named too), dicts (keeping their type and a state
  dict's `_metadata`), sets and DataWrapper objects; anything else is kept.
  A tensor object seen twice maps to one result, so tied weights stay tied.
  """
  memo = {}

  def convert_tensor(t):
    key = id(t)
    if key not in memo:
      memo[key] = (t, fn(t))  # keep `t` alive so its id is not reused
    return memo[key][1]

  def visit(x):
    if isinstance(x, torch.Tensor):
      return convert_tensor(x)
    if isinstance(x, DataWrapper):
      return x.from_tensors([convert_tensor(t) for t in x.get_tensors()])
    if isinstance(x, dict):
      out = _new_like_dict(x)
      for k, v in x.items():
        out[k] = visit(v)
      metadata = getattr(x, '_metadata', None)
      if metadata is not None:
        out._metadata = metadata  # load_state_dict() reads module versions here
      return out
    if isinstance(x, tuple) and hasattr(x, '_fields'):  # namedtuple
      return type(x)(*[visit(v) for v in x])
    if isinstance(x, (list, tuple)):
      return type(x)(visit(v) for v in x)
    if isinstance(x, (set, frozenset)):
      return type(x)(visit(v) for v in x)
    return x

  return visit(data)


def tensors_in(data):
  """The distinct tensors nested in `data`, in the order map_tensors meets them."""
  found = []
  map_tensors(data, lambda t: found.append(t) or t)
  return found


def _new_like_dict(d):
  try:
    return type(d)()
  except TypeError:  # dict subclasses needing constructor arguments
    return {}


def as_list(x):
  """`x` if already a list or tuple, else [x]."""
  return x if isinstance(x, (list, tuple)) else [x]


def parse_none_str(value, none_str='None'):
  """None when `value` is the string `none_str`, else `value`."""
  return None if value == none_str else value


def getenv_as(name, type_fn, defval=None):
  """Environment variable `name` converted with type_fn (bool accepts 1/true/yes)."""
  value = os.environ.get(name)
  if value is None:
    return defval
  if type_fn is bool:
    return value.strip().lower() in ('1', 'true', 'yes', 'on')
  return type_fn(value)


class TmpFolder:
  """Context manager creating a temporary folder, removed on exit."""

  def __init__(self):
    self.name = tempfile.mkdtemp()

  def __enter__(self):
    return self.name

  def __exit__(self, *exc):
    shutil.rmtree(self.name, ignore_errors=True)
    return False


def atomic_save(obj, file_or_path):
  """torch.save() that leaves no partial file at a path: it writes a temporary file
  beside the target and renames it over the target once complete (the same file
  system, so the rename is atomic). File objects are written to directly."""
  if not isinstance(file_or_path, (str, os.PathLike)):
    torch.save(obj, file_or_path)
    return
  path = os.fspath(file_or_path)
  folder = os.path.dirname(os.path.abspath(path))
  handle, temporary = tempfile.mkstemp(prefix=os.path.basename(path) + '.', suffix='.tmp', dir=folder)
  os.close(handle)
  try:
    torch.save(obj, temporary)
    os.replace(temporary, path)
  except BaseException:
    os.unlink(temporary)
    raise
