"""Step time of the ResNet-style network of examples/resnet_model.py (convolutions with
stride, padding, groups and dilation, batch norm, pooling; 32x32 RGB input, batch 64,
SGD with momentum) on the XLA device against eager PyTorch on the CPU, in the same run;
also the first step (which includes the compile).

  python benchmarks/bench_resnet.py [--steps 20]
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
from resnet_model import SmallResNet  # noqa: E402


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--steps', type=int, default=20)
  parser.add_argument('--batch', type=int, default=64)
  args = parser.parse_args()
  torch.set_num_threads(os.cpu_count())
  row = {'bench': 'resnet', 'batch': args.batch}
  row.update(compare_training(classifier_step(SmallResNet, (args.batch, 3, 32, 32), 10), args.steps))
  report([row])


if __name__ == '__main__':
  main()
