"""Background loading of batches onto XLA devices.

A reader thread pulls batches from the wrapped loader and deals them round
robin to the devices (the i-th batch to devices[i % len(devices)]), in whole
rounds: with several devices a last round that cannot give every device a
batch is dropped, so that replicas run the same number of steps. Per
device, transfer threads move each batch with .to(device) into a bounded
queue that the device's PerDeviceLoader consumes, in loader order.
"""

import atexit
import threading
import weakref

import torch

from torch_xla.core import xla_model as xm
from torch_xla.debug import _sync_cause
from torch_xla.distributed._closable_queue import END, ClosableQueue
from torch_xla.utils import utils as xu
from torch_xla.utils._daemon_threads import join_before_exit


# How long exit waits, in all, for the loaders' threads to stop.
EXIT_JOIN_SECONDS = 10.0

_live_pipelines = weakref.WeakSet()


def _stop_pipelines_at_exit():
  """Stops every loader's threads at exit (torch_xla/utils/_daemon_threads.py says
  why): a script that breaks out of its loader loop ends while transfers run."""
  pipelines = list(_live_pipelines)
  for p in pipelines:
    p.abort()
  join_before_exit([t for p in pipelines for t in p._threads], EXIT_JOIN_SECONDS)


atexit.register(_stop_pipelines_at_exit)


class _Failure:
  """An exception raised by a worker, carried to the consumer in order."""

  def __init__(self, error):
    self.error = error


def _batch_size(batch, dim):
  found = xu.tensors_in(batch)
  return found[0].size(dim) if found and found[0].dim() > dim else None


class _Pipeline:
  """The threads and queues of one ParallelLoader pass.

  Kept apart from ParallelLoader so the threads never reference it: the
  loader can then be garbage collected, which aborts the pipeline.
  """

  def __init__(self, loader, devices, batchdim, fixed_batch_size,
               loader_prefetch_size, device_prefetch_size, transfer_threads,
               input_sharding=None):
    self._devices = devices
    self._input_sharding = input_sharding
    self._batchdim = batchdim
    self._fixed_batch_size = fixed_batch_size
    self._in_queues = [ClosableQueue(loader_prefetch_size) for _ in devices]
    self._out_queues = [ClosableQueue(device_prefetch_size) for _ in devices]
    self._lock = threading.Lock()
    self._turn = [threading.Condition(self._lock) for _ in devices]
    self._next_seq = [0] * len(devices)  # next sequence number to publish
    self._live_workers = [transfer_threads] * len(devices)
    self._aborted = False
    self._threads = [
        threading.Thread(target=self._read, args=(loader,),
                         name='xla_loader_reader', daemon=True)
    ]
    for i in range(len(devices)):
      for _ in range(transfer_threads):
        self._threads.append(
            threading.Thread(target=self._transfer, args=(i,),
                             name=f'xla_loader_transfer_{devices[i]}',
                             daemon=True))
    for t in self._threads:
      t.start()
    _live_pipelines.add(self)

  def _read(self, loader):
    n = len(self._devices)
    seqs = [0] * n
    try:
      first_size = None
      dealt = []  # the batches of the round being dealt, one per device
      for batch in loader:
        if self._fixed_batch_size:
          size = _batch_size(batch, self._batchdim)
          first_size = size if first_size is None else first_size
          if size != first_size:
            break  # old API: stop at the first batch of another size
        dealt.append(batch)
        if len(dealt) < n:
          continue
        for d, item in enumerate(dealt):
          if not self._in_queues[d].put((seqs[d], item)):
            return  # aborted
          seqs[d] += 1
        dealt = []
      # An incomplete last round is dropped: replicas take the same number of
      # steps, so the collectives of their steps always meet.
    except BaseException as e:
      # Delivered after the batches read so far, to the device due next.
      d = sum(seqs) % n
      self._in_queues[d].put((seqs[d], _Failure(e)))
    finally:
      for q in self._in_queues:
        q.close()

  def _transfer(self, i):
    device = self._devices[i]
    in_queue, out_queue, turn = self._in_queues[i], self._out_queues[i], self._turn[i]
    try:
      while True:
        item = in_queue.get()
        if item is END:
          return
        seq, batch = item
        if not isinstance(batch, _Failure):
          try:
            batch = _to_device(batch, device, self._input_sharding)
          except BaseException as e:
            batch = _Failure(e)
        # Publish in loader order even when several threads transfer.
        with turn:
          while self._next_seq[i] != seq and not self._aborted:
            turn.wait()
          if self._aborted:
            return
        if not out_queue.put(batch):
          return
        with turn:
          self._next_seq[i] += 1
          turn.notify_all()
    finally:
      with self._lock:
        self._live_workers[i] -= 1
        last = self._live_workers[i] == 0
      if last:
        out_queue.close()

  def next_item(self, i):
    """The next batch for device i; END when exhausted. Re-raises worker errors."""
    item = self._out_queues[i].get()
    if isinstance(item, _Failure):
      self.abort()
      raise item.error
    return item

  def abort(self):
    with self._lock:
      self._aborted = True
      for turn in self._turn:
        turn.notify_all()
    for q in self._in_queues + self._out_queues:
      q.close(drop_items=True)


# PT_XLA_DEBUG's name for the loader's syncs.
_STEP_END = 'torch_xla.sync in parallel loader at step end'


class PerDeviceLoader:
  """Iterator over the batches of one device, already on that device.

  Marks a step (xm.mark_step()) before every batches_per_execution batches
  and once at the end, so the training graph runs without an explicit barrier.
  """

  def __init__(self, parallel_loader, device_index):
    self._parallel_loader = parallel_loader
    self._index = device_index
    self._batches_since_step = parallel_loader.batches_per_execution
    self._done = False

  def __iter__(self):
    return self

  def __len__(self):
    return self._parallel_loader.per_device_samples(self._index)

  def __next__(self):
    if self._done:
      raise StopIteration
    if self._batches_since_step >= self._parallel_loader.batches_per_execution:
      with _sync_cause.sync_cause(_STEP_END):
        xm.mark_step()
      self._batches_since_step = 0
    item = self._parallel_loader._pipeline.next_item(self._index)
    if item is END:
      self._done = True
      if self._batches_since_step > 0:
        with _sync_cause.sync_cause(_STEP_END):
          xm.mark_step()  # run the graph of the last batches
      raise StopIteration
    self._batches_since_step += 1
    return item

  next = __next__  # older spelling


def _to_device(batch, device, input_sharding):
  """The batch's CPU tensors on `device`; in SPMD mode laid out by `input_sharding` (a
  torch_xla.distributed.spmd.ShardingSpec, or a dict of them by the batch's keys)."""
  if input_sharding is None:
    return xu.map_tensors(batch, lambda t: t.to(device))
  if isinstance(input_sharding, dict):
    if not isinstance(batch, dict):
      raise ValueError('input_sharding is a dict, so each batch must be a dict of tensors; got a '
                       f'{type(batch).__name__}')
    missing = sorted(k for k in batch if k not in input_sharding)
    if missing:
      raise KeyError(f'input_sharding has no sharding for the batch keys {missing}')
    return {k: _to_device(v, device, input_sharding[k]) for k, v in batch.items()}

  def move(t):
    moved = t.to(device)
    if input_sharding.can_apply(moved):
      input_sharding.apply(moved)
    return moved

  return xu.map_tensors(batch, move)


class ParallelLoader:
  """Wraps a DataLoader, uploading its batches to `devices` in the background.
  In SPMD mode `input_sharding` lays each batch out over the mesh (see _to_device).

  The i-th batch goes to devices[i % len(devices)], in whole rounds (see the
  module docstring). fixed_batch_size (older
  API, keyword only) stops at the first batch whose size along batchdim
  differs from the first one's.
  """

  def __init__(self, loader, devices, batchdim=0, batches_per_execution=1,
               loader_prefetch_size=8, device_prefetch_size=4,
               host_to_device_transfer_threads=1, input_sharding=None, *,
               fixed_batch_size=False):
    if not devices:
      raise ValueError('ParallelLoader needs at least one device')
    if batches_per_execution < 1 or host_to_device_transfer_threads < 1:
      raise ValueError('batches_per_execution and '
                       'host_to_device_transfer_threads must be >= 1')
    self._loader = loader
    self._devices = [torch.device(d) for d in devices]
    self.batches_per_execution = batches_per_execution
    self._pipeline = _Pipeline(loader, self._devices, batchdim,
                               fixed_batch_size, loader_prefetch_size,
                               device_prefetch_size,
                               host_to_device_transfer_threads,
                               input_sharding)
    # Stop the threads when the loader is collected (or at exit).
    self._finalizer = weakref.finalize(self, self._pipeline.abort)

  def per_device_loader(self, device):
    """The iterator of the batches sent to `device`."""
    device = torch.device(device)
    if device not in self._devices:
      raise ValueError(f'{device} is not one of the loader devices '
                       f'{self._devices}')
    return PerDeviceLoader(self, self._devices.index(device))

  def per_device_samples(self, index=0):
    """How many batches each device receives (len of the loader split)."""
    return len(self._loader) // len(self._devices)

  def close(self):
    """Stops the background threads; pending batches are dropped."""
    self._finalizer()


class MpDeviceLoader:
  """Iterable over `loader`'s batches on `device`: one ParallelLoader per pass.

  kwargs go to ParallelLoader. They are kept in `_parallel_loader_kwargs`, torch_xla's
  name, which libraries set (transformers adds the input sharding of FSDPv2 there).
  """

  def __init__(self, loader, device, **kwargs):
    self._loader = loader
    self._device = device
    self._parallel_loader_kwargs = kwargs

  def __iter__(self):
    parallel_loader = ParallelLoader(self._loader, [self._device],
                                     **self._parallel_loader_kwargs)
    return parallel_loader.per_device_loader(self._device)

  def __len__(self):
    return len(self._loader)
