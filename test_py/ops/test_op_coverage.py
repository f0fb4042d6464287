"""Every entry of cpp/aten/xla_native_functions.yaml has a counter case: code that runs
the entry on the device, bumps its xla:: counter and runs no CPU fallback.

The cases live next to the op tests, in the COUNTER_CASES dict of each test_*.py
module (see testing/op_testing.py).
"""

import glob
import importlib
import os
import re
import sys

import pytest
import torch
import torch_xla

from testing.op_testing import lowered

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
ROOT = os.path.dirname(TESTS)


def _yaml_entries():
  path = os.path.join(ROOT, 'cpp', 'aten', 'xla_native_functions.yaml')
  entries, in_supported = [], False
  with open(path) as f:
    for line in f:
      if re.match(r'^supported:', line):
        in_supported = True
        continue
      if in_supported and not line.startswith('#'):
        m = re.match(r'^- (\S+)', line)
        if m:
          entries.append(m.group(1))
        elif re.match(r'^\S', line):
          break
  return entries


def _all_cases():
  cases = {}
  # Every test module of the suite, in every folder, under the name pytest imports it by
  # (its file name, with its folder on sys.path).
  for path in sorted(glob.glob(os.path.join(TESTS, '**', 'test_*.py'), recursive=True)):
    name = os.path.splitext(os.path.basename(path))[0]
    if name == 'test_op_coverage':
      continue
    folder = os.path.dirname(path)
    if folder not in sys.path:
      sys.path.insert(0, folder)
    module = importlib.import_module(name)
    for entry, case in getattr(module, 'COUNTER_CASES', {}).items():
      assert entry not in cases, f'{entry} has counter cases in two modules'
      cases[entry] = case
  return cases


ENTRIES = _yaml_entries()
CASES = _all_cases()


def test_every_yaml_entry_has_a_counter_case():
  assert len(ENTRIES) > 50
  assert len(set(ENTRIES)) == len(ENTRIES), 'duplicate yaml entries'
  stale = sorted(set(CASES) - set(ENTRIES))
  assert not stale, f'counter cases for entries not in the yaml: {stale}'
  missing = [e for e in ENTRIES if e not in CASES]
  assert not missing, f'yaml entries without a counter case: {missing}'


def _xla_tensors(result):
  items = result if isinstance(result, (tuple, list)) else [result]
  return [t for t in items if isinstance(t, torch.Tensor) and t.device.type == 'xla']


@pytest.fixture(scope='module')
def outcomes():
  """entry -> None, or why its case failed. Every case is traced under its own counter
  check, then all their results are computed as one graph: one compile instead of one
  per case (a case that fails alone is found by computing each case's results apart)."""
  outcome, results = {}, {}
  for entry in sorted(CASES):
    fn, name = CASES[entry]
    try:
      with lowered(name):
        results[entry] = _xla_tensors(fn())
      outcome[entry] = None
    except Exception as e:  # the counter check's AssertionError too
      outcome[entry] = f'{type(e).__name__}: {e}'
  try:
    torch_xla._XLAC._xla_sync_multi([t for ts in results.values() for t in ts], [])
  except Exception:
    for entry, tensors in results.items():
      try:
        torch_xla._XLAC._xla_sync_multi(tensors, [])
      except Exception as e:
        outcome[entry] = f'{type(e).__name__}: {e}'
  for entry, tensors in results.items():
    try:
      for t in tensors:
        t.cpu()
    except Exception as e:
      outcome[entry] = f'{type(e).__name__}: {e}'
  return outcome


@pytest.mark.parametrize('entry', sorted(CASES))
def test_lowered_op_counter(entry, outcomes):
  assert outcomes[entry] is None, outcomes[entry]
