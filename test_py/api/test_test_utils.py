"""torch_xla.test.test_utils: mp_test runs a test in a process of its own and fails the
test when that process fails; the progress lines carry the given values; the summary
helpers write the given scalars and the runtime's counters to a writer, and do nothing
without one (as where TensorBoard is not installed)."""

import os
import re
import sys
import unittest

import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.test.test_utils as xtu


@xtu.mp_test
def write_pid_and_device(path):
  with open(path, 'w') as f:
    f.write(f'{os.getpid()} {torch_xla.device().type}')


class MpCases(unittest.TestCase):
  __test__ = False  # run by the tests below, not collected

  @xtu.mp_test
  def test_passes(self):
    self.assertEqual(torch_xla.device().type, 'xla')

  @xtu.mp_test
  def test_fails(self):
    self.assertEqual(1, 2)


def test_mp_test_runs_a_function_in_another_process(tmp_path):
  path = tmp_path / 'child'
  assert write_pid_and_device(str(path)) == 0
  pid, device = path.read_text().split()
  assert int(pid) != os.getpid() and device == 'xla'


def test_mp_test_asserts_the_exit_code_of_a_test_case():
  MpCases('test_passes').test_passes()
  with pytest.raises(AssertionError, match=r'MpCases.test_fails failed in its own process \(exit code 1\)'):
    MpCases('test_fails').test_fails()


def test_print_training_and_test_updates(capsys):
  device = torch_xla.device()
  xtu.print_training_update(device, 7, 0.123456, 12.345, 6.789, epoch=2)
  xtu.print_test_update(device, 98.765, epoch=2)
  xtu.print_test_update(device, None, step=3)
  lines = capsys.readouterr().out.splitlines()
  spec = f'{device}/{xm.get_ordinal()}'
  assert re.fullmatch(rf'\| Training Device={spec} Epoch=2 Step=7 Loss=0.12346 Rate=12.35 '
                      r'GlobalRate=6.79 Time=\d\d:\d\d:\d\d', lines[0]), lines[0]
  assert re.fullmatch(rf'\| Test Device={spec} Epoch=2 Accuracy=98.77 Time=\d\d:\d\d:\d\d', lines[1]), lines[1]
  assert re.fullmatch(rf'\| Test Device={spec} Step=3 Time=\d\d:\d\d:\d\d', lines[2]), lines[2]


class RecordingWriter:

  def __init__(self):
    self.scalars = []
    self.closed = False

  def add_scalar(self, name, value, step=None):
    self.scalars.append((name, value, step))

  def flush(self):
    pass

  def close(self):
    self.closed = True


def test_write_to_summary_writes_scalars_and_the_runtime_counters():
  writer = RecordingWriter()
  xtu.write_to_summary(writer, 5, {'loss': 0.5, 'acc': 0.9})
  assert writer.scalars == [('loss', 0.5, 5), ('acc', 0.9, 5)]

  x = torch.ones(3, device=torch_xla.device())
  (x * 2).cpu()
  writer = RecordingWriter()
  xtu.write_to_summary(writer, 6, write_xla_metrics=True)
  written = {name: (value, step) for name, value, step in writer.scalars}
  counters = [n for n in met.counter_names() if met.counter_value(n) is not None]
  assert counters and all(written[n][0] == met.counter_value(n) for n in counters if n in written)
  assert set(counters) <= set(written)
  aten = sum(met.counter_value(n) for n in counters if n.startswith('aten::'))
  assert written['aten_ops_sum'] == (aten, 6)
  for name in met.metric_names():
    assert written[name] == (met.metric_data(name)[1], 6)

  writer = RecordingWriter()
  xtu.print_training_update(torch_xla.device(), 1, 1.0, 3.0, 2.0, summary_writer=writer)
  assert writer.scalars == [('examples/sec', 3.0, None), ('average_examples/sec', 2.0, None)]
  xtu.close_summary_writer(writer)
  assert writer.closed


def test_summary_helpers_without_tensorboard(monkeypatch, tmp_path):
  # Neither torch.utils.tensorboard nor tensorboardX importable.
  monkeypatch.setitem(sys.modules, 'torch.utils.tensorboard', None)
  monkeypatch.setitem(sys.modules, 'tensorboardX', None)
  monkeypatch.setattr(xtu, '_warned_no_tensorboard', False)
  with pytest.warns(UserWarning, match='install tensorboard'):
    writer = xtu.get_summary_writer(str(tmp_path))
  assert writer is None
  assert xtu.get_summary_writer(None) is None
  xtu.write_to_summary(writer, 1, {'loss': 1.0}, write_xla_metrics=True)
  xtu.close_summary_writer(writer)
  assert os.listdir(tmp_path) == []
