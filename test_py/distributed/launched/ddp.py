"""Launched as 2 processes x 1 CPU device: torch.distributed with the 'xla' backend.
Its collectives on XLA tensors against the CPU, then DistributedDataParallel training
of the data-parallel test's network (each rank its share of every global batch, from
different initial weights that DDP makes rank 0's); rank 0 saves the weights to $OUT."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers 'xla')
from testing import data_parallel_testing as dpt
from testing.process_testing import report

dist.init_process_group('xla', init_method='xla://')
rank, world = dist.get_rank(), dist.get_world_size()
device = xm.xla_device()
values = [torch.arange(4.0) * (r + 1) for r in range(world)]
x = values[rank].to(device)
summed = x.clone()
dist.all_reduce(summed)
biggest = x.clone()
dist.all_reduce(biggest, op=dist.ReduceOp.MAX)
gathered = [torch.zeros(4, device=device) for _ in range(world)]
dist.all_gather(gathered, x)
single = torch.zeros(4 * world, device=device)
dist.all_gather_into_tensor(single, x)
broadcast = x.clone()
dist.broadcast(broadcast, src=1)
scattered = torch.zeros(2, device=device)
dist.reduce_scatter_tensor(scattered, torch.cat([x[:2], x[2:]]) if world == 2 else x)
exchanged = torch.zeros(4, device=device)
dist.all_to_all_single(exchanged, x)
dist.barrier()
xm.mark_step()
report(rank=rank, world=world, summed=summed.cpu().tolist(), biggest=biggest.cpu().tolist(),
       gathered=[g.cpu().tolist() for g in gathered], single=single.cpu().tolist(),
       broadcast=broadcast.cpu().tolist(), scattered=scattered.cpu().tolist(),
       exchanged=exchanged.cpu().tolist())

torch.manual_seed(100 + rank)  # another start on every rank: DDP broadcasts rank 0's
model = dpt.SmallNet()
if rank == 0:
  model.load_state_dict(dpt.initial_model().state_dict())
model = DistributedDataParallel(model.to(device))
optimizer = dpt.sgd(model.parameters())
local = dpt.LOCAL_BATCH * 2  # 2 processes take the 4 replicas' global batch
for data, target in dpt.global_batches():
  optimizer.zero_grad()
  F.nll_loss(model(data[rank * local:(rank + 1) * local].to(device)),
             target[rank * local:(rank + 1) * local].to(device)).backward()
  optimizer.step()
  xm.mark_step()
xm.save(model.module.state_dict(), os.environ['OUT'])  # every rank calls it; rank 0 writes
dist.barrier()
