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

from testing.op_testing import fallbacks, lowered

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


@pytest.mark.parametrize('entry', sorted(CASES))
def test_lowered_op_counter(entry):
  fn, name = CASES[entry]
  with lowered(name):
    r = fn()
    for t in (r if isinstance(r, (tuple, list)) else [r]):
      if isinstance(t, torch.Tensor):
        t.cpu()
  assert not fallbacks()
