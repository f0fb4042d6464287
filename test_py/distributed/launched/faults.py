"""Launched as 2 processes x 2 CPU devices that train in step; rank 1 fails at step 5
as $FAULT says: 'kill' (SIGKILL), 'raise' (an exception). Rank 0 reports how long it
took to stop and why, and must not have left a partial checkpoint at $OUT."""
import os
import signal
import time

import torch

import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
from testing.process_testing import report

RANK = int(os.environ['RANK'])
STEPS = 500


def replica(index):
  x = torch.ones(1000, device=xm.xla_device())
  for step in range(STEPS):
    if RANK == 1 and index == 0 and step == 5:
      if os.environ['FAULT'] == 'kill':
        os.kill(os.getpid(), signal.SIGKILL)
      raise ValueError('rank 1 gives up')
    x = xm.all_reduce(xm.REDUCE_SUM, x) / 4
    xm.mark_step()
    xm.save({'x': x, 'step': step}, os.environ['OUT'])
    time.sleep(0.01)


start = time.monotonic()
try:
  xmp.spawn(replica)
  report(rank=RANK, error=None)
except Exception as e:
  report(rank=RANK, error=str(e), seconds=time.monotonic() - start)
  raise
