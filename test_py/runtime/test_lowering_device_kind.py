"""No CPU-only shortcut leaks to other devices: with XLA_LOWERING_DEVICE_KIND=CUDA the
CPU device lowers as a GPU does (no host calls into PyTorch's CPU kernels or our host
kernels, float32 products carrying their precision attribute, the LSTM a loop over its
time steps), and every model of
benchmarks/bench_models.py still trains there, fully lowered, with eager's losses.

The models run in one child process (the lowering kind is fixed when the client
starts); the GPT-2-sized row runs at 2 layers, a 1,000-word vocabulary and 8 x 32
tokens, the same graph structure at a size the CPU runs in seconds.
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = ('mnist', 'encoder', 'mha', 'lstm', 'resnet18', 'gpt2')

CHILD = r'''
import json, sys
sys.path[:0] = sys.argv[2:4]
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import bench_models

builders = bench_models._models()


def train(name, device, steps=2):
  sizes = dict(layers=2, vocab=1000, batch=8, context=32) if name == 'gpt2' else {}
  torch.manual_seed(0)
  model, make_batch, loss_fn = builders[name](**sizes)
  model = model.train().to(device)
  opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
  inputs, target = make_batch()
  losses, text = [], ''
  for _ in range(steps):
    opt.zero_grad()
    loss = loss_fn(model(inputs.to(device)), target.to(device))
    loss.backward()
    opt.step()
    if device != 'cpu':
      text = torch_xla._XLAC._get_stablehlo([loss] + [p for p in model.parameters()])
      xm.mark_step()
    losses.append(loss.item())
  return losses, text


for name in sys.argv[1].split(','):
  eager, _ = train(name, 'cpu')
  met.clear_all()
  lowered, text = train(name, xm.xla_device())
  print(json.dumps({'name': name, 'eager': eager, 'xla': lowered,
                    'fallbacks': [n for n in met.counter_names()
                                  if n.startswith('aten::') and n != 'aten::_local_scalar_dense'],
                    'host_calls': [t for t in ('torch_xla_host', 'torch_xla_row_sum', 'torch_xla_column_sum',
                                               'torch_xla_pass_through', 'torch_xla_max_pool') if t in text],
                    'custom_calls': text.count('stablehlo.custom_call'),
                    'products': text.count('stablehlo.dot_general') + text.count('stablehlo.convolution'),
                    'loops': text.count('stablehlo.while'),
                    'precise_products': text.count('precision HIGHEST')}), flush=True)
'''


@pytest.fixture(scope='module')
def results():
  """Every model trained in one child process (one client, one import of torch)."""
  env = dict(os.environ, XLA_LOWERING_DEVICE_KIND='CUDA', CPU_NUM_DEVICES='1')
  out = subprocess.run([sys.executable, '-c', CHILD, ','.join(MODELS), os.path.join(ROOT, 'benchmarks'),
                        os.path.join(ROOT, 'examples')], env=env, capture_output=True, text=True, timeout=900)
  rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith('{')]
  return {row['name']: row for row in rows}, out.stderr[-3000:]


@pytest.mark.parametrize('name', MODELS)
def test_model_lowers_without_cpu_shortcuts(results, name):
  rows, stderr = results
  assert name in rows, stderr
  result = rows[name]
  assert result['fallbacks'] == [], result
  assert result['host_calls'] == [], result
  assert result['custom_calls'] == 0, result
  # Every float32 product carries the precision it must run at on a GPU (two per op).
  assert result['products'] > 0 and result['precise_products'] == 2 * result['products'], result
  for eager, lowered in zip(result['eager'], result['xla']):
    assert abs(eager - lowered) <= 1e-4 * max(1.0, abs(eager)), result
  # The LSTM's two layers: a loop over the time steps each, forward and backward
  # (cpp/ops/lstm_loop.cpp), not the steps unrolled.
  assert result['loops'] == (4 if name == 'lstm' else 0), result


PRECISION_CHILD = r'''
import json
import torch
import torch_xla
import torch_xla.core.xla_model as xm
from torch_xla.backends import get_mat_mul_precision, set_mat_mul_precision

a, b = torch.randn(64, 32), torch.randn(32, 16)
texts, errors = {}, {}
for precision in ('highest', 'high', 'default'):
  set_mat_mul_precision(precision)
  assert get_mat_mul_precision() == precision
  product = a.to(xm.xla_device()) @ b.to(xm.xla_device())
  texts[precision] = torch_xla._XLAC._get_stablehlo([product])
  errors[precision] = (product.cpu() - a @ b).abs().max().item()
print(json.dumps({'texts': texts, 'errors': errors}))
'''


def test_mat_mul_precision_reaches_the_graph_lowered_for_a_gpu():
  env = dict(os.environ, XLA_LOWERING_DEVICE_KIND='CUDA', CPU_NUM_DEVICES='1')
  out = subprocess.run([sys.executable, '-c', PRECISION_CHILD], env=env, capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr[-3000:]
  result = json.loads(out.stdout.strip().splitlines()[-1])
  for precision, level in (('highest', 'HIGHEST'), ('high', 'HIGH'), ('default', 'DEFAULT')):
    assert f'#stablehlo<precision {level}>, #stablehlo<precision {level}>' in result['texts'][precision]
    # The CPU plugin computes float32 in full at every level.
    assert result['errors'][precision] < 1e-4, result['errors']


def test_mat_mul_precision_setting_on_the_cpu_device():
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  from torch_xla.backends import get_mat_mul_precision, set_mat_mul_precision
  assert get_mat_mul_precision() == 'highest'
  with pytest.raises(ValueError, match="'default', 'high' or 'highest'"):
    set_mat_mul_precision('medium')
  with pytest.raises(TypeError):
    set_mat_mul_precision(3)
  assert get_mat_mul_precision() == 'highest'
  try:
    set_mat_mul_precision('default')
    assert get_mat_mul_precision() == 'default'
    a = torch.randn(8, 4)
    product = a.to(xm.xla_device()) @ a.t().to(xm.xla_device())
    # Graphs lowered for the CPU carry no precision: the CPU computes in full float32.
    assert 'precision' not in torch_xla._XLAC._get_stablehlo([product])
    torch.testing.assert_close(product.cpu(), a @ a.t())
  finally:
    set_mat_mul_precision('highest')
