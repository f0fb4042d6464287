"""Step time of the ResNet-style network of examples/resnet_model.py (convolutions with
stride, padding, groups and dilation, batch norm, pooling; 32x32 RGB input, batch 64,
SGD with momentum) on the XLA device against eager PyTorch on the CPU, in the same run;
also the first step (which includes the compile).

  python benchmarks/bench_resnet.py [--steps 20] [--batch 64]
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
sys.path.insert(1, os.path.join(here, '..', 'examples'))
import torch_xla  # noqa: E402,F401
from common import classifier_benchmark  # noqa: E402
from resnet_model import SmallResNet  # noqa: E402

if __name__ == '__main__':
  classifier_benchmark('resnet', SmallResNet, (3, 32, 32), 10, steps=20, batch=64)
