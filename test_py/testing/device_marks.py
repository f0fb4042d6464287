"""Marks for tests that hold on some devices only. The suite runs on the CPU device (4
of them, conftest.py) and, through scripts/device_check.sh, on one GPU: a test of a
CPU-only lowering (a host call, a product by rows) or of replication over several
devices is skipped where it cannot hold, with the reason."""
import os

import pytest

from torch_xla import _XLAC

KIND = _XLAC._xla_device_kind()
COUNT = _XLAC._xla_device_count()
LOWERED_FOR_CPU = KIND == 'CPU' and os.environ.get('XLA_LOWERING_DEVICE_KIND', 'CPU').upper() == 'CPU'


def cpu_lowering(what):
  """The test checks `what`, a lowering chosen for the CPU device only."""
  return pytest.mark.skipif(not LOWERED_FOR_CPU, reason=f'{what}: a lowering of the CPU device only ({KIND} here)')


def cpu_device(what):
  """The test checks `what`, a behaviour of the CPU device's runtime."""
  return pytest.mark.skipif(KIND != 'CPU', reason=f'{what}: the CPU device only ({KIND} here)')


def needs_devices(n):
  return pytest.mark.skipif(COUNT < n, reason=f'needs {n} XLA devices, this process has {COUNT}')
