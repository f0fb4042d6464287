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
