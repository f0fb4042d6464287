"""Test-suite setup shared by every test file."""
import os

# Four CPU devices, so the replication tests run 4 replicas (on any number of cores);
# the other tests use xla:0 and xla:1. Set before any test imports torch_xla.
os.environ.setdefault('CPU_NUM_DEVICES', '4')
# A replica waiting for the others gives up after this long: a test that would hang
# fails instead (the tests of the timeout itself set a shorter one).
os.environ.setdefault('XLA_REPLICA_TIMEOUT', '60')
