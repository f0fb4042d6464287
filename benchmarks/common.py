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


def _fmt(v):
  return '{:.3f}'.format(v) if isinstance(v, float) else str(v)


def measure_training(make_step, device, steps, sync, wait):
  """Times a training step on `device`.

  make_step(device) builds the model and returns step(), which runs one training
  step. sync() ends a step (xm.mark_step on the XLA device); wait() waits for the
  device to finish. Returns (first step seconds, compile included; median seconds
  of a step that waits for its own result; seconds per step when steps run back to
  back and only the last one is waited for, so tracing overlaps execution).
  """
  step = make_step(device)
  start = time.perf_counter()
  step()
  sync()
  wait()
  first = time.perf_counter() - start
  for _ in range(2):  # the graphs of the next steps may differ once (e.g. optimizer state)
    step()
    sync()
  wait()
  samples = []
  for _ in range(steps):
    start = time.perf_counter()
    step()
    sync()
    wait()
    samples.append(time.perf_counter() - start)
  start = time.perf_counter()
  for _ in range(steps):
    step()
    sync()
  wait()
  pipelined = (time.perf_counter() - start) / steps
  return first, statistics.median(samples), pipelined
