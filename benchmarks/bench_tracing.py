"""Tracing cost per op: the time to record one op on an XLA tensor (no execution),
against the eager time of the same op on a 1-element CPU tensor; and the fixed cost of
a step: one traced op, `mark_step` and waiting for the graph (cached), against the same
op in eager.

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
  rows.append(one_op_step(device))
  report(rows)


def one_op_step(device):
  """y = x + 1 on 4 elements, then mark_step and wait: the launch, the memory check and
  the synchronization every step pays, whatever its graph."""
  cpu, x = torch.ones(4), torch.ones(4, device=device)
  xm.mark_step()

  def xla_step(_):
    y = x + 1  # noqa: F841 (a fresh result each step, as a loss is)
    xm.mark_step()
    xm.wait_device_ops()

  calls = 2000
  xla_step(None)  # compiles
  eager = per_op(lambda t: t + 1, cpu, 1, calls, False)
  step = per_op(xla_step, None, 1, calls, False)
  return {'bench': 'one-op step', 'op': 'x + 1, mark_step, wait', 'eager_us': eager * 1e6, 'xla_trace_us': step * 1e6,
          'ratio': step / eager}


if __name__ == '__main__':
  main()
