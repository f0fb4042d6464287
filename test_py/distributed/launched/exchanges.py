"""Launched as 2 processes x 1 CPU device: every step's graph holds several all_reduces
too large to be coalesced, of different sizes, so each is an exchange of its own between
the processes; each replica reports the first element of every result."""
import os

import torch

import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
from testing.process_testing import report

STEPS = 8
# Above the 1 MB below which all_reduce concatenates its operands.
SIZES = [300_000 + 1000 * k for k in range(6)]


def replica(index):
  device = xm.xla_device()
  me = xm.get_ordinal()
  firsts = []
  for step in range(STEPS):
    values = [torch.full((n,), float(me + k + step), device=device) for k, n in enumerate(SIZES)]
    reduced = xm.all_reduce('sum', values)
    xm.mark_step()
    firsts.append([t[0].item() for t in reduced])
  report(ordinal=me, world=xm.xrt_world_size(), firsts=firsts)


if __name__ == '__main__':
  xmp.spawn(replica)
