"""CheckpointManager: checkpoints of a training run by step, through DCP and the SPMD
planners, under one base path (a local folder or any fsspec URL).

Each checkpoint is a DCP checkpoint in `<path>/<step>`, with a small file of its own
(`.manager_metadata`: the step and the time it was taken) written once the checkpoint
is complete; the manager tracks the checkpoints that have it, so a save cut short is
never restored. The run is one process (SPMD drives every device from it).
"""
import logging
import pickle
import signal
import threading
import warnings
from collections import deque
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime
from typing import Deque, List, Optional

import fsspec
import torch.distributed as dist
import torch.distributed.checkpoint as dist_cp
from fsspec.core import url_to_fs
from torch.distributed.checkpoint._fsspec_filesystem import FsspecReader, FsspecWriter
from torch.distributed.checkpoint._nested_dict import flatten_state_dict
from torch.distributed.checkpoint.api import CheckpointException
from torch.distributed.checkpoint.metadata import STATE_DICT_TYPE

from ._helpers import snapshot
from .planners import SPMDLoadPlanner, SPMDSavePlanner

_MANAGER_METADATA_FILE = '.manager_metadata'

_logger = logging.getLogger(__name__)


@dataclass
class _CheckpointMetadata:
  # The step at which the checkpoint was taken.
  step: int
  # When it was taken.
  ts: datetime


# Preemption: SIGTERM, noted by a handler installed once for the process.
_preemption_lock = threading.Lock()
_preemption_noticed = threading.Event()
_preemption_handler_installed = False
# A Python handler that was there before, called after the notice is taken.
_previous_sigterm_handler = None


def _on_sigterm(signum, frame):
  _preemption_noticed.set()
  if callable(_previous_sigterm_handler):
    _previous_sigterm_handler(signum, frame)


def _install_preemption_handler() -> bool:
  global _preemption_handler_installed, _previous_sigterm_handler
  with _preemption_lock:
    if _preemption_handler_installed:
      return True
    if threading.current_thread() is not threading.main_thread():
      _logger.warning('CheckpointManager: created outside the main thread, so SIGTERM cannot be watched; '
                      'no checkpoint will be taken on preemption')
      return False
    _previous_sigterm_handler = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _on_sigterm)
    _preemption_handler_installed = True
    return True


def _quiet_single_process_notice():
  """DCP warns at every save and load without a process group that it assumes one
  process; that is how the manager runs, so the notice is filtered out (that one
  message only)."""
  warnings.filterwarnings('ignore', category=UserWarning,
                          message='torch.distributed is disabled, unavailable or uninitialized, assuming the '
                          'intent is to (save|load) in a single process')


def _unwrap(e: CheckpointException) -> BaseException:
  """The one exception behind a DCP CheckpointException (a single process fails
  alone), else the CheckpointException itself."""
  failures = list(e.failures.values())
  if len(failures) == 1 and isinstance(failures[0], tuple) and isinstance(failures[0][0], BaseException):
    return failures[0][0]
  return e


def _join(base: str, name: str) -> str:
  return base.rstrip('/') + '/' + name


class CheckpointManager:
  """Checkpoints by step: saves every `save_interval` steps (or when forced, or on
  preemption), in the background if asked, keeps the newest `max_to_keep`, restores
  any step it tracks. torch_xla's CheckpointManager, for one process.

  >>> mgr = CheckpointManager('/ckpt/run1', save_interval=100, max_to_keep=3)
  >>> if mgr.all_steps():
  ...   prime_optimizer(optimizer)
  ...   state_dict = {'model': model.state_dict(), 'optim': optimizer.state_dict()}
  ...   mgr.restore(max(mgr.all_steps()), state_dict)
  ...   optimizer.load_state_dict(state_dict['optim'])
  >>> for step, batch in enumerate(loader):
  ...   ...
  ...   mgr.save_async(step, {'model': model.state_dict(), 'optim': optimizer.state_dict()})

  path: the base path (a local folder or an fsspec URL); checkpoint i is `<path>/i`.
  save_interval: save() and save_async() take a checkpoint at the steps it divides.
  max_to_keep: the most checkpoints kept; a new one deletes the oldest (by the time it
    was taken). 0: all are kept.
  max_pending_async: how many background saves may be unfinished; save_async waits
    for one to finish beyond that.
  num_of_threads: threads writing each checkpoint's files.
  process_group: the run is one process; a process group of several raises
    NotImplementedError.
  chkpt_on_preemption: watch for SIGTERM (a preemption notice): the first step
    should_save() is asked about after one arrives is saved, whatever the interval.
    The handler is installed by the first manager created in the main thread; it
    calls a Python handler installed before it, but replaces SIGTERM's default
    (ending the process): end it yourself after that save.
  """

  def __init__(self,
               path: str,
               save_interval: int,
               max_to_keep: Optional[int] = 0,
               max_pending_async: Optional[int] = 1,
               num_of_threads: Optional[int] = 1,
               process_group: Optional[dist.ProcessGroup] = None,
               chkpt_on_preemption: bool = True):
    if save_interval <= 0:
      raise ValueError(f'CheckpointManager: save_interval must be positive, got {save_interval}')
    if max_pending_async is None or max_pending_async <= 0:
      raise ValueError(f'CheckpointManager: max_pending_async must be positive, got {max_pending_async}')
    if max_to_keep is None or max_to_keep < 0:
      raise ValueError(f'CheckpointManager: max_to_keep must be non-negative, got {max_to_keep}')
    world = None
    if process_group is not None:
      world = dist.get_world_size(process_group)
    elif dist.is_available() and dist.is_initialized():
      world = dist.get_world_size()
    if world is not None and world > 1:
      raise NotImplementedError(f'CheckpointManager: the run has {world} processes; checkpoints of SPMD state are '
                                'taken by one process, which drives every device')
    self.base_path = str(path)
    self.save_interval = save_interval
    self.max_to_keep = max_to_keep
    self.num_of_threads = max(1, num_of_threads or 1)
    self.chkpt_on_preemption = chkpt_on_preemption
    self._async_worker_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix='checkpoint')
    self._async_sem = threading.Semaphore(max_pending_async)
    self._async_futures = []
    # One checkpoint is written at a time, and the tracked list changes under it.
    self._save_mutex = threading.Lock()
    self._tracked_chkpts = self._load_tracked_chkpts()
    self._preemption_step = None
    _quiet_single_process_notice()
    if chkpt_on_preemption:
      self.chkpt_on_preemption = _install_preemption_handler()

  # ------------------------------------------------------------------ tracking

  def _load_tracked_chkpts(self) -> Deque[_CheckpointMetadata]:
    """The checkpoints under the base path that have their metadata file, oldest first."""
    found, invalid = [], []
    fs, raw = url_to_fs(self.base_path)
    if not fs.exists(raw):
      fs.makedirs(raw, exist_ok=True)
    else:
      for entry in fs.ls(raw, detail=False):
        try:
          with fs.open(_join(entry, _MANAGER_METADATA_FILE), 'rb') as f:
            found.append(pickle.load(f))
        except Exception:  # noqa: BLE001  (anything unreadable is not a checkpoint of ours)
          invalid.append(entry)
    if invalid:
      _logger.warning('CheckpointManager: ignoring paths that are not complete checkpoints: %s', invalid)
    return deque(sorted(found, key=lambda m: m.ts))

  def _get_path(self, step: int) -> str:
    return _join(self.base_path, str(step))

  def _delete_chkpt_at_step(self, step: int):
    fs, raw = url_to_fs(self._get_path(step))
    if fs.exists(raw):
      fs.rm(raw, recursive=True)

  def _release_oldest_checkpoints(self):
    if self.max_to_keep > 0:
      while len(self._tracked_chkpts) > self.max_to_keep:
        oldest = self._tracked_chkpts.popleft()
        self._delete_chkpt_at_step(oldest.step)

  # ------------------------------------------------------------------- saving

  def _wait_for_data(self):
    import torch_xla
    torch_xla.sync(wait=True)

  def _save(self, step: int, state_dict: STATE_DICT_TYPE, planner: Optional[SPMDSavePlanner] = None):
    """Writes the checkpoint of `step` (replacing one of the same step), then its
    metadata file, then deletes the oldest beyond max_to_keep."""
    with self._save_mutex:
      path = self._get_path(step)
      self._tracked_chkpts = deque(m for m in self._tracked_chkpts if m.step != step)
      self._delete_chkpt_at_step(step)
      try:
        dist_cp.save(state_dict=state_dict,
                     storage_writer=FsspecWriter(path, thread_count=self.num_of_threads, per_thread_copy_ahead=0),
                     planner=planner or SPMDSavePlanner(), no_dist=True)
      except CheckpointException as e:
        raise _unwrap(e) from e
      metadata = _CheckpointMetadata(step=step, ts=datetime.now())
      with fsspec.open(_join(path, _MANAGER_METADATA_FILE), 'wb') as f:
        pickle.dump(metadata, f)
      self._tracked_chkpts.append(metadata)
      self._release_oldest_checkpoints()

  def should_save(self, step: int) -> bool:
    """Whether `step` is to be saved: save_interval divides it, or (with
    chkpt_on_preemption) a preemption was noticed and this is the step to save it at."""
    preempted = False
    if self.chkpt_on_preemption and self.reached_preemption(step):
      _logger.warning('CheckpointManager: preemption noticed at step %d; taking a checkpoint', step)
      preempted = True
    return step % self.save_interval == 0 or preempted

  def save(self, step: int, state_dict: STATE_DICT_TYPE, force: Optional[bool] = False) -> bool:
    """Takes a checkpoint of `state_dict` at `step` if should_save(step) or `force`,
    and returns whether it did. The pending values are computed first; the call returns
    once the checkpoint is written."""
    if self.should_save(step) or force:
      self._wait_for_data()
      self._save(step, state_dict)
      return True
    return False

  def save_async(self, step: int, state_dict: STATE_DICT_TYPE, force: Optional[bool] = False) -> bool:
    """As save(), but only the copy of `state_dict` to the CPU (each sharded tensor as
    its distinct tiles) happens before the call returns; the checkpoint is written in a
    background thread, and all_steps() lists it once it is complete. Waits first while
    max_pending_async saves are unfinished. Returns whether a checkpoint was taken."""
    if not (self.should_save(step) or force):
      return False
    self._wait_for_data()
    flat, mappings = flatten_state_dict(state_dict)
    cpu_state_dict = {k: snapshot(v) for k, v in flat.items()}
    planner = SPMDSavePlanner()
    planner._given_mappings = mappings
    self._async_sem.acquire()
    try:
      future = self._async_worker_pool.submit(self._save, step, cpu_state_dict, planner)
    except BaseException:
      self._async_sem.release()
      raise
    future.add_done_callback(self._async_done)
    self._async_futures.append(future)
    return True

  def _async_done(self, future):
    self._async_sem.release()
    error = future.exception()
    if error is not None:
      _logger.error('CheckpointManager: a background save failed: %s: %s', type(error).__name__, error)

  def join(self):
    """Waits for the background saves; raises the error of the first that failed."""
    futures, self._async_futures = self._async_futures, []
    wait(futures)
    for future in futures:
      if future.exception() is not None:
        raise future.exception()

  # ---------------------------------------------------------------- restoring

  def restore(self, step: int, state_dict: STATE_DICT_TYPE) -> None:
    """Loads the checkpoint of `step` into `state_dict`, in place (SPMDLoadPlanner: its
    XLA tensors may be sharded otherwise than when saved). Tensors are loaded into;
    other values are set in `state_dict`: give it to the owners' load_state_dict (an
    optimizer's param_groups)."""
    tracked = self.all_steps()
    if step not in tracked:
      raise ValueError(f'CheckpointManager: no checkpoint of step {step} under {self.base_path}; '
                       f'the tracked steps are {tracked}')
    try:
      dist_cp.load(state_dict=state_dict, storage_reader=FsspecReader(self._get_path(step)),
                   planner=SPMDLoadPlanner(), no_dist=True)
    except CheckpointException as e:
      raise _unwrap(e) from e

  def all_steps(self) -> List[int]:
    """The steps of the complete checkpoints the manager tracks, in increasing order."""
    return sorted(m.step for m in self._tracked_chkpts)

  def reached_preemption(self, step: int) -> bool:
    """Whether `step` is the step at which a noticed preemption is saved: the first step
    asked about after SIGTERM arrived (asking again about it answers True again)."""
    if not self.chkpt_on_preemption:
      raise RuntimeError('CheckpointManager: preemption is not watched; create the manager with '
                         'chkpt_on_preemption=True (in the main thread)')
    if self._preemption_step is None and _preemption_noticed.is_set():
      self._preemption_step = step
    return self._preemption_step == step
