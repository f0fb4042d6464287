"""Step time of the guides' MNIST network (batch 128, SGD with momentum) on the XLA
device against eager PyTorch on the CPU, in the same run; also the first step (which
includes the compile).

  python benchmarks/bench_mnist.py [--steps 30]
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.optim as optim

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
sys.path.insert(1, os.path.join(here, '..', 'examples'))
import torch_xla  # noqa: E402
import torch_xla.core.xla_model as xm  # noqa: E402
import torch_xla.debug.metrics as met  # noqa: E402
from common import report  # noqa: E402
from mnist_model import MNIST  # noqa: E402


def run(device, steps, batch, sync):
  torch.manual_seed(0)
  model = MNIST().train().to(device)
  opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
  loss_fn = nn.NLLLoss()
  data = torch.randn(batch, 1, 28, 28)
  target = torch.randint(0, 10, (batch,))
  times = []
  for _ in range(steps):
    start = time.perf_counter()
    opt.zero_grad()
    out = model(data.to(device))
    loss = loss_fn(out, target.to(device))
    loss.backward()
    opt.step()
    sync()
    times.append(time.perf_counter() - start)
  return times


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--steps', type=int, default=30)
  parser.add_argument('--batch', type=int, default=128)
  args = parser.parse_args()
  torch.set_num_threads(os.cpu_count())
  eager = run('cpu', args.steps, args.batch, lambda: None)
  xla_times = run(xm.xla_device(), args.steps, args.batch, lambda: xm.mark_step(wait=True))
  steady = lambda ts: sorted(ts[len(ts) // 3:])[len(ts[len(ts) // 3:]) // 2]
  eager_step, xla_step = steady(eager), steady(xla_times)
  fallbacks = [n for n in met.counter_names() if n.startswith('aten::')]
  report([{'bench': 'mnist', 'batch': args.batch, 'eager_ms': eager_step * 1e3, 'xla_ms': xla_step * 1e3,
           'ratio': xla_step / eager_step, 'xla_first_step_s': xla_times[0], 'cpu_fallback_ops': len(fallbacks)}])
  if fallbacks:
    print('ops run through the CPU fallback:', ', '.join(fallbacks))


if __name__ == '__main__':
  main()
