"""Small helpers: synthetic data generation, nested-data traversal, timing, env parsing."""

from concurrent import futures
import contextlib
import copy
import os
import shutil
import socket
import sys
import tempfile
import time
import types
import weakref

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

  next = __next__  # the iterator method's old name, which older scripts call


class FnDataGenerator:
  """Iterator yielding `count` synthetic (data, target) pairs.

  Each step draws data = gen_tensor(batch_size, *dims) and computes its target
  as func(data), so a script can train on a known function without a dataset.
  Iterating it again starts a fresh pass.
  """

  def __init__(self, func, batch_size, gen_tensor, dims=None, count=1):
    self._func = func
    self._batch_size = batch_size
    self._gen_tensor = gen_tensor
    self._dims = list(dims) if dims else [1]
    self._count = count
    self._emitted = 0

  def __iter__(self):
    return FnDataGenerator(self._func, self._batch_size, self._gen_tensor, dims=self._dims, count=self._count)

  def __len__(self):
    return self._count

  def __next__(self):
    if self._emitted >= self._count:
      raise StopIteration
    self._emitted += 1
    data = self._gen_tensor(self._batch_size, *self._dims)
    return data, self._func(data)

  next = __next__


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
      # Entries that are not tensors (None for an absent optional tensor, as
      # in a PackedSequence without sorted_indices) come back as they are.
      return x.from_tensors([visit(t) for t in x.get_tensors()])
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

  try:
    return visit(data)
  finally:
    # `visit` refers to itself, a cycle only the garbage collector frees: without these
    # the memo would keep every tensor it saw alive until then (and with it values
    # that the next step's graph would otherwise not hold).
    memo.clear()
    del visit


def tensors_in(data):
  """The distinct tensors nested in `data`, in the order map_tensors meets them."""
  found = []
  map_tensors(data, lambda t: found.append(t) or t)
  return found


def _new_like_dict(d):
  return _new_empty(d, dict)


def _new_empty(container, fallback):
  """An empty container of the type of `container`, or fallback() for
  subclasses whose constructor needs arguments."""
  try:
    return type(container)()
  except TypeError:
    return fallback()


# Values whose attributes are never walked: classes, modules and functions
# carry no user data, and a tensor that select_fn did not pick is a leaf.
_OPAQUE_TYPES = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                 torch.Tensor)


def _walked_attributes(value):
  """The attribute dict of a plain object whose attributes are walked, else None."""
  if isinstance(value, _OPAQUE_TYPES):
    return None
  attributes = getattr(value, '__dict__', None)
  return attributes if isinstance(attributes, dict) else None


def for_each_instance(value, select_fn, fn):
  """Calls fn(x) for every x nested in `value` for which select_fn(x) is true.

  Walks dict keys and values, lists, tuples, sets, DataWrapper tensors and
  the attributes of other objects (their __dict__). Each object is visited
  once, by identity, however often it is referenced, so shared objects and
  reference cycles are fine; a selected object is not walked into.
  """
  seen = set()
  stack = [value]
  # An explicit stack (children pushed in reverse) visits in the same order
  # as a recursive walk without Python's recursion limit on deep data.
  while stack:
    x = stack.pop()
    if id(x) in seen:
      continue
    seen.add(id(x))
    if select_fn(x):
      fn(x)
      continue
    if isinstance(x, dict):
      children = [item for kv in x.items() for item in kv]
    elif isinstance(x, (list, tuple, set, frozenset)):
      children = list(x)
    elif isinstance(x, DataWrapper):
      children = list(x.get_tensors())
    else:
      attributes = _walked_attributes(x)
      children = list(attributes.values()) if attributes is not None else []
    stack.extend(reversed(children))


def for_each_instance_rewrite(value, select_fn, fn):
  """`value` rebuilt with every x for which select_fn(x) is true replaced by fn(x).

  Walks what for_each_instance walks, in the same order, calling fn once per
  selected object. Containers come back as new containers of the same type
  (dict subclasses, named tuples, sets and frozensets included), DataWrapper
  objects through their from_tensors(), other objects as shallow copies with
  rewritten attributes; other values are kept. An object referenced several
  times is rewritten once and the results share it, and reference cycles are
  rebuilt as cycles. A cycle can only close through a mutable container, so
  it is rebuilt exactly unless it runs through a tuple or frozenset, which
  cannot exist before its elements: there the back reference keeps the
  original object.
  """
  done = {}  # id -> (original, result); the original is kept so its id stays unique

  def rewrite(x):
    entry = done.get(id(x))
    if entry is not None:
      return entry[1]
    if select_fn(x):
      result = fn(x)
    elif isinstance(x, dict):
      result = _new_like_dict(x)
      done[id(x)] = (x, result)
      for k, v in list(x.items()):
        new_key = rewrite(k)
        result[new_key] = rewrite(v)
      metadata = getattr(x, '_metadata', None)
      if metadata is not None:
        result._metadata = metadata
    elif isinstance(x, list):
      result = _new_empty(x, list)
      done[id(x)] = (x, result)
      result.extend(rewrite(v) for v in list(x))
    elif isinstance(x, set):
      result = _new_empty(x, set)
      done[id(x)] = (x, result)
      result.update(rewrite(v) for v in list(x))
    elif isinstance(x, (tuple, frozenset)):
      done[id(x)] = (x, x)  # a back reference met while rebuilding keeps the original
      items = [rewrite(v) for v in x]
      result = type(x)(*items) if hasattr(x, '_fields') else type(x)(items)
    elif isinstance(x, DataWrapper):
      done[id(x)] = (x, x)  # as for tuples: rebuilt only from its rewritten tensors
      result = x.from_tensors([rewrite(t) for t in x.get_tensors()])
    else:
      attributes = _walked_attributes(x)
      if attributes is None:
        result = x
      else:
        result = copy.copy(x)
        done[id(x)] = (x, result)
        for k, v in list(attributes.items()):
          result.__dict__[k] = rewrite(v)
    done[id(x)] = (x, result)
    return result

  return rewrite(value)


def as_list(x):
  """`x` if already a list or tuple, else [x]."""
  return x if isinstance(x, (list, tuple)) else [x]


def parse_none_str(value, none_str='None'):
  """None when `value` is the string `none_str`, else `value`."""
  return None if value == none_str else value


def check_env_flag(name, default=''):
  """Whether environment variable `name` is 'true' or a positive integer."""
  flag = os.getenv(name, default)
  return flag == 'true' or (flag.isdigit() and int(flag) > 0)


def getenv_as(name, type_fn, defval=None):
  """Environment variable `name` converted with type_fn (bool: true/yes/on or a
  positive integer)."""
  value = os.environ.get(name)
  if value is None:
    return defval
  if type_fn is bool:
    value = value.strip().lower()
    return value in ('true', 'yes', 'on') or (value.isdigit() and int(value) > 0)
  return type_fn(value)


class TmpFolder:
  """A temporary folder (its path in `.name`), removed when the context
  manager exits or, used without `with`, when the object is collected."""

  def __init__(self):
    self.name = tempfile.mkdtemp()
    self._remove = weakref.finalize(self, shutil.rmtree, self.name, True)

  def __enter__(self):
    return self.name

  def __exit__(self, *exc):
    self._remove()
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


def shape(inputs):
  """The shape of nested lists/tuples of equal length: [len, len of each, ...];
  [] for a value that is not a list or tuple."""
  if not isinstance(inputs, (list, tuple)):
    return []
  inner = None
  for item in inputs:
    item_shape = shape(item)
    if inner is None:
      inner = item_shape
    elif item_shape != inner:
      raise ValueError(f'shape: ragged nesting, {item_shape} differs from {inner}')
  return [len(inputs)] + (inner or [])


def flatten_nested_tuple(inputs):
  """The leaves of nested lists/tuples as one flat tuple."""
  if not isinstance(inputs, (list, tuple)):
    return (inputs,)
  return tuple(leaf for item in inputs for leaf in flatten_nested_tuple(item))


def list_copy_append(items, item):
  """A new list: `items` followed by `item`."""
  return list(items) + [item]


class LazyProperty:
  """A value computed by gen_fn() on the first read of `.value`, then kept."""

  def __init__(self, gen_fn):
    self._gen_fn = gen_fn

  @property
  def value(self):
    if self._gen_fn is not None:
      self._value = self._gen_fn()
      self._gen_fn = None
    return self._value


# ----------------------------------------------------------------- timing


def null_print(*args, **kwargs):
  """A print function that prints nothing."""


def eprint(*args, **kwargs):
  """print() to stderr."""
  print(*args, file=sys.stderr, **kwargs)


def get_print_fn(debug=None):
  """eprint when `debug` (default: the DEBUG environment variable, an integer)
  is set, else null_print."""
  if debug is None:
    debug = int(os.environ.get('DEBUG', '0'))
  return eprint if debug else null_print


def _elapsed_message(msg, start):
  return '{}{:.3f}ms'.format(msg, 1000.0 * (time.perf_counter() - start))


def timed(fn, msg='', printfn=eprint):
  """fn(), printing `msg` followed by the milliseconds it took through printfn
  (None: get_print_fn())."""
  printfn = get_print_fn() if printfn is None else printfn
  start = time.perf_counter()
  result = fn()
  printfn(_elapsed_message(msg, start))
  return result


class TimedScope:
  """Context manager printing `msg` followed by the milliseconds its body took
  through printfn (None: get_print_fn()), unless set_error() was called."""

  def __init__(self, msg='', printfn=eprint):
    self._msg = msg
    self._printfn = get_print_fn() if printfn is None else printfn
    self._error = None

  def __enter__(self):
    self._start = time.perf_counter()
    return self

  def __exit__(self, *exc):
    if self._error is None:
      self._printfn(_elapsed_message(self._msg, self._start))
    return False

  def set_error(self, error):
    """Marks the scope failed: its time is not printed."""
    self._error = error


# ---------------------------------------------------------------- threads


def parallel_work(num_workers, fn, *args):
  """[fn(*a) for a in zip(*args)] computed by `num_workers` threads, in order;
  the first exception a call raised is raised here."""
  with futures.ThreadPoolExecutor(max_workers=num_workers) as executor:
    return list(executor.map(fn, *args))


def get_free_tcp_ports(n=1):
  """`n` TCP port numbers the system reported free (each bound and released,
  so another process may still take one before it is used)."""
  ports = []
  for _ in range(n):
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
      s.bind(('', 0))
      ports.append(s.getsockname()[1])
  return ports
