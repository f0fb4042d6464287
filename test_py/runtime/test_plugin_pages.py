"""After the PJRT plugin compiles or loads an executable, the runtime hands the resident
pages of its code back to the page cache (cpp/runtime/library_pages.h): the steps that
follow run little of the compiler, and XLA_RELEASE_PLUGIN_CODE=0 keeps them resident."""
import os

import torch

import torch_xla
import torch_xla.core.xla_model as xm

DEV = xm.xla_device()


def plugin_read_only_resident_mb():
  """Resident MB of the plugin library's mappings without write permission."""
  kb, mapping = 0, None
  with open('/proc/self/smaps') as f:
    for line in f:
      fields = line.split()
      if '-' in fields[0] and not fields[0].endswith(':'):
        mapping = (fields[1], fields[5] if len(fields) > 5 else '')
      elif fields[0] == 'Rss:' and '/xla_plugins/' in mapping[1] and 'w' not in mapping[0]:
        kb += int(fields[1])
  return kb / 1024


def compile_and_run(rows, release):
  """Compiles a graph no other test traces (its shape is new) and checks its values."""
  previous = os.environ.get('XLA_RELEASE_PLUGIN_CODE')
  os.environ['XLA_RELEASE_PLUGIN_CODE'] = release
  try:
    x = torch.linspace(-2, 2, rows * 37).reshape(rows, 37)
    y = torch.tanh(x.to(DEV) @ x.to(DEV).t()).softmax(-1)
    xm.mark_step()
    resident = plugin_read_only_resident_mb()
    torch.testing.assert_close(y.cpu(), torch.tanh(x @ x.t()).softmax(-1), rtol=1e-5, atol=1e-6)
    return resident
  finally:
    if previous is None:
      del os.environ['XLA_RELEASE_PLUGIN_CODE']
    else:
      os.environ['XLA_RELEASE_PLUGIN_CODE'] = previous


def test_compile_leaves_little_of_the_plugin_resident():
  kept = compile_and_run(1031, '0')
  released = compile_and_run(1033, '1')
  # A compile touches tens of MB of the CPU plugin's code (XLA and LLVM); what the
  # released process keeps is what ran after the release (describing the executable,
  # running it: a few MB).
  assert kept > 20, kept
  assert released < kept / 3, (released, kept)
