"""Replication on one host, in one run:

- the guides' MNIST training step at global batch 128 on 1, 2 and 4 devices (xmp.spawn,
  each replica its share of the batch, xm.optimizer_step averaging the gradients in the
  step graph), with eager PyTorch's step at batch 128 in the same process;
- the latency of an all_reduce of 1 MB and of 100 MB (float32) over 4 devices, against
  one memcpy of 100 MB per device: 4 numpy copies into written destinations, run at
  once on 4 threads (one memcpy alone is shown too). vs_memcpy_per_device scales the
  memcpys to the all_reduce's size.

A process has a fixed number of devices, so the figures come from child processes: one
with CPU_NUM_DEVICES=2 (1 and 2 devices), one with CPU_NUM_DEVICES=4 (4 devices,
1 device for comparison, and the all_reduces). Each step time is the median over three
rounds that alternate eager and the device counts.

  python benchmarks/bench_replication.py [--steps 20]
"""
import argparse
import json
import os
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
sys.path.insert(1, os.path.join(here, '..', 'examples'))
from common import child_rows, device_step_times, replica_share, report  # noqa: E402

GLOBAL_BATCH = 128
ROUNDS = 3


def mnist_step_times(device_counts, steps, reduce_gradients=None):
  """{devices: (ms per step waiting for each, ms per step back to back)} and eager's ms.

  Each replica takes its share of the global batch by its global ordinal (so replicas
  of several processes do too). reduce_gradients(optimizer), when given, replaces
  xm.optimizer_step's in-graph reduction (the step then calls optimizer.step()).
  """
  import torch
  import torch.nn as nn
  import torch.optim as optim

  import torch_xla.core.xla_model as xm
  import torch_xla.distributed.parallel_loader as pl
  import torch_xla.distributed.xla_multiprocessing as xmp
  from mnist_model import MNIST

  torch.manual_seed(0)
  host_model = MNIST().train()
  data = torch.randn(GLOBAL_BATCH, 1, 28, 28)
  target = torch.randint(0, 10, (GLOBAL_BATCH,))

  def eager_ms():
    model = MNIST().train()
    model.load_state_dict(host_model.state_dict())
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    loss_fn = nn.NLLLoss()
    samples = []
    for i in range(steps + 3):
      start = time.perf_counter()
      opt.zero_grad()
      loss_fn(model(data), target).backward()
      opt.step()
      if i >= 3:
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3

  def replica(index, timings):
    x, y = replica_share(data, target)
    model = MNIST().train()
    model.load_state_dict(host_model.state_dict())
    model = model.to(xm.xla_device())
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    loss_fn = nn.NLLLoss()

    def step():
      opt.zero_grad()
      loss_fn(model(x), y).backward()
      if reduce_gradients is None:
        xm.optimizer_step(opt)
      else:
        reduce_gradients(opt)
        opt.step()
      xm.mark_step()

    for _ in range(3):  # compile; the first steps' graphs differ (momentum buffers)
      step()
    xm.wait_device_ops()
    waiting, back_to_back = device_step_times(step, xm.wait_device_ops, steps)
    if index == 0:
      timings.append((statistics.median(waiting) * 1e3, back_to_back * 1e3))

  eager, results = [], {n: [] for n in device_counts}
  for _ in range(ROUNDS):
    eager.append(eager_ms())
    for n in device_counts:
      xmp.spawn(replica, args=(results[n],), nprocs=n)
  return statistics.median(eager), {
      n: (statistics.median(w for w, _ in t), statistics.median(b for _, b in t)) for n, t in results.items()
  }


def all_reduce_ms(megabytes, repeat=10):
  """Median ms of one all_reduce of `megabytes` MB per replica over every device, from
  the launch until the result is ready."""
  import torch

  import torch_xla.core.xla_model as xm
  import torch_xla.distributed.xla_multiprocessing as xmp

  elements = int(megabytes * 1e6) // 4
  times = []

  def replica(index):
    x = torch.full((elements,), float(index), device=xm.xla_device())
    xm.mark_step()
    samples = []
    for i in range(repeat + 2):
      xm.wait_device_ops()
      start = time.perf_counter()
      y = xm.all_reduce(xm.REDUCE_SUM, x)
      xm.mark_step()
      xm.wait_device_ops()
      if i >= 2:
        samples.append(time.perf_counter() - start)
    expected = sum(range(xm.xrt_world_size()))
    assert y[:4].cpu().tolist() == [float(expected)] * 4
    if index == 0:
      times.append(statistics.median(samples) * 1e3)

  xmp.spawn(replica)
  return times[0]


def memcpy_ms(megabytes, copies=1, repeat=10):
  """Median ms of `copies` memcpys of `megabytes` MB each, all at once on threads of
  their own (numpy releases the GIL while it copies)."""
  import threading

  import numpy as np
  pairs = [(np.ones(int(megabytes * 1e6) // 4, dtype=np.float32), np.zeros(int(megabytes * 1e6) // 4, np.float32))
           for _ in range(copies)]
  samples = []
  for _ in range(repeat + 2):
    threads = [threading.Thread(target=np.copyto, args=(dst, src)) for src, dst in pairs]
    start = time.perf_counter()
    for t in threads:
      t.start()
    for t in threads:
      t.join()
    samples.append(time.perf_counter() - start)
  return statistics.median(samples[2:]) * 1e3


def child(kind, steps):
  import torch_xla
  devices = torch_xla.device_count()
  if kind == 'mnist':
    counts = sorted({1, 2, devices} & set(range(1, devices + 1)))
    eager, xla = mnist_step_times(counts, steps)
    for n, (waiting, back_to_back) in xla.items():
      print(json.dumps({'bench': 'mnist_replicated', 'client_devices': devices, 'devices': n,
                        'global_batch': GLOBAL_BATCH, 'eager_ms': eager, 'xla_ms': waiting,
                        'xla_back_to_back_ms': back_to_back}))
  else:
    one = memcpy_ms(100)
    per_device = memcpy_ms(100, copies=devices)
    for mb in (1, 100):
      ms = all_reduce_ms(mb)
      print(json.dumps({'bench': 'all_reduce', 'devices': devices, 'mb_per_device': mb, 'ms': ms,
                        'memcpy_100mb_ms': one, 'memcpy_100mb_per_device_ms': per_device,
                        'vs_memcpy_per_device': ms / per_device * 100 / mb}))


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--steps', type=int, default=20)
  parser.add_argument('--child', choices=['mnist', 'all_reduce'])
  args = parser.parse_args()
  if args.child:
    child(args.child, args.steps)
    return
  command = [sys.executable, os.path.abspath(__file__), '--steps', str(args.steps), '--child']
  rows = child_rows([(command + ['mnist'], {'CPU_NUM_DEVICES': '2'}), (command + ['mnist'], {'CPU_NUM_DEVICES': '4'}),
                     (command + ['all_reduce'], {'CPU_NUM_DEVICES': '4'})])
  single = {r['client_devices']: r['xla_ms'] for r in rows if r['bench'] == 'mnist_replicated' and r['devices'] == 1}
  single_b2b = {r['client_devices']: r['xla_back_to_back_ms'] for r in rows
                if r['bench'] == 'mnist_replicated' and r['devices'] == 1}
  for r in rows:
    if r['bench'] == 'mnist_replicated':
      r['vs_1_device'] = r['xla_ms'] / single[r['client_devices']]
      r['back_to_back_vs_1_device'] = r['xla_back_to_back_ms'] / single_b2b[r['client_devices']]
  report([r for r in rows if r['bench'] == 'mnist_replicated'])
  report([r for r in rows if r['bench'] == 'all_reduce'])


if __name__ == '__main__':
  main()
