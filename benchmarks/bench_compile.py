"""Step time with torch.compile(model, backend='openxla') beside the lazy mode (and with
XLA_DYNAMO_SYNC=0), for the
guides' MNIST network (batch 128, SGD with momentum) and the transformer language model
(batch 16, sequence 128, AdamW), each against eager PyTorch on the CPU in the same run.

  python benchmarks/bench_compile.py [--steps 10]
"""
import argparse
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
sys.path.insert(1, os.path.join(here, '..', 'examples'))
import torch_xla  # noqa: E402,F401
from bench_transformer import make_step as transformer_step  # noqa: E402
from common import classifier_step, compare_training, report  # noqa: E402
from mnist_model import MNIST  # noqa: E402


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--steps', type=int, default=10)
  args = parser.parse_args()
  torch.set_num_threads(os.cpu_count())
  rows = []
  for name, build in (('mnist', lambda compiled: classifier_step(MNIST, (128, 1, 28, 28), 10, compiled)),
                      ('transformer', lambda compiled: transformer_step(16, 128, 1000, compiled))):
    # compile: each graph computes its outputs when called (the default); compile_pending:
    # XLA_DYNAMO_SYNC=0, the graphs join the step's mark_step.
    for mode in ('lazy', 'compile', 'compile_pending'):
      os.environ['XLA_DYNAMO_SYNC'] = '0' if mode == 'compile_pending' else '1'
      torch._dynamo.reset()
      row = {'bench': name, 'mode': mode}
      row.update(compare_training(build(mode != 'lazy'), args.steps))
      rows.append(row)
  report(rows)


if __name__ == '__main__':
  main()
