"""Shared helpers of the benchmarks: timing and JSON-lines + table output."""
import json
import statistics
import time


def time_per_call(fn, repeat, warmup=3):
  """Median seconds of one call of fn over `repeat` timed calls."""
  for _ in range(warmup):
    fn()
  samples = []
  for _ in range(repeat):
    start = time.perf_counter()
    fn()
    samples.append(time.perf_counter() - start)
  return statistics.median(samples)


def report(rows):
  """Prints each row as a JSON line, then a table."""
  for row in rows:
    print(json.dumps(row))
  keys = list(rows[0].keys())
  widths = [max(len(k), *(len(_fmt(r[k])) for r in rows)) for k in keys]
  print('  '.join(k.ljust(w) for k, w in zip(keys, widths)))
  for r in rows:
    print('  '.join(_fmt(r[k]).ljust(w) for k, w in zip(keys, widths)))


def child_rows(runs):
  """Runs each (command, extra environment) of `runs` and returns the JSON rows they
  print, in order (benchmarks whose figures need processes of their own: another
  device count, several processes)."""
  import os
  import subprocess
  rows = []
  for command, env in runs:
    out = subprocess.run(command, env={**os.environ, **env}, check=True, capture_output=True, text=True).stdout
    rows += [json.loads(line) for line in out.splitlines() if line.startswith('{')]
  return rows


def _fmt(v):
  return '{:.3f}'.format(v) if isinstance(v, float) else str(v)


def classifier_step(model_class, input_size, classes, compiled=False):
  """make_step for compare_training: model_class() trained on one fixed batch of
  `input_size` (batch first) with `classes` labels, NLL loss, SGD with momentum.
  compiled=True: on the XLA device the model runs through torch.compile('openxla')."""
  import torch
  import torch.nn as nn
  import torch.optim as optim

  def build(device):
    torch.manual_seed(0)
    model = model_class().train().to(device)
    forward = torch.compile(model, backend='openxla') if compiled and device != 'cpu' else model
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    loss_fn = nn.NLLLoss()
    data = torch.randn(*input_size)
    target = torch.randint(0, classes, (input_size[0],))

    def step():
      opt.zero_grad()
      loss = loss_fn(forward(data.to(device)), target.to(device))
      loss.backward()
      opt.step()

    return step

  return build


def classifier_benchmark(name, model_class, sample_size, classes, steps, batch):
  """The main of a classifier benchmark: `--steps` and `--batch` options (defaults
  given), then one row of compare_training for batches of `sample_size` samples."""
  import argparse
  import os

  import torch
  parser = argparse.ArgumentParser()
  parser.add_argument('--steps', type=int, default=steps)
  parser.add_argument('--batch', type=int, default=batch)
  args = parser.parse_args()
  torch.set_num_threads(os.cpu_count())
  row = {'bench': name, 'batch': args.batch}
  row.update(compare_training(classifier_step(model_class, (args.batch,) + tuple(sample_size), classes), args.steps))
  report([row])


def device_step_times(run_step, wait, steps):
  """Times `steps` device steps that each wait (wait()) for their own result, then
  `steps` that run back to back with one wait at the end. Returns the seconds of each
  waiting step, and the seconds per step back to back."""
  waiting = []
  for _ in range(steps):
    start = time.perf_counter()
    run_step()
    wait()
    waiting.append(time.perf_counter() - start)
  start = time.perf_counter()
  for _ in range(steps):
    run_step()
  wait()
  return waiting, (time.perf_counter() - start) / steps


def compare_training(make_step, steps, rounds=3):
  """Step time of a training step in eager PyTorch on the CPU and on the XLA device.

  make_step(device) builds the model and returns step(), which runs one training step.
  The two alternate in `rounds` blocks of `steps` steps each, so that a machine that
  slows down or speeds up during the run affects both alike. Returns a dict: median ms
  of an eager step; median ms of an XLA step that waits for its own result; ms per XLA
  step when steps run back to back and only the last is waited for (tracing overlaps
  execution; median over the rounds); seconds of the first XLA step, compile included;
  the graphs executed per timed XLA step; the number of ops that ran through the CPU
  fallback (their names are printed).
  """
  import torch_xla.core.xla_model as xm
  import torch_xla.debug.metrics as met

  eager_step = make_step('cpu')
  xla_step = make_step(xm.xla_device())

  def run_xla():
    xla_step()
    xm.mark_step()

  start = time.perf_counter()
  run_xla()
  xm.wait_device_ops()
  first = time.perf_counter() - start
  for _ in range(2):  # the graphs of the next steps may differ once (e.g. optimizer state)
    eager_step()
    run_xla()
  xm.wait_device_ops()

  eager, xla, pipelined = [], [], []
  executions_before = met.metric_data('ExecuteTime')[0]
  for _ in range(rounds):
    for _ in range(steps):
      start = time.perf_counter()
      eager_step()
      eager.append(time.perf_counter() - start)
    waiting, back_to_back = device_step_times(run_xla, xm.wait_device_ops, steps)
    xla += waiting
    pipelined.append(back_to_back)
  graphs_per_step = (met.metric_data('ExecuteTime')[0] - executions_before) / (2 * steps * rounds)
  eager_ms = statistics.median(eager) * 1e3
  xla_ms = statistics.median(xla) * 1e3
  pipelined_ms = statistics.median(pipelined) * 1e3
  fallbacks = [n for n in met.counter_names() if n.startswith('aten::')]
  if fallbacks:
    print('ops run through the CPU fallback:', ', '.join(fallbacks))
  return {'eager_ms': eager_ms, 'xla_ms': xla_ms, 'ratio': xla_ms / eager_ms, 'xla_pipelined_ms': pipelined_ms,
          'pipelined_ratio': pipelined_ms / eager_ms, 'xla_first_step_s': first,
          'graphs_per_step': graphs_per_step, 'cpu_fallback_ops': len(fallbacks)}


def replica_share(*tensors):
  """In a replica: its share of each tensor's first dimension, taken by its global
  ordinal (so replicas of several processes do too), on its device."""
  import torch_xla.core.xla_model as xm
  count, me, device = xm.xrt_world_size(), xm.get_ordinal(), xm.xla_device()
  shares = []
  for t in tensors:
    local = t.shape[0] // count
    shares.append(t[me * local:(me + 1) * local].to(device))
  return shares
