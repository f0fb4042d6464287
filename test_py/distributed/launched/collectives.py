"""Launched as 2 processes x 2 CPU devices (4 replicas): every collective and replica
group form against the CPU, the runtime's view of the run, and the host rendezvous
across processes. Each replica reports what differed."""
import torch

import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr
from testing import replica_testing as rt
from testing.process_testing import report

GROUPS = [None, [[0, 1], [2, 3]], [[0, 2], [1, 3]], [[3, 2, 1, 0]], [[0, 3], [2, 1]]]
PAIRS = [(0, 1), (1, 2), (2, 3), (3, 0)]


def inputs(dtype):
  g = torch.Generator().manual_seed(5)
  return [torch.randint(-3, 4, (4, 8), generator=g).to(dtype) for _ in range(4)]


def compare(failures, name, got, expected):
  if got.dtype != expected.dtype or got.shape != expected.shape or not torch.equal(got, expected):
    failures.append(f'{name}: got {got.tolist()}, expected {expected.tolist()}')


def replica(index):
  me = xm.get_ordinal()
  device = xm.xla_device()
  failures = []
  for dtype in (torch.float32, torch.bfloat16, torch.int32):
    values = inputs(dtype)
    x = values[me].to(device)
    for groups in GROUPS:
      size = len(rt.group_of(me, groups))
      reduce_types = ['sum', 'mul', 'max', 'min'] + ([] if dtype.is_floating_point else ['and', 'or'])
      out = {r: xm.all_reduce(r, x, groups=groups) for r in reduce_types}
      out['gather'] = xm.all_gather(x, 1, groups=groups)
      out['scatter'] = xm.reduce_scatter(xm.REDUCE_SUM, x, 1.0, 0, size, groups=groups)
      out['a2a'] = xm.all_to_all(x, 1, 0, size, groups=groups)
      listed = [x.clone(), (x * 2).clone()]
      xm.all_reduce(xm.REDUCE_SUM, listed, groups=groups)
      xm.mark_step()
      tag = f'{dtype} {groups}'
      for r in reduce_types:
        compare(failures, f'{tag} all_reduce {r}', out[r].cpu(), rt.all_reduce(values, me, r, groups))
      compare(failures, f'{tag} all_gather', out['gather'].cpu(), rt.all_gather(values, me, 1, groups))
      compare(failures, f'{tag} reduce_scatter', out['scatter'].cpu(), rt.reduce_scatter(values, me, 'sum', 0, groups))
      compare(failures, f'{tag} all_to_all', out['a2a'].cpu(), rt.all_to_all(values, me, 1, 0, groups))
      compare(failures, f'{tag} list', listed[1].cpu(), rt.all_reduce([v * 2 for v in values], me, 'sum', groups))
    permuted = xm.collective_permute(x, PAIRS)
    xm.mark_step()
    compare(failures, f'{dtype} collective_permute', permuted.cpu(), rt.collective_permute(values, me, PAIRS))
  payloads = xm.rendezvous('hello', f'from {me}'.encode())
  odd = xm.rendezvous('odd', bytes([me]), replicas=[1, 3]) if me % 2 else None
  total = xm.mesh_reduce('sum', me, sum)
  report(ordinal=me, local=xm.get_local_ordinal(), world=xm.xrt_world_size(), device=device.index,
         runtime=[xr.world_size(), xr.global_ordinal(), xr.local_ordinal(), xr.local_device_count(),
                  xr.global_device_count(), xr.process_index(), xr.process_count()],
         payloads=[p.decode() for p in payloads], odd=None if odd is None else list(odd[0] + odd[1]),
         total=total, failures=failures)


if __name__ == '__main__':
  xmp.spawn(replica)
