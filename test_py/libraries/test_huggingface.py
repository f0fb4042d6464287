"""Hugging Face transformers' Trainer and accelerate's Accelerator on the XLA device,
against the same scripts run on the CPU without torch_xla. Each script runs in a
process of its own (the libraries choose their device at import). Skipped where the
libraries are not installed: scripts/library_tests.sh installs them apart from the
project's own environment and runs this folder."""

import json
import os
import subprocess
import sys

import pytest

LAUNCHED = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'launched')
TIMEOUT = 600


def _run(script, args=(), devices=None, **env):
  environment = dict(os.environ, **env)
  environment.pop('CPU_NUM_DEVICES', None)  # the libraries' default: one device
  if devices:
    environment['CPU_NUM_DEVICES'] = str(devices)
  out = subprocess.run([sys.executable, os.path.join(LAUNCHED, script), *args], env=environment,
                       capture_output=True, text=True, timeout=TIMEOUT)
  assert out.returncode == 0, out.stderr[-4000:]
  return json.loads(out.stdout.strip().splitlines()[-1])


def test_trainer_trains_gpt2_with_its_defaults(tmp_path):
  pytest.importorskip('transformers')
  eager = _run('trainer_causal_lm.py', [str(tmp_path / 'cpu')], USE_TORCH_XLA='0')
  xla = _run('trainer_causal_lm.py', [str(tmp_path / 'xla')])
  assert eager['device'] == 'cpu' and xla['device'] == 'xla:0'
  assert xla['optim'] == eager['optim'] == 'adamw_torch_fused'
  assert len(xla['losses']) == 3
  for got, want in zip(xla['losses'], eager['losses']):
    assert got == pytest.approx(want, rel=1e-4)


def test_trainer_trains_llama_sharded_by_fsdp_v2(tmp_path):
  # FSDPv2 over 4 CPU devices: the same losses as one device's eager training.
  pytest.importorskip('transformers')
  eager = _run('trainer_causal_lm.py', [str(tmp_path / 'cpu'), 'fsdp_v2'], USE_TORCH_XLA='0')
  xla = _run('trainer_causal_lm.py', [str(tmp_path / 'xla'), 'fsdp_v2'], devices=4, TF_CPP_MIN_LOG_LEVEL='2')
  assert eager['device'] == 'cpu' and xla['device'] == 'xla:0'
  # The MLP's up projection (64 x 32) is split along its largest dimension.
  assert xla['layout'] == '{devices=[4,1]0,1,2,3}', xla['layout']
  assert len(xla['losses']) == 3
  for got, want in zip(xla['losses'], eager['losses']):
    assert got == pytest.approx(want, rel=1e-4)


def test_accelerator_trains_t5():
  pytest.importorskip('accelerate')
  pytest.importorskip('transformers')
  eager = _run('accelerate_t5.py', USE_TORCH_XLA='0')
  xla = _run('accelerate_t5.py')
  assert eager['device'] == 'cpu' and xla['device'] == 'xla:0'
  for got, want in zip(xla['losses'], eager['losses']):
    assert got == pytest.approx(want, rel=2e-4)
