"""Tracing cost per op: the time to record one op on an XLA tensor (no execution),
against the eager time of the same op on a 1-element CPU tensor.

  python benchmarks/bench_tracing.py
"""
import os
import sys

import torch

sys.path.insert(1, os.path.dirname(os.path.abspath(__file__)))
import torch_xla  # noqa: E402
import torch_xla.core.xla_model as xm  # noqa: E402
from common import report  # noqa: E402
import time  # noqa: E402


def per_op(fn, x, ops_per_call, calls, sync):
  best = float('inf')
  for _ in range(5):
    start = time.perf_counter()
    for _ in range(calls):
      fn(x)
    elapsed = time.perf_counter() - start
    best = min(best, elapsed)
    if sync:
      xm.mark_step()
  return best / (calls * ops_per_call)


def main():
  device = xm.xla_device()
  chains = {
      'add': lambda t: t + t,
      'mul_scalar': lambda t: t * 0.5,
      'relu': lambda t: t.relu(),
      'sum': lambda t: t.sum(),
      'view': lambda t: t.view(-1),
  }
  rows = []
  for name, fn in chains.items():
    cpu = torch.ones(1)
    xla = torch.ones(1, device=device)
    xm.mark_step()
    calls = 2000
    eager = per_op(fn, cpu, 1, calls, False)
    traced = per_op(fn, xla, 1, calls, True)
    rows.append({'bench': 'tracing', 'op': name, 'eager_us': eager * 1e6, 'xla_trace_us': traced * 1e6,
                 'ratio': traced / eager})
  report(rows)


if __name__ == '__main__':
  main()
