"""Where the time of a bench_models.py row's XLA step goes: Linux perf samples the
process while it runs steps back to back (each waited for), with XLA's JIT-compiled
fusions named through benchmarks/jit_symbols.py and oneDNN's JIT kernels through its
perf map; prints the share of each fusion/kernel and a summary by kind.

  python benchmarks/profile_step.py ROW [--seconds 5] [--top 30] [--eager]

--eager profiles the eager step instead (PyTorch's kernels, for comparison). Needs
`perf` (linux-perf) and permission to sample (perf_event_paranoid <= 1 or root).
"""
import argparse
import os
import subprocess
import sys
import threading
import time

os.environ.setdefault('DNNL_JIT_PROFILE', '2')  # oneDNN writes its JIT kernels to perf's map
# Executables loaded from the persistent cache are not registered with the GDB JIT
# interface that jit_symbols reads: compile them.
os.environ['XLA_PERSISTENT_CACHE_PATH'] = ''
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
sys.path.insert(1, os.path.join(here, '..', 'examples'))

KINDS = [  # (kind, substrings of a symbol or its object), first match wins
    ('matmul (oneDNN/MKL)', ('gemm_f32', 'sgemm', 'mkl_blas', 'dnnl', 'brgemm')),
    ('matmul (Eigen)', ('Eigen::internal::gemm', 'gebp', 'TensorContraction')),
    ('host convolution (oneDNN)', ('jit_avx512_common_conv', 'jit_uni', 'conv')),
    ('XLA fusion/kernel (JIT)', ('fusion', 'wrapped_', 'loop_', 'input_', 'copy', 'transpose', 'reduce',
                                 'concatenate', 'slice', 'dynamic', 'select', 'gather', 'scatter', 'pad')),
    ('python', ('libpython',)),
    ('malloc/memcpy (libc)', ('libc.so',)),
    ('kernel', ('[kernel', '[k]')),
]


def kind_of(line):
  for kind, keys in KINDS:
    if any(k in line for k in keys):
      return kind
  return 'other'


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('row')
  parser.add_argument('--seconds', type=float, default=5)
  parser.add_argument('--top', type=int, default=30)
  parser.add_argument('--eager', action='store_true')
  args = parser.parse_args()
  import torch
  import bench_models
  torch.set_num_threads(os.cpu_count())
  if args.eager:
    step = bench_models.make_step(args.row)('cpu')
    wait = lambda: None
  else:
    import torch_xla.core.xla_model as xm
    import jit_symbols
    xla_step = bench_models.make_step(args.row)(xm.xla_device())

    def step():
      xla_step()
      xm.mark_step()

    wait = xm.wait_device_ops
  for _ in range(3):
    step()
  wait()
  if not args.eager:
    jit_symbols.write_perf_map()
  data = '/tmp/profile_step.{}.data'.format(os.getpid())
  perf = subprocess.Popen(['perf', 'record', '-F', '1999', '-p', str(os.getpid()), '-o', data, '--', 'sleep',
                           str(args.seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  time.sleep(0.3)
  steps, start = 0, time.perf_counter()
  while perf.poll() is None:
    step()
    wait()
    steps += 1
  print('{} steps, {:.1f} ms a step while sampled'.format(steps, (time.perf_counter() - start) / steps * 1e3))
  report = subprocess.run(['perf', 'report', '-i', data, '--no-children', '--sort', 'dso,sym', '-g', 'none', '-n'],
                          capture_output=True, text=True).stdout
  threads = subprocess.run(['perf', 'report', '-i', data, '--no-children', '--sort', 'pid', '-g', 'none', '-n'],
                           capture_output=True, text=True).stdout
  os.remove(data)
  rows = []  # (samples, symbol)
  for line in report.splitlines():
    if not line.strip() or line.startswith('#'):
      continue
    fields = line.split('%', 1)[1].split(None, 1)
    rows.append((int(fields[0]), fields[1].strip()))
  # Samples are taken at 1999 Hz on every thread that runs: core-ms a step.
  per_step = lambda samples: samples / 1999 * 1e3 / steps
  total = sum(n for n, _ in rows)
  by_kind = {}
  for n, what in rows:
    by_kind[kind_of(what)] = by_kind.get(kind_of(what), 0) + n
  print('CPU time a step, all threads: {:.1f} core-ms'.format(per_step(total)))
  print('by kind (core-ms a step, share):')
  for kind, n in sorted(by_kind.items(), key=lambda kv: -kv[1]):
    print('  {:7.2f}  {:5.1f}%  {}'.format(per_step(n), 100 * n / total, kind))
  print('by thread (core-ms a step):')
  for line in threads.splitlines():
    if line.strip() and not line.startswith('#'):
      fields = line.split('%', 1)[1].split(None, 1)
      print('  {:7.2f}  {}'.format(per_step(int(fields[0])), fields[1].strip()))
  print('top symbols:')
  for n, what in rows[:args.top]:
    print('  {:7.2f}  {:5.1f}%  {}'.format(per_step(n), 100 * n / total, ' '.join(what.split())[:130]))


if __name__ == '__main__':
  main()
