"""Helpers for tests and training scripts: running a test in a process of its own
(`mp_test`), one-line training and test progress reports, and TensorBoard summaries.

The summary helpers take a writer from `get_summary_writer`, which uses PyTorch's
torch.utils.tensorboard or tensorboardX, whichever is installed. With neither, it warns
and returns None, and every helper given None does nothing: a script that logs
summaries still runs where TensorBoard is not installed.
"""
from datetime import datetime
import functools
import importlib
import multiprocessing
import time
import unittest
import warnings

import torch_xla.debug.metrics as met
import torch_xla.runtime as xr


def _run_in_child(module_name, qualname, args, kwargs):
  """Runs the undecorated function `qualname` of `module_name`; for a TestCase
  method, on a new instance of its class for the same test."""
  target = importlib.import_module(module_name)
  owner = None
  for part in qualname.split('.'):
    owner, target = target, getattr(target, part)
  target = getattr(target, '__wrapped__', target)
  if isinstance(owner, type) and issubclass(owner, unittest.TestCase):
    args = (owner(args[0]),) + tuple(args[1:])
  target(*args, **kwargs)


def mp_test(func):
  """Decorates a test function (a unittest.TestCase method or a plain function) to run
  in a new process of its own: the test sees a fresh runtime, and a crash or an abort
  fails the test instead of ending the caller. A TestCase method asserts that the
  process exited with 0; the exit code is returned.

  The process is started with the 'spawn' method (a forked copy of a process whose
  runtime has threads could hang), so the function must be defined at module level or
  in a class of the test module, and its other arguments must be picklable.
  """

  @functools.wraps(func)
  def wrapper(*args, **kwargs):
    child_args = args
    test_case = args[0] if args and isinstance(args[0], unittest.TestCase) else None
    if test_case is not None:
      child_args = (test_case._testMethodName,) + tuple(args[1:])
    process = multiprocessing.get_context('spawn').Process(
        target=_run_in_child, args=(func.__module__, func.__qualname__, child_args, kwargs))
    process.start()
    process.join()
    if test_case is not None:
      test_case.assertEqual(process.exitcode, 0,
                            f'{func.__qualname__} failed in its own process (exit code {process.exitcode})')
    return process.exitcode

  return wrapper


def _get_device_spec(device):
  ordinal = xr.global_ordinal()
  return str(device) if ordinal < 0 else f'{device}/{ordinal}'


def now(format='%H:%M:%S'):
  """The current local time, formatted."""
  return datetime.now().strftime(format)


_warned_no_tensorboard = False


def get_summary_writer(logdir):
  """A TensorBoard SummaryWriter writing to `logdir`, with the start time written as
  the scalar 'TensorboardStartTimestamp'; None when logdir is empty or None, or when
  neither torch.utils.tensorboard nor tensorboardX is installed (a warning says so)."""
  global _warned_no_tensorboard
  if not logdir:
    return None
  try:
    from torch.utils.tensorboard import SummaryWriter
  except ImportError:
    try:
      from tensorboardX import SummaryWriter
    except ImportError:
      if not _warned_no_tensorboard:
        _warned_no_tensorboard = True
        warnings.warn(f'get_summary_writer: no summaries are written to {logdir}: install '
                      'tensorboard (or tensorboardX) for them')
      return None
  writer = SummaryWriter(log_dir=logdir)
  write_to_summary(writer, 0, dict_to_write={'TensorboardStartTimestamp': time.time()})
  return writer


def _xla_metric_scalars():
  """The runtime's counters and the accumulated value of each metric, by name, and the
  sum of the aten:: counters (the ops that fell back to the CPU) as 'aten_ops_sum'."""
  scalars = {}
  aten_ops_sum = 0
  for name in met.counter_names():
    value = met.counter_value(name)
    if value is None:
      continue
    scalars[name] = value
    if name.startswith('aten::'):
      aten_ops_sum += value
  for name in met.metric_names():
    data = met.metric_data(name)
    if data is not None:
      scalars[name] = data[1]
  scalars['aten_ops_sum'] = aten_ops_sum
  return scalars


def write_to_summary(summary_writer, global_step=None, dict_to_write={}, write_xla_metrics=False):
  """Writes each (name, value) of `dict_to_write` as a scalar at `global_step`; with
  write_xla_metrics, also the runtime's counters, the accumulated value of each of its
  metrics, and 'aten_ops_sum'. Does nothing when summary_writer is None."""
  if summary_writer is None:
    return
  for name, value in dict_to_write.items():
    summary_writer.add_scalar(name, value, global_step)
  if write_xla_metrics:
    for name, value in _xla_metric_scalars().items():
      summary_writer.add_scalar(name, value, global_step)


def close_summary_writer(summary_writer):
  """Flushes and closes the writer; nothing for None."""
  if summary_writer is not None:
    summary_writer.flush()
    summary_writer.close()


def print_training_update(device, step, loss, rate, global_rate, epoch=None, summary_writer=None):
  """Prints one line of training progress: the device (and replica ordinal), epoch,
  step, loss, the batch's and the average examples per second, and the time. With a
  summary writer, also writes the two rates as scalars."""
  fields = [
      'Training', f'Device={_get_device_spec(device)}',
      f'Epoch={epoch}' if epoch is not None else None, f'Step={step}', f'Loss={loss:.5f}',
      f'Rate={rate:.2f}', f'GlobalRate={global_rate:.2f}', f'Time={now()}'
  ]
  print('|', ' '.join(f for f in fields if f), flush=True)
  write_to_summary(summary_writer, dict_to_write={
      'examples/sec': rate,
      'average_examples/sec': global_rate,
  })


def print_test_update(device, accuracy, epoch=None, step=None):
  """Prints one line of test results: the device (and replica ordinal), step, epoch,
  accuracy and the time."""
  fields = [
      'Test', f'Device={_get_device_spec(device)}', f'Step={step}' if step is not None else None,
      f'Epoch={epoch}' if epoch is not None else None,
      f'Accuracy={accuracy:.2f}' if accuracy is not None else None, f'Time={now()}'
  ]
  print('|', ' '.join(f for f in fields if f), flush=True)
