"""torch_xla.debug.model_comparator: a model saved on the CPU and on the XLA device
agrees within tolerance; a perturbed layer, a different shape, NaNs and tensors saved by
one run only are reported; unnamed saves are named by their caller; steps get folders
of their own; nothing is saved when no directory is configured."""

import os

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.debug.model_comparator as mc

DEV = torch.device('xla')


class SmallNet(nn.Module):

  def __init__(self, perturb=0.0):
    super().__init__()
    self.conv = nn.Conv2d(1, 4, kernel_size=3)
    self.fc = nn.Linear(4 * 3 * 3, 5)
    self.perturb = perturb

  def forward(self, x):
    mc.save(None, x)
    x = F.relu(F.max_pool2d(self.conv(x), 2))
    mc.save('conv', x)
    x = self.fc(torch.flatten(x, 1)) + self.perturb
    return mc.save('result', F.log_softmax(x, dim=1))


@pytest.fixture(autouse=True)
def unconfigured():
  yield
  mc.configure(None)


def run(model, x, save_dir):
  mc.configure(str(save_dir))
  return model(x)


def test_cpu_and_xla_runs_agree(tmp_path):
  torch.manual_seed(0)
  x = torch.randn(2, 1, 8, 8)
  model = SmallNet()
  expected = run(model, x, tmp_path / 'cpu')
  out = run(model.to(DEV), x.to(DEV), tmp_path / 'xla')
  torch.testing.assert_close(out.cpu(), expected, rtol=1e-4, atol=1e-5)
  saved = sorted(os.listdir(tmp_path / 'xla'))
  assert saved == sorted(os.listdir(tmp_path / 'cpu'))
  # The unnamed save is named after the line of this file that made it.
  assert any(name.startswith('test_model_comparator.py.l') for name in saved), saved
  assert {'conv.0', 'result.0'} <= set(saved)
  assert mc.compare(str(tmp_path / 'cpu'), str(tmp_path / 'xla'), rtol=1e-3, atol=1e-3) == ''


def test_a_perturbed_layer_is_reported_with_its_largest_differences(tmp_path):
  torch.manual_seed(1)
  x = torch.randn(2, 1, 8, 8)
  model = SmallNet()
  run(model, x, tmp_path / 'a')
  model.fc.bias.data[3] += 1.0
  run(model, x, tmp_path / 'b')
  report = mc.compare(str(tmp_path / 'a'), str(tmp_path / 'b'), rtol=1e-3, atol=1e-3)
  assert 'Changes in saved tensor "result" with id=0' in report
  assert '"conv"' not in report
  # Every element of the result differs (log_softmax renormalizes); the largest first:
  # column 3, raised by about 1 - (the change of the normalizer).
  first = report.splitlines()[1]
  assert first.strip().split(':')[0] in ('[0, 3]', '[1, 3]'), report


def test_compare_tensors_tolerances_shapes_and_nans():
  a = torch.tensor([[1.0, 2.0], [3.0, float('nan')]])
  assert mc.compare_tensors(a, a.clone()) == ''
  b = a.clone()
  b[0, 1] = 2.1
  b[1, 0] = 3.0 + 1e-7
  report = mc.compare_tensors(a, b, rtol=1e-5, atol=1e-5)
  lines = report.splitlines()
  assert len(lines) == 1 and lines[0].startswith('[0, 1]: 2.0 vs. 2.09999'), report
  assert mc.compare_tensors(a, b, rtol=0.1) == ''
  c = a.clone()
  c[1, 1] = 4.0
  assert mc.compare_tensors(a, c).startswith('[1, 1]: nan vs. 4.0')
  assert mc.compare_tensors(a, a.reshape(4)) == 'Tensors have different shape: [2, 2] vs. [4]\n'
  many = mc.compare_tensors(torch.zeros(30), torch.arange(30.0), max_diffs=5)
  lines = many.splitlines()
  assert [line.split(':')[0] for line in lines[:5]] == ['[29]', '[28]', '[27]', '[26]', '[25]']
  assert lines[5] == '... 24 more differences (of 29)'


def test_steps_and_repeated_names(tmp_path):
  mc.configure(str(tmp_path))
  for step in (1, 2):
    for value in (1.0, 2.0):
      mc.save('layer', torch.full((2,), value * step), step=step)
  assert sorted(os.listdir(tmp_path)) == ['step-1', 'step-2']
  assert sorted(os.listdir(tmp_path / 'step-2')) == ['layer.0', 'layer.1']
  torch.testing.assert_close(torch.load(tmp_path / 'step-2' / 'layer.1'), torch.full((2,), 4.0))
  report = mc.tensor_file_compare(str(tmp_path / 'step-2' / 'layer.0'), str(tmp_path / 'step-1' / 'layer.0'))
  assert report.startswith('Changes in saved tensor "layer" with id=0 at step=2\n'), report


def test_tensors_of_one_run_only_are_mismatches(tmp_path):
  mc.configure(str(tmp_path / 'a'))
  mc.save('both', torch.ones(2))
  mc.save('only_a', torch.ones(2))
  mc.configure(str(tmp_path / 'b'))
  mc.save('both', torch.ones(2))
  report = mc.compare(str(tmp_path / 'a'), str(tmp_path / 'b'))
  assert report == f'Mismatch: only_a.0 not in {tmp_path / "b"}\n'


def test_unconfigured_save_returns_the_tensor_and_writes_nothing(tmp_path, monkeypatch):
  monkeypatch.delenv('MODELCMP_SAVEDIR', raising=False)
  mc.configure(None)
  t = torch.ones(3)
  assert mc.save('x', t) is t
  monkeypatch.setenv('MODELCMP_SAVEDIR', str(tmp_path))
  assert mc.save('x', t) is t
  assert os.listdir(tmp_path) == ['x.0']


def test_command_line_exit_status(tmp_path, capsys):
  for folder, value in (('a', 1.0), ('b', 1.0), ('c', 5.0)):
    mc.configure(str(tmp_path / folder))
    mc.save('t', torch.full((2,), value))
  assert mc.main([str(tmp_path / 'a'), str(tmp_path / 'b')]) == 0
  assert mc.main(['--atol', '0.1', str(tmp_path / 'a'), str(tmp_path / 'c')]) == 1
  assert 'Changes in saved tensor "t"' in capsys.readouterr().err
  with pytest.raises(FileNotFoundError, match='is not a directory'):
    mc.compare(str(tmp_path / 'a'), str(tmp_path / 'missing'))
