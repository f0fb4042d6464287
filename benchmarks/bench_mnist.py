"""Step time of the guides' MNIST network (batch 128, SGD with momentum) on the XLA
device against eager PyTorch on the CPU, in the same run; also the first step (which
includes the compile).

  python benchmarks/bench_mnist.py [--steps 30] [--batch 128]
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
sys.path.insert(1, os.path.join(here, '..', 'examples'))
import torch_xla  # noqa: E402,F401
from common import classifier_benchmark  # noqa: E402
from mnist_model import MNIST  # noqa: E402

if __name__ == '__main__':
  classifier_benchmark('mnist', MNIST, (1, 28, 28), 10, steps=30, batch=128)
