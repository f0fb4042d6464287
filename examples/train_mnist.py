"""Trains the guides' MNIST network on every XLA device of the host, the way the API
guide shows: xmp.spawn runs one replica per device, MpDeviceLoader feeds each its share
of every batch, and xm.optimizer_step averages the gradients across the replicas inside
the step graph. Under torchrun, unchanged, the replicas of every process train together.

The data is MNIST-shaped synthetic data (28x28 images, 10 classes) whose labels
depend on the images, so the loss falls as the network learns.

  python examples/train_mnist.py --steps 50 --batch-size 128 [--devices N]
  torchrun --nproc-per-node 2 examples/train_mnist.py
"""
import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.optim as optim
from tqdm import tqdm

sys.path.insert(1, os.path.dirname(os.path.abspath(__file__)))
import torch_xla  # noqa: E402
import torch_xla.core.xla_model as xm  # noqa: E402
import torch_xla.debug.metrics as met  # noqa: E402
import torch_xla.distributed.parallel_loader as pl  # noqa: E402
import torch_xla.distributed.xla_multiprocessing as xmp  # noqa: E402
from mnist_model import MNIST  # noqa: E402


def synthetic_mnist(batches, batch_size, seed=0):
  """Images with a class-dependent bright patch, so the labels are learnable."""
  g = torch.Generator().manual_seed(seed)
  data = []
  for _ in range(batches):
    target = torch.randint(0, 10, (batch_size,), generator=g)
    images = torch.randn(batch_size, 1, 28, 28, generator=g) * 0.3
    for c in range(10):
      rows = target == c
      images[rows, 0, 2 * c:2 * c + 6, 4:24] += 1.0
    data.append((images, target))
  return data


def train_replica(index, args, model_wrapper, losses):
  device = xm.xla_device()
  count = xm.xrt_world_size()
  if xm.is_master_ordinal(local=False):
    losses.clear()
    args.replicas = count
  local = args.batch_size // count
  # This replica's share of every global batch.
  me = xm.get_ordinal()
  shares = [(data[me * local:(me + 1) * local], target[me * local:(me + 1) * local])
            for data, target in synthetic_mnist(args.steps, local * count)]
  model = model_wrapper.to(device).train()
  loss_fn = nn.NLLLoss()
  optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)

  master = xm.is_master_ordinal(local=False)
  bar = tqdm(total=args.steps, unit='step', disable=not master, file=sys.stdout)

  def report(step, loss):
    losses.append(loss.item())
    bar.update(step - bar.n)
    bar.set_postfix(loss='{:.4f}'.format(losses[-1]))

  for step, (data, target) in enumerate(pl.MpDeviceLoader(shares, device), 1):
    optimizer.zero_grad()
    output = model(data)
    loss = loss_fn(output, target)
    loss.backward()
    xm.optimizer_step(optimizer)
    if master and (step % 10 == 0 or step == args.steps):
      # Runs after the step's graph, when the loss is on the device already.
      xm.add_step_closure(report, args=(step, loss))
  xm.mark_step()  # the last step's closure
  bar.close()


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--steps', type=int, default=50)
  parser.add_argument('--batch-size', type=int, default=128, help='global batch, shared by the replicas')
  parser.add_argument('--lr', type=float, default=0.01)
  parser.add_argument('--momentum', type=float, default=0.5)
  parser.add_argument('--devices', type=int, default=None,
                      help='number of XLA devices (replicas); default: all of them')
  args = parser.parse_args()

  torch.manual_seed(1)
  model_wrapper = xmp.MpModelWrapper(MNIST())  # one set of initial weights for all replicas
  losses = []
  xmp.spawn(train_replica, args=(args, model_wrapper, losses), nprocs=args.devices)
  if losses:  # the global master's process
    print('{} replica(s); first logged loss {:.4f}, last loss {:.4f}'.format(args.replicas, losses[0], losses[-1]))
    print(met.short_metrics_report())


if __name__ == '__main__':
  main()
