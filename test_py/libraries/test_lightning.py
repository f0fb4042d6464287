"""Lightning with torch_xla installed. Lightning's XLA accelerator (its "tpu") counts
TPU chips (torch_xla._internal.tpu, as in torch_xla), so on a host without TPUs it is
unavailable and says so, and the CPU accelerator keeps working beside torch_xla.
Skipped where Lightning is not installed (scripts/library_tests.sh installs it)."""

import json
import os
import subprocess
import sys

import pytest

LAUNCHED = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'launched')


def _run(accelerator):
  env = dict(os.environ)
  env.pop('CPU_NUM_DEVICES', None)
  return subprocess.run([sys.executable, os.path.join(LAUNCHED, 'lightning_tiny.py'), accelerator], env=env,
                        capture_output=True, text=True, timeout=600)


def test_lightning_cpu_trains_beside_torch_xla():
  pytest.importorskip('lightning')
  out = _run('cpu')
  assert out.returncode == 0, out.stderr[-4000:]
  result = json.loads(out.stdout.strip().splitlines()[-1])
  assert result['device'] == 'cpu' and len(result['losses']) == 3


def test_lightning_xla_accelerator_needs_tpus():
  pytest.importorskip('lightning')
  from torch_xla._internal import tpu
  if tpu.num_available_devices() > 0:
    pytest.skip('this host has TPUs')
  out = _run('tpu')
  assert out.returncode != 0
  assert 'XLAAccelerator` can not run on your system since the accelerator is not available' in out.stderr
