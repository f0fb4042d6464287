"""Where the time of a bench_models.py row's XLA step goes: Linux perf samples the
process while it runs steps back to back (each waited for), with XLA's JIT-compiled
fusions named through benchmarks/jit_symbols.py and oneDNN's JIT kernels through its
perf map; prints the share of each fusion/kernel, a summary by kind and by thread, and
how many threads ran at once (the wall-clock time a step that the cores were not all
busy, and which thread ran alone then). Figures are per step, from the whole steps
that ran while perf sampled; sampling itself slows the XLA step by 10-20%. XLA
compiles identical fusions once and names the kernel after the first of them: a
fusion's figure is that of every fusion sharing its kernel (the three updates of
ResNet-18's 512x512x3x3 weights show as one name).

  python benchmarks/profile_step.py ROW [--seconds 5] [--top 30] [--eager]

--eager profiles the eager step instead (PyTorch's kernels, for comparison). Needs
`perf` (linux-perf) and permission to sample (perf_event_paranoid <= 1 or root).
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import threading
import time

# oneDNN describes each kernel it JIT-compiles in a jitdump file, which `perf inject --jit`
# turns into named code. (Its perf-map output is no use here: PyTorch and the XLA plugin
# carry a oneDNN each, and both write /tmp/perf-<pid>.map through streams of their own,
# each truncating it and overwriting the other's names: most of the LSTM's gemm kernels
# went unnamed.)
os.environ.setdefault('DNNL_JIT_PROFILE', '4')
# Executables loaded from the persistent cache are not registered with the GDB JIT
# interface that jit_symbols reads: compile them.
os.environ['XLA_PERSISTENT_CACHE_PATH'] = ''
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
sys.path.insert(1, os.path.join(here, '..', 'examples'))

# perf's sampling rate, per thread that runs (an odd rate, off the beat of periodic work).
HZ = 1999

KINDS = [  # (kind, substrings of a symbol or its object), first match wins
    ('matmul (oneDNN/MKL)', ('gemm_f32', 'sgemm', 'mkl_blas', 'brgemm')),
    ('matmul (Eigen)', ('Eigen::internal::gemm', 'gebp', 'TensorContraction')),
    ('oneDNN convolution, reorder, RNN', ('jit_avx512_common_conv', 'jit_uni', 'dnnl')),
    ('XLA fusion/kernel, other JIT code', ('[JIT]',)),  # oneDNN's JIT kernels are matched above
    ('torch_xla (host kernels, tracing)', ('libtorch_xla_core.so', '_XLAC')),
    ('PyTorch (kernels of host calls, dispatch)', ('libtorch_cpu.so', 'libc10.so', 'libtorch_python.so')),
    ('XLA runtime', ('xla_cpu_pjrt.so',)),
    ('python', ('libpython',)),
    ('malloc/memcpy (libc)', ('libc.so',)),
    ('kernel', ('[kernel', '[k]')),
]


def _jitdumps():
  return glob.glob(os.path.expanduser('~/.debug/jit/*/jit-{}.dump'.format(os.getpid())))


def _with_jit_code_named(data):
  """`data` with samples in oneDNN's JIT kernels moved to the code objects `perf inject`
  makes from its jitdump files (named after each kernel); `data` itself where there are
  none or perf cannot inject."""
  if not _jitdumps():
    return data
  injected = data + '.jit'
  if subprocess.run(['perf', 'inject', '--jit', '-i', data, '-o', injected], capture_output=True).returncode != 0:
    return data
  os.remove(data)
  return injected


def _remove_jitdumps():
  """Deletes this process's jitdump folders and the code objects perf made from them."""
  for dump in _jitdumps():
    shutil.rmtree(os.path.dirname(dump), ignore_errors=True)


def kind_of(line):
  for kind, keys in KINDS:
    if any(k in line for k in keys):
      return kind
  return 'other'


def parse_script(script):
  """(time, tid, thread name, symbol) of each sample in `perf script -F comm,tid,time,ip,sym`
  output, by time."""
  samples = []
  for line in script.splitlines():
    fields = line.split()
    at = next((i for i, f in enumerate(fields) if f.endswith(':') and f[:-1].replace('.', '', 1).isdigit()), None)
    if at is None or at < 2 or not fields[at - 1].isdigit():
      continue
    samples.append((float(fields[at][:-1]), int(fields[at - 1]), ' '.join(fields[:at - 1]),
                    ' '.join(fields[at + 2:]) or '[unknown]'))
  return sorted(samples)


def print_overlap(samples, window, main_tid, steps, top):
  """How many threads ran at once, in wall-clock ms a step: the steps' time split into
  sampling periods (1/HZ s), each counted by the threads sampled in it. On a machine
  with N cores a step that keeps them busy spends its time with N threads running; time
  with fewer is what the cores lost (tracing before the graph, a kernel's part that
  finished before the others, a thread waking late). Approximate: each thread's samples
  come from its own timer, so a period may count a thread that ran only part of it.
  Threads are named as the system knows them: tf_XLAEigen are XLA's compute threads,
  pt_autograd_0 runs the backward pass, and other python3 threads are the plugin's
  unnamed ones (its execution launcher among them)."""
  if not samples:
    return
  start = window[0]
  periods = {}
  symbols = {}  # period -> symbols sampled in it
  for t, tid, name, symbol in samples:
    label = 'main thread' if tid == main_tid else name
    period = int((t - start) * HZ)
    periods.setdefault(period, set()).add((tid, label))
    symbols.setdefault(period, []).append(symbol)
  total_periods = int((window[1] - start) * HZ) + 1
  by_count = {0: total_periods - len(periods)}
  alone = {}  # label -> periods in which that thread ran alone
  alone_code = {}  # (label, symbol) -> samples of it in those periods
  for period, threads in periods.items():
    by_count[len(threads)] = by_count.get(len(threads), 0) + 1
    if len(threads) == 1:
      label = next(iter(threads))[1]
      alone[label] = alone.get(label, 0) + 1
      for symbol in symbols[period]:
        alone_code[(label, symbol)] = alone_code.get((label, symbol), 0) + 1 / len(symbols[period])
  ms = lambda n: n / HZ * 1e3 / steps
  print('threads running at once (wall-clock ms a step; {} cores):'.format(os.cpu_count()))
  for count in sorted(by_count):
    print('  {:7.2f}  {}'.format(ms(by_count[count]), {0: 'none', 1: 'one'}.get(count, str(count))))
  for label, n in sorted(alone.items(), key=lambda kv: -kv[1]):
    print('  {:7.2f}    one: {}'.format(ms(n), label))
  # By thread: what a compute thread ran alone (inside the graph) calls for other
  # remedies than what the main thread did (tracing, before the graph).
  for label, n in sorted(alone.items(), key=lambda kv: -kv[1]):
    if ms(n) < 0.5:
      continue
    print('what ran alone on {} (wall-clock ms a step):'.format(label))
    code = sorted(((n, symbol) for (l, symbol), n in alone_code.items() if l == label), reverse=True)
    for n, symbol in code[:top]:
      print('  {:7.2f}  {}'.format(ms(n), symbol[:120]))


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
  data = '/tmp/profile_step.{}.data'.format(os.getpid())
  # Samples carry CLOCK_MONOTONIC times, the clock of time.monotonic(): the figures a step
  # come from the whole steps that ran inside the sampled window, and the samples taken
  # during them (perf attaching, and writing its data after, overlap other steps).
  perf = subprocess.Popen(['perf', 'record', '-k', 'CLOCK_MONOTONIC', '-F', str(HZ), '-p', str(os.getpid()), '-o', data,
                           '--', 'sleep', str(args.seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  ends = [time.monotonic()]  # the start of the first step, then the end of each
  while perf.poll() is None:
    step()
    wait()
    ends.append(time.monotonic())
  if not args.eager:
    jit_symbols.write_perf_map()
  data = _with_jit_code_named(data)
  script = subprocess.run(['perf', 'script', '-i', data, '-F', 'comm,tid,time,ip,sym'], capture_output=True,
                          text=True).stdout
  samples = parse_script(script)
  if not samples:
    raise SystemExit('perf recorded no samples (perf_event_paranoid, or perf missing?)')
  inside = [t for t in ends if samples[0][0] <= t <= samples[-1][0]]
  if len(inside) < 2:
    raise SystemExit('no whole step inside the sampled window: raise --seconds')
  window = (inside[0], inside[-1])
  steps = len(inside) - 1
  print('{} steps, {:.1f} ms a step while sampled'.format(steps, (window[1] - window[0]) / steps * 1e3))
  span = '--time={:.6f},{:.6f}'.format(*window)
  report = subprocess.run(['perf', 'report', '-i', data, span, '--no-children', '--sort', 'dso,sym', '-g', 'none',
                           '-n'], capture_output=True, text=True).stdout
  os.remove(data)
  _remove_jitdumps()
  rows = []  # (samples, symbol)
  for line in report.splitlines():
    if not line.strip() or line.startswith('#'):
      continue
    fields = line.split('%', 1)[1].split(None, 1)
    rows.append((int(fields[0]), fields[1].strip()))
  # Samples are taken at HZ on every thread that runs: core-ms a step.
  per_step = lambda samples: samples / HZ * 1e3 / steps
  total = sum(n for n, _ in rows)
  by_kind = {}
  for n, what in rows:
    by_kind[kind_of(what)] = by_kind.get(kind_of(what), 0) + n
  print('CPU time a step, all threads: {:.1f} core-ms'.format(per_step(total)))
  print('by kind (core-ms a step, share):')
  for kind, n in sorted(by_kind.items(), key=lambda kv: -kv[1]):
    print('  {:7.2f}  {:5.1f}%  {}'.format(per_step(n), 100 * n / total, kind))
  in_window = [x for x in samples if window[0] <= x[0] <= window[1]]
  by_thread = {}
  for _, tid, name, _ in in_window:
    by_thread[(tid, name)] = by_thread.get((tid, name), 0) + 1
  print('by thread (core-ms a step):')
  for (tid, name), n in sorted(by_thread.items(), key=lambda kv: -kv[1]):
    print('  {:7.2f}  {}:{}'.format(per_step(n), tid, name))
  print_overlap(in_window, window, os.getpid(), steps, args.top)
  print('top symbols:')
  for n, what in rows[:args.top]:
    print('  {:7.2f}  {:5.1f}%  {}'.format(per_step(n), 100 * n / total, ' '.join(what.split())[:130]))


if __name__ == '__main__':
  main()
