"""Device, replication, step and collective helpers for XLA devices (`xm`)."""

import atexit
import queue
import sys
import threading

import torch

from torch_xla.core import _processes
from torch_xla.core import collective_ops as _collective_ops
from torch_xla.core import _replica
from torch_xla.utils import utils as _xu
from torch_xla.utils._daemon_threads import join_before_exit
from torch_xla._extension import xlac as _xlac

REDUCE_SUM = 'sum'
REDUCE_MUL = 'mul'
REDUCE_AND = 'and'
REDUCE_OR = 'or'
REDUCE_MIN = 'min'
REDUCE_MAX = 'max'
_REDUCE_TYPES = (REDUCE_SUM, REDUCE_MUL, REDUCE_AND, REDUCE_OR, REDUCE_MIN,
                 REDUCE_MAX)

# Hardware name reported to users (xla_device_hw) for each runtime kind.
_HW_NAMES = {'CPU': 'CPU', 'CUDA': 'GPU', 'TPU': 'TPU'}


# ---------------------------------------------------------------- devices


def _device_kind():
  return _xlac()._xla_device_kind()


def _normalize_kind(kind):
  kind = str(kind).upper()
  return 'CUDA' if kind == 'GPU' else kind


def _kind_matches(devkind):
  """Whether this process's devices are of (one of) the requested kind(s)."""
  if devkind is None:
    return True
  wanted = [devkind] if isinstance(devkind, str) else list(devkind)
  return _normalize_kind(_device_kind()) in {_normalize_kind(k) for k in wanted}


def _device_ordinal(device=None):
  """Ordinal of an XLA device given as torch.device, 'xla:N', int or None."""
  if device is None:
    return xla_device().index
  if isinstance(device, int):
    return device
  dev = torch.device(device)
  if dev.type != 'xla':
    raise ValueError(f'{device} is not an XLA device')
  return 0 if dev.index is None else dev.index


def is_xla_tensor(tensor):
  """Whether `tensor` lives on an XLA device."""
  return isinstance(tensor, torch.Tensor) and tensor.device.type == 'xla'


class DeviceIndexError(IndexError, RuntimeError):
  """An XLA device index outside this process's devices (an IndexError, as in
  torch_xla 2.x, and a RuntimeError, as earlier releases raised)."""


def xla_device(n=None, devkind=None):
  """Returns torch.device('xla', n); when n is None, the calling replica's
  device (xla:0 outside replication).

  devkind ('TPU', 'GPU', 'CPU' or a list of them) restricts the kind of
  device accepted; a RuntimeError says so when this process has none.
  """
  if not _kind_matches(devkind):
    raise RuntimeError(f'no XLA device of kind {devkind}: the XLA devices of '
                       f'this process are {_device_kind()}')
  if n is None:
    info = _replica.get()
    index = info.device if info is not None and info.device is not None else 0
  else:
    index = int(n)
  count = _xlac()._xla_device_count()
  if not 0 <= index < count:
    raise DeviceIndexError(f'XLA device xla:{index} does not exist '
                           f'({count} device(s) available)')
  return torch.device('xla', index)


def get_xla_supported_devices(devkind=None, max_devices=None):
  """List of 'xla:N' device strings (empty when none is of kind devkind). In SPMD mode
  just 'xla:0', the device that stands for all of them."""
  if not _kind_matches(devkind):
    return []
  count = 1 if _xlac()._xla_is_spmd() else _xlac()._xla_device_count()
  devices = [f'xla:{i}' for i in range(count)]
  return devices[:max_devices] if max_devices is not None else devices


def xla_real_devices(devices):
  """Maps XLA devices ('xla:N' or torch.device) to '<KIND>:N' strings."""
  kind = _device_kind()
  return [f'{kind}:{_device_ordinal(d)}' for d in devices]


def xla_device_hw(device):
  """Hardware type of an XLA device: 'CPU', 'GPU' or 'TPU'."""
  _device_ordinal(device)  # validates that it is an XLA device
  kind = _device_kind()
  return _HW_NAMES.get(kind, kind)


def xla_replication_devices(local_devices):
  """The real devices ('<KIND>:N') of all the replicas, given the local ones.

  The replicas are those of the calling thread's replication; the local
  devices must be among them. Across processes (torchrun) every replica's
  device is named by its global ordinal.
  """
  real_devices = xla_real_devices(local_devices)
  total = xrt_world_size()
  if total > len(real_devices) and _processes.launched():
    # Replicas of several processes: their devices by global ordinal.
    return [f'{_device_kind()}:{ordinal}' for ordinal in range(total)]
  if total > len(real_devices):
    raise RuntimeError(
        f'xla_replication_devices: {total} replicas, but only '
        f'{len(real_devices)} local devices {list(local_devices)} were given')
  return real_devices


def set_replication(device, devices):
  """Makes the calling thread the replica of `device` among `devices`.

  For threads of one's own, one per device: every thread calls it with its
  own device and the same device list, then runs its steps. The first call
  for a device list starts the replication over those devices; collectives
  and optimizer_step then reduce across the threads. An empty list makes the
  calling thread a single replica again and ends the replication it was part
  of (call it once the threads are done); a call with another device list
  replaces the replication.
  """
  devices = [str(torch.device(d)) for d in devices]
  device = str(torch.device(device))
  if devices and device not in devices:
    raise ValueError(f'{device} is not one of the replication devices {devices}')
  _replica.set_replication_devices(device, devices)
  previous = getattr(_replica.get(), 'replication', None)
  if len(devices) <= 1:
    _replica.set_thread(None)
    if previous is not None:
      previous.leave_thread()
    return
  ordinals = [_device_ordinal(d) for d in devices]
  replication = _replica.active()
  if replication is None or replication.devices != ordinals:
    if replication is not None:
      replication.close(f'xm.set_replication replaced the replicas over '
                        f'{replication.devices} with {ordinals}')
    replication = _replica.start(ordinals)
  if previous is not replication:
    replication.join_thread()
  _replica.set_thread(replication.info(ordinals.index(_device_ordinal(device))))
  _xlac()._xla_set_current_device(_device_ordinal(device))


# ------------------------------------------------------------ replication


def xrt_world_size(defval=1):
  """Number of replicas, `defval` when not replicated."""
  info = _replica.get()
  return defval if info is None else info.world_size


def world_size():
  """Number of replicas (1 when not replicated)."""
  return xrt_world_size()


def get_ordinal(defval=0):
  """Global replica ordinal of the caller, `defval` when not replicated."""
  info = _replica.get()
  return defval if info is None else info.ordinal


def get_local_ordinal(defval=0):
  """Replica ordinal of the caller among this host's, `defval` if not replicated."""
  info = _replica.get()
  return defval if info is None else info.local_ordinal


def is_master_ordinal(local=True):
  """Whether the caller is replica 0 (of this host when local, else globally)."""
  ordinal = get_local_ordinal() if local else get_ordinal()
  return ordinal == 0


def master_print(*args, fd=sys.stdout, finalizer=None):
  """print() on the global master replica only; then calls finalizer()."""
  if is_master_ordinal(local=False):
    print(*args, file=fd)
    if finalizer is not None:
      finalizer()


# ------------------------------------------------------------------ steps


# How long exit waits, in all, for the asynchronous step closures queued so far.
ASYNC_CLOSURES_EXIT_SECONDS = 60.0

_async_workers = []  # (queue, thread) of each thread's asynchronous closures
_async_workers_lock = threading.Lock()


def _finish_async_closures_at_exit():
  """Lets the asynchronous closures queued so far run, then ends their threads, at exit
  (torch_xla/utils/_daemon_threads.py says why)."""
  with _async_workers_lock:
    workers = list(_async_workers)
  for work, _ in workers:
    work.put(None)  # after the queued closures: the worker returns
  join_before_exit([thread for _, thread in workers], ASYNC_CLOSURES_EXIT_SECONDS)


atexit.register(_finish_async_closures_at_exit)


class _StepClosures:
  """Closures queued by add_step_closure(), run after the next step's sync.

  Synchronous closures run on the thread calling mark_step(); asynchronous
  ones run in order on one background thread, and mark_step() waits for
  those of the previous step before it syncs (so they have all run before
  the following mark_step returns) and re-raises the first error they hit.
  """

  def __init__(self):
    self._lock = threading.Lock()
    self._pending = []  # (closure, args, run_async) in queueing order
    self._async_queue = None
    self._async_error = None

  def add(self, closure, args, run_async):
    with self._lock:
      self._pending.append((closure, tuple(args), run_async))

  def run_pending(self):
    with self._lock:
      pending, self._pending = self._pending, []
    for closure, args, run_async in pending:
      if run_async:
        self._async_queue_get().put((closure, args))
      else:
        closure(*args)

  def wait_async(self):
    if self._async_queue is not None:
      self._async_queue.join()
    error, self._async_error = self._async_error, None
    if error is not None:
      raise error

  def _async_queue_get(self):
    with self._lock:
      if self._async_queue is None:
        self._async_queue = queue.Queue()
        thread = threading.Thread(target=self._async_worker, args=(self._async_queue,),
                                  name='xla_async_step_closures', daemon=True)
        thread.start()
        with _async_workers_lock:
          _async_workers.append((self._async_queue, thread))
      return self._async_queue

  def _async_worker(self, work):
    while True:
      item = work.get()
      if item is None:  # the process exits
        work.task_done()
        return
      closure, args = item
      try:
        if self._async_error is None:  # after an error, drop the rest
          closure(*args)
      except BaseException as e:  # reported by the next wait_async()
        self._async_error = e
      finally:
        work.task_done()


# Per replica device (None outside replication): each replica runs the closures queued
# for its device after its own step, including those queued by PyTorch's autograd
# threads while they ran the replica's backward (an activation checkpoint's recomputed
# forward, a hook).
_closures_lock = threading.Lock()
_closures_by_owner = {}


def _closure_owner():
  info = _replica.get()
  if info is not None and info.device is not None:
    return info.device
  replication = _replica.active()
  if replication is not None:
    # A thread of no replica (autograd's, a user's) working on a replica's device.
    device = _xlac()._xla_current_device()
    if device in replication.devices:
      return device
  return None


def _step_closures():
  """The step closures of the calling thread's replica (or of the process outside
  replication)."""
  owner = _closure_owner()
  with _closures_lock:
    closures = _closures_by_owner.get(owner)
    if closures is None:
      closures = _closures_by_owner[owner] = _StepClosures()
  return closures


def add_step_closure(closure, args=(), run_async=False):
  """Queues closure(*args) to run right after the next mark_step() sync.

  At that point the tensors it captured are materialized, so inspecting them
  costs no extra graph execution. Closures run in the order queued;
  run_async ones run on a background thread.
  """
  _step_closures().add(closure, args, run_async)


def _sync_devices():
  """The devices the calling thread's mark_step() runs: a replica's own, or
  (outside replication) every device that no running replica owns; None for
  all of them."""
  info = _replica.get()
  if info is not None and info.device is not None:
    return [info.device]
  replication = _replica.active()
  if replication is None:
    return None
  count = _xlac()._xla_device_count()
  return [d for d in range(count) if d not in replication.devices]


def mark_step(wait=False, reset_scope=True):
  """Compiles and runs the pending graph of the devices, then the step closures: the
  same as torch_xla.sync().

  In a replica, the replica's device (its graph with collectives runs
  together with the other replicas'); otherwise every device. wait=True
  blocks until the device work is done.
  """
  import torch_xla
  torch_xla.sync(wait=wait, reset_scope=reset_scope)


def wait_device_ops(devices=[]):
  """Blocks until all enqueued device work is done.

  The runtime waits for every device at once, which covers any `devices`.
  """
  _xlac()._xla_wait_device_ops()


def _gradients(optimizer):
  return [
      p.grad for group in optimizer.param_groups for p in group['params']
      if p.grad is not None
  ]


def _fetch_gradients(optimizer):
  """The gradients of the optimizer's parameters, the tensors reduce_gradients
  averages (their `.data`), in parameter order."""
  return [g.data for g in _gradients(optimizer)]


def reduce_gradients(optimizer, groups=None, pin_layout=True):
  """Averages the parameter gradients across replicas (no-op for one replica).

  The gradients are reduced in place inside the step's graph, one collective
  per dtype for all of them. With `groups`, each group averages its own.
  """
  count = xrt_world_size()
  if count <= 1:
    return
  gradients = _gradients(optimizer)
  if not gradients:
    return
  size = len(groups[0]) if groups else count
  all_reduce(REDUCE_SUM, gradients, scale=1.0 / size, groups=groups)


def optimizer_step(optimizer, barrier=False, optimizer_args={}, groups=None,
                   pin_layout=True):
  """Reduces gradients across replicas, steps the optimizer, returns its result.

  barrier=True also marks the step (not needed under ParallelLoader /
  MpDeviceLoader, whose iterators mark steps themselves).
  """
  reduce_gradients(optimizer, groups=groups)
  loss = optimizer.step(**optimizer_args)
  if barrier:
    mark_step()
  return loss


# -------------------------------------------------------------------- rng


def set_rng_state(seed, device=None):
  """Seeds the random number generator of `device` (default: xla_device())."""
  _xlac()._xla_set_rng_state(int(seed), _device_ordinal(device))


def get_rng_state(device=None):
  """The RNG state (an int seed) of `device` (default: xla_device()): setting it with
  set_rng_state() later repeats the random numbers drawn from here on. Once numbers
  were drawn since the seed was set, the generator is seeded anew with a seed derived
  from the last one, which is returned."""
  return _xlac()._xla_get_rng_state(_device_ordinal(device))


# ------------------------------------------------------------ graph control


def optimization_barrier_(tensors):
  """Places an optimization barrier over the tensors, in place: XLA computes what
  reads them afterwards from the barrier's results, and cannot merge that computation
  with what read them before, nor move work across it. Activation checkpointing puts
  one over the inputs of the recomputation, so that XLA recomputes instead of keeping
  the forward's activations."""
  tensors = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
  for t in tensors:
    if not is_xla_tensor(t):
      raise TypeError(f'optimization_barrier_: expected XLA tensors, got a {t.device} tensor')
  _xlac()._xla_optimization_barrier_(tensors)


# ----------------------------------------------------------------- memory


def get_memory_info(device):
  """Memory of `device`: kb_free/kb_total and bytes_used/bytes_limit.

  Never raises: when the runtime cannot report (or the device is not an XLA
  one) every value is 0. A limit of 0 means unknown.
  """
  try:
    used, limit, peak = (int(v) for v in _xlac()._xla_memory_info(_device_ordinal(device)))
  except Exception:  # documented: monitoring code must not crash training
    used, limit, peak = 0, 0, -1
  info = {
      'kb_free': max(limit - used, 0) // 1024,
      'kb_total': limit // 1024,
      'bytes_used': used,
      'bytes_limit': limit,
  }
  # The most in use at once so far, where the plugin reports it (GPU plugins do).
  if peak >= 0:
    info['peak_bytes_used'] = peak
  return info


# ------------------------------------------------------------------- save


def _to_cpu(data):
  return _xu.map_tensors(data, lambda t: t.cpu() if is_xla_tensor(t) else t)


def _maybe_convert_to_cpu(data, convert=True):
  """`data` with the pending values of its XLA tensors computed (one graph for
  all of them); with `convert`, those tensors moved to the CPU, else `data`
  itself."""
  tensors = [t for t in _xu.tensors_in(data) if is_xla_tensor(t)]
  if tensors:
    _xlac()._xla_sync_tensors(tensors, True)
  return _to_cpu(data) if convert else data


class ToXlaTensorArena:
  """Converts the tensors nested in data in one batch.

  transform(data) collects every value x nested in `data` for which
  select_fn(x) is true (walking what torch_xla.utils.utils.for_each_instance
  walks), makes one call convert_fn(list_of_them) that returns their
  converted forms in the same order (e.g. one transfer of all of them to the
  device), and returns `data` rebuilt around the converted values. A value
  referenced several times is converted once and stays shared.
  """

  def __init__(self, convert_fn, select_fn):
    self._convert_fn = convert_fn
    self._select_fn = select_fn

  def transform(self, data):
    selected = []
    _xu.for_each_instance(data, self._select_fn, selected.append)
    converted = list(self._convert_fn(selected)) if selected else []
    if len(converted) != len(selected):
      raise ValueError(f'ToXlaTensorArena: convert_fn returned {len(converted)} values for '
                       f'{len(selected)} selected ones')
    replacement = {id(x): new for x, new in zip(selected, converted)}
    return _xu.for_each_instance_rewrite(data, self._select_fn, lambda x: replacement[id(x)])


def send_cpu_data_to_device(datas, device, input_sharding=None):
  """`datas` with every CPU tensor nested in it copied to `device`; other
  values are kept. A lone tensor comes back as a one-element list, as in
  torch_xla. `input_sharding` (SPMD mode: a
  torch_xla.distributed.spmd.ShardingSpec) lays out each tensor it fits."""
  device = torch.device(device)
  if type(datas) is torch.Tensor:
    datas = [datas]

  def move(t):
    if t.device.type != 'cpu':
      return t
    moved = t.to(device)
    if input_sharding is not None and input_sharding.can_apply(moved):
      input_sharding.apply(moved)
    return moved

  return _xu.map_tensors(datas, move)


def save(data, file_or_path, master_only=True, global_master=False):
  """torch.save() of `data` with its nested XLA tensors moved to CPU first.

  With master_only only the master replica writes (each host's master, or
  just the global one when global_master); otherwise every replica writes and
  each needs its own destination. A path is written atomically: a temporary
  file renamed over it once complete, so a failure never leaves a partial
  checkpoint there.
  """
  should_write = (not master_only) or is_master_ordinal(local=not global_master)
  if should_write:
    _xu.atomic_save(_to_cpu(data), file_or_path)
  rendezvous('torch_xla.core.xla_model.save')


# ------------------------------------------------- mesh (out-of-graph) ops


def _replicated_caller():
  """The calling replica's info when there are several replicas, else None."""
  info = _replica.get()
  return info if info is not None and info.world_size > 1 else None


def rendezvous(tag, payload=b'', replicas=[]):
  """Waits for all replicas (or those in `replicas`) at `tag`.

  Returns the payloads of the participating replicas in ordinal order. A
  replica that cannot come (it failed, returned, or did not arrive within
  XLA_REPLICA_TIMEOUT seconds) makes it raise instead of waiting forever.
  Across processes (torchrun) the replicas meet in the launcher's store.
  """
  info = _replicated_caller()
  if info is None:
    return [payload]
  return _replica.rendezvous(info, tag, payload, replicas)


def do_on_ordinals(target, data=(), ordinals=(0,)):
  """Runs target(*data) on the replicas in `ordinals`; None on the others."""
  result = None
  if get_ordinal() in ordinals:
    args = data if isinstance(data, (list, tuple)) else (data,)
    result = target(*args)
  rendezvous('torch_xla.core.xla_model.do_on_ordinals')
  return result


def mesh_reduce(tag, data, reduce_fn):
  """reduce_fn(list of every replica's `data`, in ordinal order), computed on
  the host. XLA tensors in `data` reach reduce_fn as CPU tensors."""
  info = _replicated_caller()
  if info is None:
    return reduce_fn([data])
  return reduce_fn(_replica.rendezvous(info, tag, _to_cpu(data)))


# ------------------------------------------------------------ collectives


def _check_reduce_type(reduce_type):
  if reduce_type not in _REDUCE_TYPES:
    raise ValueError(f'invalid reduce type {reduce_type!r}; expected one of '
                     f'{_REDUCE_TYPES}')


def _is_replicated(tensors):
  """Whether the XLA tensors' device belongs to running replicas."""
  for t in tensors:
    if is_xla_tensor(t):
      return _replica.for_device(t.device.index) is not None
  return False


def _tensor_list(value, what, argument='input'):
  """`value` (a list or tuple of tensors) as a list; a TypeError naming the function
  otherwise."""
  if not isinstance(value, (list, tuple)) or not all(isinstance(t, torch.Tensor) for t in value):
    raise TypeError(f'xm.{what}: `{argument}` must be a tensor or a list of tensors, got '
                    f'{type(value).__name__}')
  return list(value)


def _write_outputs(outputs, results, what):
  """Writes each result into its output tensor, which takes the result's shape where it
  has another (as torch_xla's out= collectives replace their outputs' values)."""
  outputs = _tensor_list(outputs, what, 'output')
  if len(outputs) != len(results):
    raise ValueError(f'xm.{what}: {len(outputs)} output tensors for {len(results)} '
                     'inputs')
  with torch.no_grad():
    for o, r in zip(outputs, results):
      if o.shape != r.shape:
        o.resize_(r.shape)
      o.copy_(r)


# The collectives below run as the operators of torch_xla/core/collective_ops.py (which
# torch.compile can capture), under no_grad: their results never require gradients
# (torch_xla.core.functions has the differentiable ones).


def all_reduce(reduce_type, inputs, scale=1.0, groups=None, cctx=None,
               pin_layout=True):
  """Reduces tensors across replicas, then multiplies them by `scale`.

  A single tensor gives back a new reduced tensor; a list/tuple is reduced
  in place and returned. The reduction runs in the step's graph (every
  replica must call it); tensors of one dtype share one collective. With one
  replica the reduction of a value with itself alone is that value, so only
  `scale` applies.
  """
  _check_reduce_type(reduce_type)
  tensors = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
  if not tensors:
    return inputs
  if all(is_xla_tensor(t) for t in tensors):
    members, group_size = _collective_ops.flatten_groups(groups, 'all_reduce')
    with torch.no_grad():
      results = torch.ops.xla.all_reduce(tensors, reduce_type, float(scale), members,
                                         group_size)
  elif _is_replicated(tensors):
    raise RuntimeError('all_reduce: every tensor must be on the replica\'s XLA '
                       'device')
  else:  # host tensors of a single replica
    results = [t * scale if scale != 1.0 else t.clone() for t in tensors]
  if isinstance(inputs, torch.Tensor):
    return results[0]
  with torch.no_grad():
    for t, r in zip(tensors, results):
      t.copy_(r)
  return inputs


def all_gather(value, dim=0, groups=None, output=None, pin_layout=True):
  """Concatenates the `value` of every replica of the group along `dim`, in
  replica order (a copy of value for one replica). `value` may be a list of
  tensors, each gathered alike (a list comes back). With `output` (a tensor, or
  a list for a list), writes the result(s) into it and returns it."""
  if isinstance(value, torch.Tensor):
    if is_xla_tensor(value):
      members, group_size = _collective_ops.flatten_groups(groups, 'all_gather')
      with torch.no_grad():
        result = torch.ops.xla.all_gather(value, dim, members, group_size)
    else:
      result = value.clone()
    if output is None:
      return result
    _write_outputs([output], [result], 'all_gather')
    return output
  results = [all_gather(t, dim=dim, groups=groups) for t in _tensor_list(value, 'all_gather')]
  if output is None:
    return results
  _write_outputs(output, results, 'all_gather')
  return output


def reduce_scatter(reduce_type, input, scale, scatter_dim, shard_count,
                   groups=None, output=None, pin_layout=True):
  """Reduces `input` across the group, multiplies by `scale`, splits it along
  scatter_dim into shard_count blocks (the group size) and gives replica i of
  the group block i. `input` may be a list (each reduced alike, a list comes
  back). With `output` (a tensor, or a list for a list), writes the result(s)
  into it and returns it; an output of another shape takes the result's."""
  _check_reduce_type(reduce_type)
  if not isinstance(input, torch.Tensor):
    results = [
        reduce_scatter(reduce_type, t, scale, scatter_dim, shard_count, groups)
        for t in _tensor_list(input, 'reduce_scatter')
    ]
    if output is None:
      return results
    _write_outputs(output, results, 'reduce_scatter')
    return output
  if is_xla_tensor(input):
    members, group_size = _collective_ops.flatten_groups(groups, 'reduce_scatter')
    with torch.no_grad():
      result = torch.ops.xla.reduce_scatter(input, reduce_type, float(scale), scatter_dim,
                                            shard_count, members, group_size)
  else:
    if shard_count != 1:
      raise ValueError(f'reduce_scatter: shard_count {shard_count} for one '
                       'replica')
    result = input * scale
  if output is None:
    return result
  _write_outputs([output], [result], 'reduce_scatter')
  return output


def all_to_all(value, split_dimension, concat_dimension, split_count,
               groups=None, pin_layout=True):
  """XLA AllToAll: splits `value` along split_dimension into split_count blocks
  (the group size), sends block i to replica i of the group and concatenates
  the blocks received along concat_dimension, in replica order."""
  if is_xla_tensor(value):
    members, group_size = _collective_ops.flatten_groups(groups, 'all_to_all')
    with torch.no_grad():
      return torch.ops.xla.all_to_all(value, split_dimension, concat_dimension,
                                      split_count, members, group_size)
  if split_count != 1:
    raise ValueError(f'all_to_all: split_count ({split_count}) must equal the '
                     'number of replicas (1)')
  return value.clone()


def collective_permute(value, pairs):
  """Sends `value` along each (source, target) replica pair; a replica that
  is no pair's target receives zeros."""
  if not is_xla_tensor(value):
    raise ValueError('collective_permute: expected a tensor on an XLA device')
  pairs = [(int(s), int(t)) for s, t in pairs]
  with torch.no_grad():
    return torch.ops.xla.collective_permute(value, [s for s, _ in pairs],
                                            [t for _, t in pairs])


def collective_broadcast(tensors, root_ordinal=0, groups=None, pin_layout=True):
  """Overwrites `tensors`, in place, on every replica with their values on the
  replica `root_ordinal`. Every replica runs the same graph: each multiplies by
  1 (the root) or 0 (the others), a scalar sent as data, then all replicas sum."""
  with torch.no_grad():
    for tensor in tensors:
      scale = torch.tensor(1 if get_ordinal() == root_ordinal else 0,
                           dtype=tensor.dtype)
      tensor.mul_(scale.to(tensor.device))
  all_reduce(REDUCE_SUM, tensors, groups=groups, pin_layout=pin_layout)


def all_gather_bucketized(input_list, dim=0, groups=None, output=None,
                          pin_layout=False, bucket_cap_mb=160):
  """all_gather of each tensor of `input_list`, as a list. The gathers all join
  the step's graph (so `bucket_cap_mb`, which sizes torch_xla's coalesced
  buckets, changes nothing here). With `output` (a list), writes into it."""
  if pin_layout:
    raise RuntimeError(
        'For xm.all_gather_bucketized, pin_layout=True is not yet supported.')
  return all_gather(_tensor_list(input_list, 'all_gather_bucketized', 'input_list'), dim=dim,
                    groups=groups, output=output)


def reduce_scatter_bucketized(reduce_type, input_list, scale, scatter_dim,
                              shard_count, groups=None, output=None,
                              pin_layout=False, bucket_cap_mb=160):
  """reduce_scatter of each tensor of `input_list` (or of one tensor), as
  reduce_scatter gives it; the collectives join the step's graph, so
  `bucket_cap_mb` changes nothing here."""
  return reduce_scatter(reduce_type, input_list, scale, scatter_dim,
                        shard_count, groups=groups, output=output,
                        pin_layout=pin_layout)
