"""Replication across processes (torchrun) against replication in one process, in one run:

- the guides' MNIST step at global batch 128 as 2 processes x 1 device (the gradients
  summed across the processes inside the step graph: an in-process all-reduce, then the
  cross-process host kernel's gloo all-reduce), against 1 process x 2 devices; and the
  same 2 processes with the gradients summed at graph boundaries instead (the step's
  graph ends at the gradients, they are copied to the host, all-reduced by gloo through
  torch.distributed, copied back, and a second graph steps the optimizer);
- an all_reduce of 100 MB (float32) across the 2 processes, in the graph and at a graph
  boundary, against 2 devices of one process.

  python benchmarks/bench_processes.py [--steps 20]
"""
import argparse
import json
import os
import socket
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
sys.path.insert(1, os.path.join(here, '..', 'examples'))
from common import child_rows, report  # noqa: E402

MEGABYTES = 100


def boundary_all_reduce(tensors):
  """Sums XLA tensors across the processes at a graph boundary: to the host, gloo, back."""
  import torch
  import torch.distributed as dist

  import torch_xla.core.xla_model as xm
  xm.mark_step()
  host = torch.cat([t.cpu().flatten() for t in tensors])
  dist.all_reduce(host)
  offset = 0
  with torch.no_grad():
    for t in tensors:
      n = t.numel()
      t.copy_(host[offset:offset + n].view_as(t).to(t.device))
      offset += n


def all_reduce_ms(boundary, repeat=10):
  import torch

  import torch_xla.core.xla_model as xm
  import torch_xla.distributed.xla_multiprocessing as xmp

  elements = int(MEGABYTES * 1e6) // 4
  times = []

  def replica(index):
    x = torch.full((elements,), float(xm.get_ordinal()), device=xm.xla_device())
    xm.mark_step()
    samples = []
    for i in range(repeat + 2):
      xm.wait_device_ops()
      start = time.perf_counter()
      if boundary:
        y = x.clone()
        boundary_all_reduce([y])
      else:
        y = xm.all_reduce(xm.REDUCE_SUM, x)
      xm.mark_step()
      xm.wait_device_ops()
      if i >= 2:
        samples.append(time.perf_counter() - start)
    assert y[:2].cpu().tolist() == [float(sum(range(xm.xrt_world_size())))] * 2
    if index == 0:
      times.append(statistics.median(samples) * 1e3)

  xmp.spawn(replica)
  return times[0]


def child(kind, steps):
  import torch.distributed as dist

  import torch_xla
  import torch_xla.core.xla_model as xm
  from bench_replication import mnist_step_times

  rows = []
  if kind == 'in_process':
    eager, xla = mnist_step_times([2], steps)
    rows.append({'bench': 'mnist_global_batch_128', 'layout': '1 process x 2 devices', 'gradients': 'in graph',
                 'eager_ms': eager, 'xla_ms': xla[2][0], 'xla_back_to_back_ms': xla[2][1]})
    rows.append({'bench': 'all_reduce_100mb', 'layout': '1 process x 2 devices', 'where': 'in graph',
                 'ms': all_reduce_ms(False)})
  else:
    dist.init_process_group('gloo')  # for the graph-boundary variants

    def boundary(optimizer):
      boundary_all_reduce([p.grad for g in optimizer.param_groups for p in g['params'] if p.grad is not None])
      with torch_no_grad():
        for g in optimizer.param_groups:
          for p in g['params']:
            if p.grad is not None:
              p.grad.div_(xm.xrt_world_size())

    eager, xla = mnist_step_times([1], steps)
    _, boundary_xla = mnist_step_times([1], steps, reduce_gradients=boundary)
    rows.append({'bench': 'mnist_global_batch_128', 'layout': '2 processes x 1 device', 'gradients': 'in graph',
                 'eager_ms': eager, 'xla_ms': xla[1][0], 'xla_back_to_back_ms': xla[1][1]})
    rows.append({'bench': 'mnist_global_batch_128', 'layout': '2 processes x 1 device',
                 'gradients': 'graph boundary', 'eager_ms': eager, 'xla_ms': boundary_xla[1][0],
                 'xla_back_to_back_ms': boundary_xla[1][1]})
    for where, flag in (('in graph', False), ('graph boundary', True)):
      rows.append({'bench': 'all_reduce_100mb', 'layout': '2 processes x 1 device', 'where': where,
                   'ms': all_reduce_ms(flag)})
    if dist.get_rank() != 0:
      return
  for row in rows:
    print(json.dumps(row))


def torch_no_grad():
  import torch
  return torch.no_grad()


def free_port():
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--steps', type=int, default=20)
  parser.add_argument('--child', choices=['in_process', 'cross_process'])
  args = parser.parse_args()
  if args.child:
    child(args.child, args.steps)
    return
  script = os.path.abspath(__file__)
  steps = ['--steps', str(args.steps)]
  rows = child_rows([
      ([sys.executable, script, '--child', 'in_process'] + steps, {'CPU_NUM_DEVICES': '2'}),
      ([sys.executable, '-m', 'torch.distributed.run', '--nproc-per-node', '2', '--master-addr', '127.0.0.1',
        '--master-port', str(free_port()), script, '--child', 'cross_process'] + steps, {'CPU_NUM_DEVICES': '1'}),
  ])
  mnist = [r for r in rows if r['bench'] == 'mnist_global_batch_128']
  base = next(r for r in mnist if r['layout'].startswith('1 process'))
  for r in mnist:
    r['vs_1_process'] = r['xla_ms'] / base['xla_ms']
    r['back_to_back_vs_1_process'] = r['xla_back_to_back_ms'] / base['xla_back_to_back_ms']
  report(mnist)
  report([r for r in rows if r['bench'] == 'all_reduce_100mb'])


if __name__ == '__main__':
  main()
