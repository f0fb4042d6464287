"""Test-suite setup shared by every test file.

The tests, by folder:
  ops/          the ATen ops on the device against eager CPU, one file per op family (named
                after ATen's native/ files: test_reduce_ops.py, test_tensor_shape.py, ...);
                the CPU device's host kernels (test_host_*.py), the OpInfo database and the
                coverage of the lowered ops' counters
  distributed/  replication, collectives, data parallelism, several processes (launched/:
                the scripts those tests launch)
  runtime/      the executor, the caches, device buffers, the plugin, packaging, exit
  api/          the Python API and tools: devices and metrics, autograd, optimizers,
                debugging, dynamo, precision modes, data utilities, pure-Python parts
  models/       whole models: the examples and the workloads' training steps
  testing/      the helpers (`from testing.op_testing import check`)
"""
import os
import sys

# The tests import their helpers from the package testing/ beside this file
# (`from testing.op_testing import check`): this folder is on sys.path.
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
  sys.path.insert(0, HERE)

# Four CPU devices, so the replication tests run 4 replicas (on any number of cores);
# the other tests use xla:0 and xla:1. Set before any test imports torch_xla.
os.environ.setdefault('CPU_NUM_DEVICES', '4')
# A replica waiting for the others gives up after this long: a test that would hang
# fails instead (the tests of the timeout itself set a shorter one).
os.environ.setdefault('XLA_REPLICA_TIMEOUT', '60')
# Compiled graphs are kept for the processes of this run only (the tests' own cache, not
# the user's), so that the runs do not depend on each other.
if 'XLA_PERSISTENT_CACHE_PATH' not in os.environ:
  import tempfile
  os.environ['XLA_PERSISTENT_CACHE_PATH'] = tempfile.mkdtemp(prefix='torch_xla_test_cache_')


def pytest_configure(config):
  # The processes the tests launch share the run's compiled graphs through that cache;
  # this process compiles thousands of graphs it never sees again, and writing each to
  # disk cost 14% of the OpInfo tests' time. Tests of the cache turn it on themselves.
  import torch_xla.runtime as xr
  xr.initialize_cache(None)
