"""Launched as 2 processes x 2 CPU devices: 4 replicas train the data-parallel test's
network on their shares of every global batch; replica 0 saves the weights to $OUT."""
import copy
import os

import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
from testing import data_parallel_testing as dpt

INITIAL = dpt.initial_model()  # once: replicas are threads sharing the RNG


def replica(index):
  me = xm.get_ordinal()
  device = xm.xla_device()
  model = copy.deepcopy(INITIAL).to(device)
  optimizer = dpt.sgd(model.parameters())
  local = dpt.LOCAL_BATCH
  shares = [(d[me * local:(me + 1) * local], t[me * local:(me + 1) * local]) for d, t in dpt.global_batches()]
  for data, target in pl.MpDeviceLoader(shares, device):
    optimizer.zero_grad()
    F.nll_loss(model(data), target).backward()
    xm.optimizer_step(optimizer)
  xm.save(model.state_dict(), os.environ['OUT'], global_master=True)


if __name__ == '__main__':
  xmp.spawn(replica)
