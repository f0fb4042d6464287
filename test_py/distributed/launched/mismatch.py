"""Launched as 2 processes x 2 CPU devices whose xmp.spawn asks for different numbers
of replicas: every process must stop with an error saying so."""
import os

import torch_xla.distributed.xla_multiprocessing as xmp
from testing.process_testing import report

try:
  xmp.spawn(lambda index: None, nprocs=int(os.environ['RANK']) + 1)
  report(error=None)
except RuntimeError as e:
  report(error=str(e))
