"""Launched as 2 processes x 1 CPU device: the heartbeat runs without a pause, so that
it is inside a call of the launcher's store when the process ends; each process must
still exit cleanly."""
import torch

import torch_xla.core._processes as processes
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
from testing.process_testing import report

processes.HEARTBEAT_SECONDS = 0.0


def replica(index):
  total = xm.all_reduce('sum', torch.ones(4, device=xm.xla_device()))
  xm.mark_step()
  report(ordinal=xm.get_ordinal(), total=total.cpu().tolist())


if __name__ == '__main__':
  xmp.spawn(replica)
