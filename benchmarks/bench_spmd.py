"""SPMD on 4 CPU devices, in one run:

- a transformer training step (2 encoder layers, d_model 128, AdamW) at global batch 32,
  data parallel two ways: by SPMD (the batch split over a 1-D mesh, one program for all
  devices) and by xmp.spawn (4 replica threads, xm.optimizer_step averaging the
  gradients); spmd_vs_replicated is their ratio (the goal: at most 1.1);
- FSDPv2 (SpmdFullyShardedDataParallel, AdamW) on the same model: the bytes each device
  holds for the parameters and the optimizer state after a step, against what one
  device holds for them unsharded (fsdp_bytes_vs_one_device; the goal: at most 0.3 on 4
  devices).

SPMD is a setting of the whole process, so each figure comes from a child process.

  python benchmarks/bench_spmd.py [--steps 10]
"""
import argparse
import json
import os
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
from common import child_rows, device_step_times, replica_share, report  # noqa: E402

GLOBAL_BATCH = 32
SEQUENCE = 32
D_MODEL = 128


def make_model():
  import torch
  import torch.nn as nn
  torch.manual_seed(0)

  class Model(nn.Module):

    def __init__(self):
      super().__init__()
      layer = nn.TransformerEncoderLayer(D_MODEL, 4, dim_feedforward=4 * D_MODEL, dropout=0.0, batch_first=True)
      self.encoder = nn.TransformerEncoder(layer, 2)
      self.head = nn.Linear(D_MODEL, 16)

    def forward(self, x):
      return self.head(self.encoder(x))

  return Model()


def batch():
  import torch
  g = torch.Generator().manual_seed(1)
  return torch.randn(GLOBAL_BATCH, SEQUENCE, D_MODEL, generator=g), torch.randn(GLOBAL_BATCH, SEQUENCE, 16,
                                                                                  generator=g)


def spmd_step_ms(steps):
  import numpy as np
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.runtime as xr
  import torch_xla.distributed.spmd as xs
  xr.use_spmd()
  mesh = xs.get_1d_mesh('data')
  model = make_model().to('xla')
  opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
  x, y = batch()
  x, y = x.to('xla'), y.to('xla')
  xs.mark_sharding(x, mesh, ('data', None, None))
  xs.mark_sharding(y, mesh, ('data', None, None))

  def step():
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    torch_xla.sync()

  for _ in range(3):
    step()
  xm.wait_device_ops()
  waiting, back_to_back = device_step_times(step, xm.wait_device_ops, steps)
  return statistics.median(waiting) * 1e3, back_to_back * 1e3


def replicated_step_ms(steps):
  import torch
  import torch_xla.core.xla_model as xm
  import torch_xla.distributed.xla_multiprocessing as xmp
  x_all, y_all = batch()
  timings = []

  def replica(index):
    x, y = replica_share(x_all, y_all)
    model = make_model().to(xm.xla_device())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
      opt.zero_grad()
      torch.nn.functional.mse_loss(model(x), y).backward()
      xm.optimizer_step(opt)
      xm.mark_step()

    for _ in range(3):
      step()
    xm.wait_device_ops()
    waiting, back_to_back = device_step_times(step, xm.wait_device_ops, steps)
    if index == 0:
      timings.append((statistics.median(waiting) * 1e3, back_to_back * 1e3))

  xmp.spawn(replica)
  return timings[0]


def fsdp_bytes():
  """(bytes device 0 holds for parameters and AdamW state under FSDPv2, bytes of them
  unsharded)."""
  import numpy as np
  import torch
  import torch_xla
  import torch_xla.runtime as xr
  import torch_xla.distributed.spmd as xs
  from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2
  xr.use_spmd()
  mesh = xs.Mesh(np.arange(xr.global_runtime_device_count()), (xr.global_runtime_device_count(), 1),
                 ('fsdp', 'model'))
  model = FSDPv2(make_model(), mesh=mesh)
  opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
  x, y = batch()
  opt.zero_grad()
  torch.nn.functional.mse_loss(model(x.to('xla')), y.to('xla')).backward()
  opt.step()
  torch_xla.sync()
  tensors = list(model.parameters())
  for state in opt.state.values():
    tensors += [v for v in state.values() if isinstance(v, torch.Tensor) and v.device.type == 'xla' and v.dim() > 0]
  held = whole = 0
  for t in tensors:
    shards = torch_xla._XLAC._xla_local_shards(t)
    held += shards[0][0].numel() * t.element_size()
    whole += t.numel() * t.element_size()
  return held, whole


def child(kind, steps):
  import torch_xla
  if kind == 'spmd':
    waiting, b2b = spmd_step_ms(steps)
    print(json.dumps({'bench': 'spmd_data_parallel', 'ms': waiting, 'back_to_back_ms': b2b}))
  elif kind == 'replicated':
    waiting, b2b = replicated_step_ms(steps)
    print(json.dumps({'bench': 'replicated_data_parallel', 'ms': waiting, 'back_to_back_ms': b2b}))
  else:
    held, whole = fsdp_bytes()
    print(json.dumps({'bench': 'fsdp_v2_state', 'bytes_per_device': held, 'bytes_unsharded': whole}))


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--steps', type=int, default=10)
  parser.add_argument('--child', choices=['spmd', 'replicated', 'fsdp'])
  args = parser.parse_args()
  if args.child:
    child(args.child, args.steps)
    return
  command = [sys.executable, os.path.abspath(__file__), '--steps', str(args.steps), '--child']
  env = {'CPU_NUM_DEVICES': '4', 'TF_CPP_MIN_LOG_LEVEL': '2'}
  rows = child_rows([(command + [kind], env) for kind in ('spmd', 'replicated', 'spmd', 'replicated', 'fsdp')])
  spmd = [r for r in rows if r['bench'] == 'spmd_data_parallel']
  replicated = [r for r in rows if r['bench'] == 'replicated_data_parallel']
  fsdp = [r for r in rows if r['bench'] == 'fsdp_v2_state'][0]
  s = statistics.median(r['ms'] for r in spmd)
  r_ = statistics.median(r['ms'] for r in replicated)
  report([{
      'devices': 4,
      'global_batch': GLOBAL_BATCH,
      'spmd_ms': s,
      'replicated_ms': r_,
      'spmd_vs_replicated': s / r_,
      'spmd_back_to_back_ms': statistics.median(r['back_to_back_ms'] for r in spmd),
      'replicated_back_to_back_ms': statistics.median(r['back_to_back_ms'] for r in replicated),
      'fsdp_mb_per_device': fsdp['bytes_per_device'] / 1e6,
      'unsharded_mb': fsdp['bytes_unsharded'] / 1e6,
      'fsdp_bytes_vs_one_device': fsdp['bytes_per_device'] / fsdp['bytes_unsharded'],
  }])


if __name__ == '__main__':
  main()
