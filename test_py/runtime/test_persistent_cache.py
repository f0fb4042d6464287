"""The persistent compile cache: a second process loads the graphs the first compiled
(the MNIST step's first step well under the compile's time), values unchanged; a
corrupt entry is compiled and stored again; the cache can be moved, made read-only or
turned off."""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

STEP = '''
import json, sys, time
sys.path.insert(1, {examples!r})
import torch, torch.nn as nn, torch.optim as optim
import torch_xla, torch_xla.core.xla_model as xm, torch_xla.debug.metrics as met
import torch_xla.runtime as xr
from mnist_model import MNIST
if {off}:
  xr.initialize_cache(None)
torch.manual_seed(0)
device = xm.xla_device()
model = MNIST().train().to(device)
opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
x, y = torch.randn(64, 1, 28, 28).to(device), torch.randint(0, 10, (64,)).to(device)
start = time.monotonic()
opt.zero_grad()
loss = nn.NLLLoss()(model(x), y)
loss.backward()
opt.step()
xm.mark_step()
xm.wait_device_ops()
seconds = time.monotonic() - start
print(json.dumps(dict(seconds=seconds, loss=loss.item(), hits=met.counter_value('PersistentCacheHit') or 0,
                      misses=met.counter_value('PersistentCacheMiss') or 0,
                      corrupt=met.counter_value('PersistentCacheCorrupt') or 0,
                      compiles=(met.metric_data('CompileTime') or (0,))[0])))
'''


def first_step(folder, off=False, **env):
  environ = dict(os.environ, XLA_PERSISTENT_CACHE_PATH=str(folder), **env)
  code = STEP.format(examples=os.path.join(HERE, '..', '..', 'examples'), off=off)
  done = subprocess.run([sys.executable, '-c', code], env=environ, capture_output=True, text=True, timeout=120)
  assert done.returncode == 0, done.stderr[-3000:]
  return json.loads(done.stdout.strip().splitlines()[-1])


def entries(folder):
  return sorted(f for f in os.listdir(folder) if f.endswith('.xlaexe'))


def test_a_second_process_loads_what_the_first_compiled(tmp_path):
  first = first_step(tmp_path)
  assert first['misses'] >= 1 and first['hits'] == 0 and first['compiles'] >= 1
  assert len(entries(tmp_path)) == first['misses']
  second = first_step(tmp_path)
  assert second['hits'] == first['misses'] and second['misses'] == 0 and second['compiles'] == 0
  assert second['loss'] == first['loss']
  # Loading instead of compiling: the first step of the second process is much faster.
  assert second['seconds'] < first['seconds'] / 2, (first, second)


def test_a_corrupt_entry_is_compiled_and_stored_again(tmp_path):
  first = first_step(tmp_path)
  for name in entries(tmp_path):
    path = tmp_path / name
    path.write_bytes(path.read_bytes()[:100])  # truncated
  again = first_step(tmp_path)
  assert again['corrupt'] == first['misses'] and again['compiles'] >= 1 and again['loss'] == first['loss']
  assert first_step(tmp_path)['hits'] == first['misses']  # whole entries again


def test_read_only_and_turned_off_caches_write_nothing(tmp_path):
  read_only = first_step(tmp_path, XLA_PERSISTENT_CACHE_READ_ONLY='1')
  assert read_only['compiles'] >= 1 and entries(tmp_path) == []
  off = first_step(tmp_path, off=True)
  assert off['hits'] == off['misses'] == 0 and entries(tmp_path) == []
  disabled = first_step('0')
  assert disabled['hits'] == disabled['misses'] == 0
