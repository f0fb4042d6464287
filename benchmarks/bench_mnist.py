"""Step time of the guides' MNIST network (batch 128, SGD with momentum) on the XLA
device against eager PyTorch on the CPU, in the same run; also the first step (which
includes the compile).

  python benchmarks/bench_mnist.py [--steps 30]
"""
import argparse
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
sys.path.insert(1, os.path.join(here, '..', 'examples'))
import torch_xla  # noqa: E402
from common import classifier_step, compare_training, report  # noqa: E402
from mnist_model import MNIST  # noqa: E402


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--steps', type=int, default=30)
  parser.add_argument('--batch', type=int, default=128)
  args = parser.parse_args()
  torch.set_num_threads(os.cpu_count())
  row = {'bench': 'mnist', 'batch': args.batch}
  row.update(compare_training(classifier_step(MNIST, (args.batch, 1, 28, 28), 10), args.steps))
  report([row])


if __name__ == '__main__':
  main()
