"""Trains a small convolutional network on the real handwritten digits that ship inside
scikit-learn (1797 images of 8x8 pixels, 10 classes) on every XLA device of the host,
one replica per device (xmp.spawn), then reports the accuracy on a held-out test split.

Each replica takes its share of every batch; xm.optimizer_step averages the gradients
across the replicas inside the step graph, so all replicas keep the same weights.

  python examples/train_digits.py --epochs 15 --batch-size 64 [--devices N]
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp


class DigitsNet(nn.Module):

  def __init__(self):
    super().__init__()
    self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)
    self.bn1 = nn.BatchNorm2d(16)
    self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
    self.fc1 = nn.Linear(32 * 4 * 4, 64)
    self.fc2 = nn.Linear(64, 10)

  def forward(self, x):
    x = F.relu(F.max_pool2d(self.bn1(self.conv1(x)), 2))  # 16 x 4 x 4
    x = F.relu(self.conv2(x))  # 32 x 4 x 4
    x = torch.flatten(x, 1)
    x = F.relu(self.fc1(x))
    return F.log_softmax(self.fc2(x), dim=1)


def load_digits_split(test_fraction=0.2, seed=0):
  """(train_images, train_labels, test_images, test_labels): images scaled to [0, 1] as
  float32 tensors of shape [N, 1, 8, 8], split by a seeded permutation."""
  from sklearn.datasets import load_digits
  digits = load_digits()
  images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
  labels = torch.tensor(digits.target, dtype=torch.int64)
  order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(seed))
  n_test = int(len(labels) * test_fraction)
  test, train = order[:n_test], order[n_test:]
  return images[train], labels[train], images[test], labels[test]


def batches(images, labels, batch_size, generator):
  """Shuffled full batches (the remainder is dropped, so every step has one shape and
  the step's graph compiles once)."""
  order = torch.randperm(len(labels), generator=generator)
  for start in range(0, len(labels) - batch_size + 1, batch_size):
    index = order[start:start + batch_size]
    yield images[index], labels[index]


def evaluate(model, images, labels, device):
  """The accuracy over every replica's share of the test images."""
  model.eval()
  with torch.no_grad():
    predictions = model(images.to(device)).argmax(dim=1)
    correct = (predictions == labels.to(device)).sum()
  model.train()
  counts = xm.mesh_reduce('test_accuracy', (correct.item(), len(labels)),
                          lambda parts: [sum(p[i] for p in parts) for i in range(2)])
  return counts[0] / counts[1]


def shard(tensor, index, count):
  """Replica `index`'s share of the first dimension (every count-th row)."""
  return tensor[index::count]


def train_replica(index, model_wrapper, epochs, batch_size, lr, seed, verbose, results):
  device = xm.xla_device()
  count = xm.xrt_world_size()
  train_x, train_y, test_x, test_y = load_digits_split(seed=seed)
  model = model_wrapper.to(device)
  optimizer = optim.Adam(model.parameters(), lr=lr)
  # Every replica draws the same shuffles and takes its share of each batch.
  generator = torch.Generator().manual_seed(seed)
  local_batch = batch_size // count

  start = time.time()
  for epoch in range(1, epochs + 1):
    total = torch.zeros((), device=device)
    steps = 0
    shares = [(shard(x, index, count)[:local_batch], shard(y, index, count)[:local_batch])
              for x, y in batches(train_x, train_y, local_batch * count, generator)]
    for data, target in pl.MpDeviceLoader(shares, device):
      optimizer.zero_grad()
      loss = F.nll_loss(model(data), target)
      loss.backward()
      xm.optimizer_step(optimizer)
      total += loss.detach()
      steps += 1
    if verbose and xm.is_master_ordinal():
      print('epoch {:2d}  loss {:.4f}  {:.1f} s'.format(epoch, total.item() / steps, time.time() - start))
  accuracy = evaluate(model, shard(test_x, index, count), shard(test_y, index, count), device)
  if verbose and xm.is_master_ordinal():
    print('test accuracy {:.2%} on {} held-out digits, {} replica(s)'.format(accuracy, len(test_y), count))
  results[index] = accuracy


def train(epochs=15, batch_size=64, lr=2e-3, seed=0, verbose=True, devices=None):
  """Trains on `devices` XLA devices (None: all of them); returns the test accuracy."""
  torch.manual_seed(seed)
  model_wrapper = xmp.MpModelWrapper(DigitsNet())  # one set of initial weights for all
  results = {}
  xmp.spawn(train_replica, args=(model_wrapper, epochs, batch_size, lr, seed, verbose, results),
            nprocs=devices)
  return results[0]


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--epochs', type=int, default=15)
  parser.add_argument('--batch-size', type=int, default=64,
                      help='global batch, shared by the replicas')
  parser.add_argument('--lr', type=float, default=2e-3)
  parser.add_argument('--devices', type=int, default=None,
                      help='number of XLA devices (replicas); default: all of them')
  args = parser.parse_args()
  train(args.epochs, args.batch_size, args.lr, devices=args.devices)
  print(met.short_metrics_report())


if __name__ == '__main__':
  main()
