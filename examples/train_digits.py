"""Trains a small convolutional network on the real handwritten digits that ship inside
scikit-learn (1797 images of 8x8 pixels, 10 classes) on the default XLA device, then
reports the accuracy on a held-out test split.

  python examples/train_digits.py --epochs 15 --batch-size 64
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
  model.eval()
  with torch.no_grad():
    predictions = model(images.to(device)).argmax(dim=1)
    correct = (predictions == labels.to(device)).sum()
  model.train()
  return correct.item() / len(labels)


def train(epochs=15, batch_size=64, lr=2e-3, seed=0, verbose=True):
  """Trains on the default XLA device; returns the test accuracy."""
  torch.manual_seed(seed)
  device = xm.xla_device()
  train_x, train_y, test_x, test_y = load_digits_split(seed=seed)
  model = DigitsNet().to(device)
  optimizer = optim.Adam(model.parameters(), lr=lr)
  generator = torch.Generator().manual_seed(seed)

  start = time.time()
  for epoch in range(1, epochs + 1):
    total = torch.zeros((), device=device)
    steps = 0
    for data, target in batches(train_x, train_y, batch_size, generator):
      optimizer.zero_grad()
      loss = F.nll_loss(model(data.to(device)), target.to(device))
      loss.backward()
      optimizer.step()
      total += loss.detach()
      steps += 1
      xm.mark_step()
    if verbose:
      print('epoch {:2d}  loss {:.4f}  {:.1f} s'.format(epoch, total.item() / steps, time.time() - start))
  accuracy = evaluate(model, test_x, test_y, device)
  if verbose:
    print('test accuracy {:.2%} on {} held-out digits'.format(accuracy, len(test_y)))
  return accuracy


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--epochs', type=int, default=15)
  parser.add_argument('--batch-size', type=int, default=64)
  parser.add_argument('--lr', type=float, default=2e-3)
  args = parser.parse_args()
  train(args.epochs, args.batch_size, args.lr)
  print(met.short_metrics_report())


if __name__ == '__main__':
  main()
