"""Test-suite setup shared by every test file."""
import os

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
