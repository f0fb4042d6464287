"""Trains the guides' MNIST network on the default XLA device, the way the API guide
shows: move the model and each batch to the device, step the optimizer, mark the step.

The data is MNIST-shaped synthetic data (28x28 images, 10 classes) whose labels
depend on the images, so the loss falls as the network learns.

  python examples/train_mnist.py --steps 50 --batch-size 128
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.optim as optim

sys.path.insert(1, os.path.dirname(os.path.abspath(__file__)))
import torch_xla  # noqa: E402
import torch_xla.core.xla_model as xm  # noqa: E402
import torch_xla.debug.metrics as met  # noqa: E402
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


def progress(step, total, loss, elapsed):
  width = 30
  done = int(width * step / total)
  sys.stdout.write('\r[{}{}] {}/{} loss {:.4f} {:.1f} ms/step'.format(
      '#' * done, '.' * (width - done), step, total, loss, 1000 * elapsed / max(step, 1)))
  sys.stdout.flush()


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--steps', type=int, default=50)
  parser.add_argument('--batch-size', type=int, default=128)
  parser.add_argument('--lr', type=float, default=0.01)
  parser.add_argument('--momentum', type=float, default=0.5)
  args = parser.parse_args()

  torch.manual_seed(1)
  device = xm.xla_device()
  train_loader = synthetic_mnist(args.steps, args.batch_size)
  model = MNIST().train().to(device)
  loss_fn = nn.NLLLoss()
  optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)

  start = time.time()
  losses = []
  for step, (data, target) in enumerate(train_loader, 1):
    optimizer.zero_grad()
    data = data.to(device)
    target = target.to(device)
    output = model(data)
    loss = loss_fn(output, target)
    loss.backward()
    optimizer.step()
    xm.mark_step()
    if step % 10 == 0 or step == args.steps:
      losses.append(loss.item())
      progress(step, args.steps, losses[-1], time.time() - start)
  print()
  print('first logged loss {:.4f}, last loss {:.4f}'.format(losses[0], losses[-1]))
  print(met.short_metrics_report())


if __name__ == '__main__':
  main()
