"""Scenario scripts: a launched process that runs named scenarios in a setting the test
process must not enter (SPMD mode is for the whole process) and reports their values in
one RESULT line; the test reads each scenario's values by name.

In the script:
    scenarios = Scenarios()
    @scenarios
    def matmul(): return dict(...)
    ...
    report(**scenarios.run())

In the test: `results = launch_python([SCRIPT]).results[0]`, then
`scenario(results, 'matmul')`.
"""
import subprocess
import sys
import time
import traceback

import pytest

from testing import process_testing as pt

# A launched scenario script that runs longer than this fails its tests.
SCRIPT_TIMEOUT = 300


class Scenarios:
  """The scenarios of a script, by name, in definition order (a decorator registers one)."""

  def __init__(self):
    self.functions = {}

  def __call__(self, fn):
    self.functions[fn.__name__] = fn
    return fn

  def run(self, errors=(Exception,), timed=False):
    """{name: values} of every scenario; one that raises one of `errors` reports its
    error and traceback instead, and the others still run. `timed` adds each one's
    seconds."""
    results = {}
    for name, fn in self.functions.items():
      start = time.monotonic()
      try:
        results[name] = fn()
      except errors as e:  # reported to the test
        results[name] = dict(error=f'{type(e).__name__}: {e}', traceback=traceback.format_exc())
      if timed:
        results[name]['seconds'] = round(time.monotonic() - start, 2)
    return results


def values(t):
  """A tensor as nested lists."""
  return t.detach().cpu().tolist()


def error_of(fn):
  """The exception `fn` raises, as [type name, message]; None when it raises none."""
  try:
    fn()
  except Exception as e:  # noqa: BLE001  (the test checks the kind)
    return [type(e).__name__, str(e)]
  return None


def launch_python(args, devices=4, timeout=SCRIPT_TIMEOUT, **env):
  """`python ARGS` in a process with `devices` CPU devices; its Launch."""
  start = time.monotonic()
  done = subprocess.run([sys.executable] + args, env=pt.child_env(devices, **env), capture_output=True, text=True,
                        timeout=timeout)
  return pt.Launch([done.returncode], done.stdout + done.stderr, time.monotonic() - start)


def scenario(results, name):
  """The values a scenario reported; fails the test with its error where it raised."""
  r = results[name]
  if 'error' in r:
    pytest.fail(f"scenario {name} raised in the launched process: {r['error']}\n{r['traceback']}")
  return r
