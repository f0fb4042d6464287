"""Test-suite setup shared by every test file."""
import os

# Several tests move tensors between xla:0 and xla:1. Without CPU_NUM_DEVICES the CPU
# plugin gives one device per usable core, so a 1-core machine would have one device;
# ask for two there. Set before any test imports torch_xla.
if 'CPU_NUM_DEVICES' not in os.environ and len(os.sched_getaffinity(0)) < 2:
  os.environ['CPU_NUM_DEVICES'] = '2'
